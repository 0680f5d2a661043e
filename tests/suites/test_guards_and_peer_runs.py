"""The audit-hook guards watch the code under test on every thread, but not the session's own peer runs.

CI failed once because the peer runs' queue made its next scratch folder while a hostile file was being
read: ``bounded`` counted that ``os.mkdir`` as the read's side effect and raised it inside the queue's
thread, which cancelled every peer run still waiting.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest
from _peer_runs import BackgroundRuns, _Run
from hostile_corpus import bounded
from path_trace import tracing


def _job(label: str):
    """A run that makes its folder, writes its log and starts a process: every kind of event the guards watch."""

    def start(workdir: Path) -> _Run:
        return _Run(label, workdir, [sys.executable, "-c", "pass"], {})

    return label, start


def test_peer_runs_started_while_guarded_are_not_the_reads_effects(tmp_path):
    sandbox = tmp_path / "sandbox"
    sandbox.mkdir()
    runs = BackgroundRuns(tmp_path / "peer", [_job("first"), _job("second")], slots=1)
    (tmp_path / "peer").mkdir()
    try:
        with tracing() as trace, bounded(sandbox):
            runs.start()
            found = runs.result(["first", "second"])
        assert all(run.proc.returncode == 0 for run, _ in found.values())
        assert not [path for _, path in trace.events if "peer" in Path(path).parts]
    finally:
        runs.cancel()


def test_other_threads_are_still_watched(tmp_path):
    """zarr reads on threads of its own: what they do while a file is read is still refused."""
    sandbox = tmp_path / "sandbox"
    sandbox.mkdir()
    outside = tmp_path / "outside"
    errors: list[BaseException] = []

    def make_folder() -> None:
        try:
            outside.mkdir()
        except BaseException as exc:  # the guard's HostileEffect, raised in this thread
            errors.append(exc)

    with pytest.raises(AssertionError, match="side effects while reading"), bounded(sandbox):
        worker = threading.Thread(target=make_folder)
        worker.start()
        worker.join()
    assert errors and not outside.exists()
    with tracing() as trace:
        worker = threading.Thread(target=lambda: (tmp_path / "traced").mkdir())
        worker.start()
        worker.join()
    assert any(path == str(tmp_path / "traced") for _, path in trace.events)
