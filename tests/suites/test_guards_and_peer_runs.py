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
        assert all(run.returncode == 0 for run, _ in found.values())
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


def test_a_process_other_than_the_runs_one_sees_each_run_end(tmp_path):
    """Under pytest-xdist the controller runs the peer suites; a worker sees each run's report and exit code,
    a run that could not start as its error, and asking for results gives the runs a second slot."""
    from _peer_runs import RunsElsewhere

    def reporting(workdir: Path) -> _Run:
        report = '<testsuite><testcase classname="m" name="t"/></testsuite>'
        script = f"open({str(workdir / 'ok.xml')!r}, 'w').write({report!r})"
        return _Run("ok", workdir, [sys.executable, "-c", script], {})

    def broken(workdir: Path) -> _Run:
        raise RuntimeError("download failed")

    runs = BackgroundRuns(tmp_path, [("ok", reporting), ("broken", broken), _job("third")], slots=1).start()
    elsewhere = RunsElsewhere(tmp_path, ["ok", "broken", "third"])
    try:
        ((run, seconds),) = elsewhere.result(["ok"]).values()
        assert (
            run.returncode == 0
            and seconds > 0
            and run.results() == {"m::t": {"outcome": "passed", "detail": "", "props": {}}}
        )
        assert "exit code: 0" in run.log_tail()
        with pytest.raises(AssertionError, match="broken run failed: RuntimeError: download failed"):
            elsewhere.result(["broken"])
        assert runs.slots == 2
        assert elsewhere.result(["third"])["third"][0].returncode == 0
    finally:
        runs.cancel()
