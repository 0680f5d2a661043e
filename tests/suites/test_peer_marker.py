"""The README's promise: ``-m "not peer"`` leaves out both peer suites (and so never starts their runs)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SUITES = Path(__file__).resolve().parent
PEER_MODULES = ("test_pynwb_battery.py", "test_hdmf_zarr_suite.py")


def _collect(*args: str) -> str:
    command = [
        sys.executable,
        "-m",
        "pytest",
        "--collect-only",
        "-q",
        "-p",
        "no:cacheprovider",
        *(str(SUITES / m) for m in PEER_MODULES),
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, cwd=SUITES.parents[1], timeout=120).stdout


def test_not_peer_deselects_both_peer_suites():
    everything = _collect()
    for module in PEER_MODULES:
        assert module in everything, everything
    without = _collect("-m", "not peer")
    assert "deselected" in without, without
    assert not any(module in line for line in without.splitlines() for module in PEER_MODULES if "::" in line)


def test_a_peer_run_that_cannot_start_does_not_cancel_the_others(tmp_path):
    """A job whose start fails (e.g. its download) is reported on its own; the run already going finishes."""
    from _peer_runs import BackgroundRuns, _Run

    def sleeper(workdir):
        return _Run("slow", workdir, [sys.executable, "-c", "import time; time.sleep(1.5)"], {})

    def broken(workdir):
        raise RuntimeError("download failed")

    runs = BackgroundRuns(tmp_path, [("slow", sleeper), ("broken", broken)], slots=2).start()
    try:
        ((run, seconds),) = runs.result(["slow"]).values()
        assert run.returncode == 0 and seconds >= 1.5
        with pytest.raises(RuntimeError, match="download failed"):
            runs.result(["broken"])
    finally:
        runs.cancel()
