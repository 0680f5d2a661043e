"""The benchmark scripts still run, end to end, at toy sizes (their numbers are not checked here)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
        "--latency",
        "0.001",
        "--stream-seconds",
        "1",
        "--buffer-mb",
        "8",
        "--append-sizes",
        "10,20",
        "--append-rows",
        "5",
        "--append-opens",
        "2",
        "--append-samples",
        "5",
        "--json",
        str(results),
    ]
    proc = subprocess.run(argv, cwd=BENCHMARKS, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    found = json.loads(results.read_text())
    for part in "abcde":
        assert part in found and "error" not in found[part], f"part {part}: {found.get(part)}"


def test_the_revision_comparison_runs_against_head_at_toy_sizes():
    """``revisions.py`` imports each side from its own ``src/`` (it refuses to run otherwise)."""
    argv = [sys.executable, "revisions.py", "--base", "HEAD", "--rounds", "1", "--series", "4", "--seconds", "0.2"]
    proc = subprocess.run(argv, cwd=BENCHMARKS, capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]  # 1: a step timed slower
    assert "bulk read" in proc.stdout and "base = HEAD" in proc.stdout
