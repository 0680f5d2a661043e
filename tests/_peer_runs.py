"""Other projects' test suites, run against ours in subprocesses in the background of the test session.

Two peers: PyNWB's HDF5 round-trip battery (_battery.py) and hdmf-zarr 0.14's unit tests with its
classes bound to ours (_hdmf_zarr_peer.py). Together they take about as much CPU as the rest of the
suite, which runs in one process; so conftest.py starts the runs of the peer modules that were selected
when the session starts, one at a time on the core the suite leaves free. The peer test modules are
collected last; ``result(labels)`` allows a second run at a time from then on and waits for the runs a
module checks. Each run writes a junit-xml report and a log into its own scratch directory.

The peer modules carry the ``peer`` marker: ``-m "not peer"`` skips them (and their runs) locally; CI
runs everything.

Environment:
  HDMF_ZARR3_PEER_TIMEOUT  seconds allowed per run (default 900; HDMF_ZARR3_BATTERY_TIMEOUT is the old name)
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from pathlib import Path

from session_machinery import thread_name

TIMEOUT = float(os.environ.get("HDMF_ZARR3_PEER_TIMEOUT", os.environ.get("HDMF_ZARR3_BATTERY_TIMEOUT", "900")))
FAILURE_LINES = 15
# A proxy nobody listens on: any HTTP(S) request a peer test makes fails fast instead of going out.
_DEAD_PROXY = "http://127.0.0.1:9"
#: Beside a run's folder when it has ended: ``<label>.outcome.json``; and the file that asks for a second slot.
OUTCOME = ".outcome.json"
WANTED = "results-wanted"
_LOCATION = re.compile(r"^\S[^:]*\.py:\d+: ")


def offline_env(extra_path: Sequence[str] = ()) -> dict[str, str]:
    """This process's environment for a peer run: no pytest plugins or options of ours, every HTTP(S)
    proxy pointing at a port nobody listens on, ``extra_path`` prepended to ``PYTHONPATH``."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")}
    for var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"):
        env[var] = _DEAD_PROXY
    env.pop("no_proxy", None)
    env.pop("NO_PROXY", None)
    if extra_path:
        env["PYTHONPATH"] = os.pathsep.join([*extra_path, *filter(None, [env.get("PYTHONPATH")])])
    return env


class EndedRun:
    """What a peer run left in ``workdir``: its junit xml report and its log."""

    def __init__(self, label: str, workdir: Path, cmd: list[str], returncode: int | None = None):
        self.label = label
        self.workdir = workdir
        self.xml = workdir / f"{label}.xml"
        self.log = workdir / f"{label}.log"
        self.cmd = cmd
        self._returncode = returncode

    @property
    def returncode(self) -> int | None:
        return self._returncode

    def log_tail(self, lines: int = 40) -> str:
        text = self.log.read_text(errors="replace").splitlines() if self.log.exists() else []
        return f"command: {' '.join(self.cmd)}\nexit code: {self.returncode}\n" + "\n".join(text[-lines:])

    def results(self) -> dict[str, dict]:
        if not self.xml.exists():
            raise AssertionError(f"{self.label} run wrote no junit xml\n{self.log_tail()}")
        return parse_junit(self.xml)


class _Run(EndedRun):
    """One peer run: ``cmd`` (a pytest invocation that writes junit xml to ``self.xml``) in a subprocess."""

    def __init__(self, label: str, workdir: Path, cmd: list[str], env: dict[str, str]):
        super().__init__(label, workdir, [*cmd, f"--junitxml={workdir / f'{label}.xml'}"])
        self.started = time.monotonic()
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                self.cmd, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def wait(self) -> float:
        """Wait for the run (killing it on timeout); return its duration in seconds."""
        remaining = max(0.0, TIMEOUT - (time.monotonic() - self.started))
        try:
            self.proc.wait(timeout=remaining)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)  # its own session: kills just this run
            self.proc.wait()
            raise AssertionError(
                f"{self.label} run exceeded {TIMEOUT:.0f} s and was killed "
                f"(set HDMF_ZARR3_PEER_TIMEOUT to allow more)\n{self.log_tail()}"
            ) from None
        return time.monotonic() - self.started


def _failure_text(element: ET.Element) -> str:
    """Exception message, then the innermost source locations of the traceback."""
    message = (element.get("message") or "").strip()
    lines = message.splitlines()[: FAILURE_LINES - 3]
    trace = (element.text or "").splitlines()
    # long tracebacks end each frame with "path:line: ..."; the last ones are where it was raised
    locations = [ln for ln in trace if _LOCATION.match(ln)]
    lines += [f"  at {loc}" for loc in locations[-(FAILURE_LINES - len(lines)) :]] if locations else []
    if not lines:
        lines = trace[-FAILURE_LINES:]
    return "\n".join(lines[:FAILURE_LINES])


def parse_junit(path: Path) -> dict[str, dict]:
    """Map test id ("classname::name") to {"outcome": passed|failed|skipped, "detail": str, "props": dict}.

    A test reported more than once (e.g. a teardown error) is failed if any report failed.
    """
    results: dict[str, dict] = {}
    rank = {"passed": 0, "skipped": 1, "failed": 2}
    for case in ET.parse(path).getroot().iter("testcase"):
        test_id = f"{case.get('classname')}::{case.get('name')}"
        outcome, detail = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome, detail = "failed", f"[{child.tag}] {_failure_text(child)}"
                break
            if child.tag == "skipped" and outcome == "passed":
                outcome, detail = "skipped", child.get("message") or ""
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        entry = results.setdefault(test_id, {"outcome": "passed", "detail": "", "props": {}})
        entry["props"].update(props)
        if rank[outcome] > rank[entry["outcome"]]:
            entry["outcome"], entry["detail"] = outcome, detail
    return results


#: A queued run: its label, and what starts it in a given (new, empty) working directory.
Job = tuple[str, Callable[[Path], _Run]]


class BackgroundRuns:
    """Peer runs, queued in a thread: at most ``slots`` at a time, in order.

    ``result(labels)`` raises the number of slots to two (the rest of the session no longer competes
    for the cores), waits for those runs, and returns ``{label: (run, seconds)}``.
    """

    def __init__(self, root: Path, jobs: list[Job], slots: int = 1):
        self.root = root
        self.slots = slots
        self._pending = list(jobs)
        self._runs: dict[str, _Run] = {}
        self._durations: dict[str, float] = {}
        self._errors: dict[str, BaseException] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._main, name=thread_name("peer-runs"), daemon=True)

    def start(self) -> BackgroundRuns:
        self._thread.start()
        return self

    def _main(self) -> None:
        runs, durations = self._runs, self._durations
        try:
            while not self._stop.is_set():
                # a run that could not start has an error but no entry in runs: count only started runs
                active = [label for label in runs if label not in durations and label not in self._errors]
                if not self._pending and not active:
                    break
                if self._pending and len(active) < self.slots:
                    label, start = self._pending.pop(0)
                    try:
                        workdir = self.root / label
                        workdir.mkdir()
                        runs[label] = start(workdir)
                    except BaseException as exc:  # e.g. a failed download: handed to result(), in the main thread
                        self._errors[label] = exc
                        self._publish(label)
                    continue
                for label in active:
                    if runs[label].proc.poll() is not None or time.monotonic() - runs[label].started > TIMEOUT:
                        try:
                            durations[label] = runs[label].wait()
                        except BaseException as exc:
                            self._errors[label] = exc
                        self._publish(label)
                if (self.root / WANTED).exists():
                    self.slots = 2
                self._stop.wait(0.5)
        finally:
            self.cancel()

    def _publish(self, label: str) -> None:
        """Write how the run of ``label`` ended, for test processes other than this one (``RunsElsewhere``)."""
        run, error = self._runs.get(label), self._errors.get(label)
        outcome = {
            "seconds": self._durations.get(label),
            "error": None if error is None else f"{type(error).__name__}: {error}",
            "cmd": run.cmd if run else [],
            "returncode": run.returncode if run else None,
        }
        written = self.root / f".{label}{OUTCOME}"
        written.write_text(json.dumps(outcome))
        written.rename(self.root / f"{label}{OUTCOME}")  # whole or not at all for the reader

    def cancel(self) -> None:
        """Stop queueing and kill the runs still going."""
        self._stop.set()
        for run in list(self._runs.values()):
            if run.proc.poll() is None:
                os.killpg(run.proc.pid, signal.SIGKILL)  # its own session: kills just this run
                run.proc.wait()

    def result(self, labels: Sequence[str]) -> dict[str, tuple[_Run, float]]:
        self.slots = 2
        while not self._stop.is_set() and not all(
            label in self._durations or label in self._errors for label in labels
        ):
            self._stop.wait(0.5)
        for label in labels:
            if label in self._errors:
                raise self._errors[label]
            if label not in self._durations:
                raise AssertionError(f"the {label} run did not finish (the session's peer runs were cancelled)")
        return {label: (self._runs[label], self._durations[label]) for label in labels}


class RunsElsewhere:
    """The peer runs as a test process sees them when another process (pytest-xdist's controller) runs
    them: ``result(labels)`` asks for the second slot, then waits for each label's outcome file."""

    def __init__(self, root: Path, labels: Sequence[str]):
        self.root = root
        self.labels = set(labels)

    def result(self, labels: Sequence[str]) -> dict[str, tuple[EndedRun, float]]:
        (self.root / WANTED).touch()
        # every run may take TIMEOUT, one after the other: the controller kills a run past it, so this is
        # only a bound for a controller that died
        deadline = time.monotonic() + TIMEOUT * (len(self.labels) + 1)
        found: dict[str, tuple[EndedRun, float]] = {}
        for label in labels:
            path = self.root / f"{label}{OUTCOME}"
            while not path.exists():
                if time.monotonic() > deadline:
                    raise AssertionError(f"the {label} run did not end (no {path} after the session's runs' time)")
                time.sleep(0.5)
            outcome = json.loads(path.read_text())
            if outcome["error"] is not None:
                raise AssertionError(f"the {label} run failed: {outcome['error']}")
            run = EndedRun(label, self.root / label, outcome["cmd"], outcome["returncode"])
            found[label] = (run, outcome["seconds"])
        return found
