"""The benchmark scripts still run, end to end, at toy sizes (their numbers are not checked here)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def test_every_benchmark_part_runs_at_toy_sizes(tmp_path):
    results = tmp_path / "results.json"
    argv = [
        sys.executable,
        "run.py",
        "--no-rival",
        "--hot",
        "--seconds",
        "1",
        "--series",
        "5",
        "--units",
        "10",
        "--trials",
        "5",
        "--small-rounds",
        "2",
        "--latency",
        "0.001",
        "--stream-seconds",
        "1",
        "--buffer-mb",
        "8",
        "--pipeline-seconds",
        "0.2",
        "--virtual-seconds",
        "0.2",
        "--append-sizes",
        "10,20",
        "--append-rows",
        "5",
        "--append-opens",
        "2",
        "--append-samples",
        "5",
        "--read-seconds",
        "0.5",
        "--read-rounds",
        "1",
        "--viewer-rounds",
        "1",
        "--viewer-samples",
        "30000",
        "--viewer-units",
        "20",
        "--plot-rounds",
        "1",
        "--json",
        str(results),
    ]
    proc = subprocess.run(argv, cwd=BENCHMARKS, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    found = json.loads(results.read_text())
    for part in [*"abcdefghij", "b-rich"]:
        assert part in found and "error" not in found[part], f"part {part}: {found.get(part)}"
    for place in ("local", "s3"):  # (i): headless Chromium drew every view of the session, locally and from S3
        views = found["i"][place]["views"]
        assert len(views) >= 11 and all(None not in view["seconds"] for view in views.values()), views


def test_the_revision_comparison_runs_against_head_at_toy_sizes():
    """``revisions.py`` imports each side from its own ``src/`` (it refuses to run otherwise)."""
    argv = [sys.executable, "revisions.py", "--base", "HEAD", "--rounds", "1", "--series", "4", "--seconds", "0.2"]
    proc = subprocess.run(argv, cwd=BENCHMARKS, capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]  # 1: a step timed slower
    assert "bulk read" in proc.stdout and "base = HEAD" in proc.stdout


def _benchmark_module(name):
    import importlib

    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    return importlib.import_module(name)


@pytest.mark.parametrize("ending", ["prompt", "late"])
def test_the_range_server_serves_byte_ranges_and_counts_requests_and_rounds(tmp_path, monkeypatch, ending):
    """Part (c) reads the HDF5 file through it: a Range must be honoured, requests and rounds counted.

    ``late``: a handler thread that ends its request only a while after it answered (as on a loaded machine,
    where CI once counted two requests one after the other as one round)."""
    import urllib.request
    from concurrent.futures import ThreadPoolExecutor

    http_range = _benchmark_module("_http_range")
    if ending == "late":
        rounds_class = _benchmark_module("_latency_store").Rounds
        prompt_end = rounds_class.end
        monkeypatch.setattr(rounds_class, "end", lambda rounds: (time.sleep(0.3), prompt_end(rounds))[1])
    (tmp_path / "f.bin").write_bytes(bytes(range(256)) * 4)
    with http_range.serving(tmp_path, latency=0.2) as server:

        def get(byte_range):
            request = urllib.request.Request(server.url("f.bin"), headers={"Range": byte_range})
            with urllib.request.urlopen(request) as response:
                return response.status, response.headers["Content-Range"], response.read()

        assert get("bytes=10-13") == (206, "bytes 10-13/1024", bytes([10, 11, 12, 13]))
        assert get("bytes=-2")[2] == bytes([254, 255])
        assert server.counts["GET"] == 2 and server.rounds.rounds == 2  # one after another: two rounds
        server.reset()
        with ThreadPoolExecutor(8) as pool:  # sent together: one round
            assert len(list(pool.map(get, ["bytes=0-0"] * 8))) == 8
        assert server.counts["GET"] == 8 and server.rounds.rounds == 1


def test_the_range_server_takes_a_burst_of_connections_before_it_accepts_any(tmp_path):
    """Connections made together all complete at once, even while the server is slow to accept them (a
    loaded machine): none waits for a retransmitted SYN, which would split one round of requests in two."""
    import socket

    server = _benchmark_module("_http_range").RangeServer(tmp_path, latency=0.0)  # listening, not accepting
    connections = []
    try:
        for _ in range(32):
            connections.append(socket.create_connection(server.server_address, timeout=0.5))
    finally:
        for connection in connections:
            connection.close()
        server.server_close()
    assert len(connections) == 32


def test_the_profile_of_benchmark_b_names_modules_that_exist():
    """profile_small.py finds its stages by file: a module moved (issue #29) would read as a stage not run."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import profile_small
    finally:
        sys.path.remove(str(BENCHMARKS))
    assert profile_small.missing_stage_files(profile_small.WRITE_STAGES + profile_small.READ_STAGES) == []
