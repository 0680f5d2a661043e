"""Memory bounded: a server plotting windows of a 1 GiB recording stays under ~200 MB of resident memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from viewer_files import BIG_CHANNELS, BIG_RATE, BIG_SAMPLES

TESTS = Path(__file__).resolve().parents[1]
#: The budget of the issue: the server's peak resident memory (Python, numpy, zarr and pynwb take ~130 MB).
PEAK_BYTES = 200 * 1024 * 1024


def _peak(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("VmHWM:")[1].split()[0]) * 1024


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the peak resident memory from /proc")
def test_plotting_windows_of_a_1_gib_recording_keeps_the_server_under_200_mb(tmp_path):
    path = tmp_path / "big.nwb.zarr"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    write = f"from viewer_files import write_big_recording; write_big_recording({str(path)!r})"
    subprocess.run([sys.executable, "-c", write], check=True, env=env, timeout=1200)
    assert BIG_SAMPLES * BIG_CHANNELS * 2 >= 2**30
    command = [sys.executable, "-m", "hdmf_zarr3.cli", "view", str(path), "--no-browser"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    try:
        server.stdout.readline()  # "serving ... at"
        url = server.stdout.readline().strip()
        base, token = url.split("/?token=")
        baseline = _peak(server.pid)
        duration = BIG_SAMPLES / BIG_RATE
        windows = [
            "",  # the first window the page asks for
            f"&start=0&stop={duration}",  # the whole recording, 8 channels
            f"&start=0&stop={duration}&channels=0-63",  # the whole recording, 64 channels over two chunk columns
            f"&start=0&stop={duration}&channels=" + ",".join(str(c) for c in range(0, 384, 40)),  # ten chunk columns
            "&start=10&stop=20&channels=320-383",  # ten seconds, exact
            f"&start={duration - 5}&stop={duration}&channels=0,100,200,383&width=4000",
        ]
        decimations = []
        for window in windows:
            started = time.monotonic()
            route = f"{base}/api/series?path=/acquisition/ElectricalSeries&width=1500&token={token}{window}"
            with urllib.request.urlopen(route, timeout=600) as answer:
                found = json.load(answer)
            print(
                f"\n{window or 'first window'}: {found['decimation']}, {len(found['t'])} points per channel, "
                f"{time.monotonic() - started:.1f} s, peak {_peak(server.pid) / 2**20:.0f} MiB"
            )
            decimations.append(found["decimation"])
            assert len(found["t"]) <= 2 * 4000 and all(v is not None for v in found["max"][0])
        peak = _peak(server.pid)
        print(f"server peak resident memory: {peak / 2**20:.0f} MiB (after opening: {baseline / 2**20:.0f} MiB)")
        assert peak < PEAK_BYTES
        assert set(decimations) == {"minmax"}  # (sampled windows: tests/view/test_models.py)
    finally:
        server.terminate()
        server.wait(timeout=30)
