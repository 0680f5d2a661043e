"""Run PyNWB's own HDF5 round-trip battery in subprocesses, in the background of the test session.

pynwb's ``tests/integration/hdf5`` (taken from the pynwb sdist, see _pynwb_sdist.py) is run, each run
in its own scratch directory (the tests write their files into the current directory):

* unmodified: the HDF5 baseline;
* with ``-p zarr_plugin`` (tests/battery/zarr_plugin.py), which re-targets the round-trip mixins and
  the tests' own NWBHDF5IO usage onto ``hdmf_zarr3.NWBZarrIO``;
* the export tests (``roundtripExportContainer``) twice more: written to HDF5 and exported to Zarr,
  and written to Zarr and exported to HDF5.

The runs take about eleven minutes of CPU, as much as the rest of the suite, which runs in one process.
So conftest.py starts them when the session starts, one at a time on the core the suite leaves free,
and test_pynwb_battery.py (moved to the end of the session) collects them, allowing a second run at
a time from then on.

The HDF5 baseline depends only on PyNWB's tests and the HDF5 stack, not on this package: its outcomes
are recorded in tests/battery/hdf5_baseline.json with the versions they were measured with, and the
baseline is run again only when one of those versions differs.

Environment:
  HDMF_ZARR3_BATTERY_BASELINE  "run" to run the HDF5 baseline even when a recorded one matches
  HDMF_ZARR3_BATTERY_TIMEOUT  seconds allowed per run (default 900)
  HDMF_ZARR3_CACHE            cache root for the sdist (default <repo>/.cache)
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from importlib.metadata import version
from pathlib import Path

try:
    from ._pynwb_sdist import pynwb_sdist_dir
except ImportError:  # tests/ is not a package: pytest puts tests/ itself on sys.path
    from _pynwb_sdist import pynwb_sdist_dir

REPO_ROOT = Path(__file__).resolve().parents[1]
PLUGIN_DIR = REPO_ROOT / "tests" / "battery"
PLUGIN = "zarr_plugin"  # imported as a top-level module: pynwb's test-suite owns the package name `tests`
BATTERY = "tests/integration/hdf5"
TIMEOUT = float(os.environ.get("HDMF_ZARR3_BATTERY_TIMEOUT", "900"))
# Tests that would contact the internet (they also skip without fsspec); never run them.
NETWORK_TESTS = ("tests/integration/hdf5/test_io.py::TestNWBHDF5IO::test_read_nwb_method_s3_path",)
FAILURE_LINES = 15
# A proxy nobody listens on: any HTTP(S) request a battery test makes fails fast instead of going out.
_DEAD_PROXY = "http://127.0.0.1:9"
_LOCATION = re.compile(r"^\S[^:]*\.py:\d+: ")


class _Run:
    """One battery run in a subprocess."""

    def __init__(self, label: str, sdist: Path, workdir: Path, use_plugin: bool, mode: str = "zarr",
                 select: str | None = None):
        self.label = label
        self.workdir = workdir
        workdir.mkdir()
        ini = workdir / "pytest.ini"
        ini.write_text("[pytest]\n")  # keeps any surrounding/sdist config out
        self.xml = workdir / f"{label}.xml"
        self.log = workdir / f"{label}.log"
        cmd = [
            sys.executable, "-m", "pytest", str(sdist / BATTERY), "-q", "-p", "no:cacheprovider",
            "-c", str(ini), "--rootdir", str(sdist), "--confcutdir", str(sdist),
            f"--junitxml={self.xml}",
        ]
        cmd += [f"--deselect={test_id}" for test_id in NETWORK_TESTS]
        if select:
            cmd += ["-k", select]
        env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")}
        for var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"):
            env[var] = _DEAD_PROXY
        env.pop("no_proxy", None)
        env.pop("NO_PROXY", None)
        if use_plugin:
            cmd += ["-p", PLUGIN]
            env["HDMF_ZARR3_BATTERY_MODE"] = mode
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PLUGIN_DIR), env.get("PYTHONPATH")]))
        self.cmd = cmd
        self.started = time.monotonic()
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                cmd, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )

    def wait(self) -> float:
        """Wait for the run (killing it on timeout); return its duration in seconds."""
        remaining = max(0.0, TIMEOUT - (time.monotonic() - self.started))
        try:
            self.proc.wait(timeout=remaining)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)  # its own session: kills just this run
            self.proc.wait()
            raise AssertionError(
                f"{self.label} battery run exceeded {TIMEOUT:.0f} s and was killed "
                f"(set HDMF_ZARR3_BATTERY_TIMEOUT to allow more)\n{self.log_tail()}"
            ) from None
        return time.monotonic() - self.started

    def log_tail(self, lines: int = 40) -> str:
        text = self.log.read_text(errors="replace").splitlines() if self.log.exists() else []
        return f"command: {' '.join(self.cmd)}\nexit code: {self.proc.returncode}\n" + "\n".join(text[-lines:])

    def results(self) -> dict[str, dict]:
        if not self.xml.exists():
            raise AssertionError(f"{self.label} battery run wrote no junit xml\n{self.log_tail()}")
        return parse_junit(self.xml)


def _failure_text(element: ET.Element) -> str:
    """Exception message, then the innermost source locations of the traceback."""
    message = (element.get("message") or "").strip()
    lines = message.splitlines()[: FAILURE_LINES - 3]
    trace = (element.text or "").splitlines()
    # long tracebacks end each frame with "path:line: ..."; the last ones are where it was raised
    locations = [ln for ln in trace if _LOCATION.match(ln)]
    lines += [f"  at {loc}" for loc in locations[-(FAILURE_LINES - len(lines)):]] if locations else []
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


EXPORT_TESTS = "roundtrip_export"
BASELINE_FILE = PLUGIN_DIR / "hdf5_baseline.json"
BASELINE_STACK = ("pynwb", "hdmf", "h5py", "numpy", "pandas")


def _stack() -> dict[str, str]:
    """The versions the HDF5 baseline's outcomes depend on (PyNWB's tests and the HDF5 stack)."""
    return {name: version(name) for name in BASELINE_STACK}


def recorded_baseline() -> dict[str, dict] | None:
    """The HDF5 baseline recorded for exactly this stack (``tests/battery/hdf5_baseline.json``), if any.

    The baseline does not depend on this package, so it is run only when the stack changes (or when
    ``HDMF_ZARR3_BATTERY_BASELINE=run``); the run then writes the file to record next to its report.
    """
    if os.environ.get("HDMF_ZARR3_BATTERY_BASELINE") == "run" or not BASELINE_FILE.exists():
        return None
    recorded = json.loads(BASELINE_FILE.read_text())
    if recorded.get("stack") != _stack():
        return None
    return {t: {"outcome": o, "detail": "", "props": {}} for t, o in recorded["outcomes"].items()}


def _record(results: dict[str, dict], path: Path) -> None:
    outcomes = {t: e["outcome"] for t, e in sorted(results.items())}
    path.write_text(json.dumps({"stack": _stack(), "outcomes": outcomes}, indent=1) + "\n")


def _jobs(with_baseline: bool) -> list[tuple[str, dict]]:
    """The runs, longest first."""
    jobs = [("zarr", {"use_plugin": True})]
    if with_baseline:
        jobs.append(("hdf5", {"use_plugin": False}))
    jobs += [(label, {"use_plugin": True, "mode": label, "select": EXPORT_TESTS})
             for label in ("zarr-to-hdf5", "hdf5-to-zarr")]
    return jobs


class BackgroundBattery:
    """The battery's runs, queued in a thread: at most ``slots`` at a time, in order.

    ``result()`` raises the number of slots to two (the rest of the session no longer competes for the
    cores), waits, and returns ``{label: (run, results, seconds)}``; the HDF5 entry is the recorded
    baseline (run ``None``) when one matches the installed stack.
    """

    def __init__(self, root: Path, slots: int = 1):
        self.root = root
        self.slots = slots
        self._baseline = recorded_baseline()
        self._runs: dict[str, _Run] = {}
        self._durations: dict[str, float] = {}
        self._error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._main, name="pynwb-battery", daemon=True)

    def start(self) -> BackgroundBattery:
        self._thread.start()
        return self

    def _main(self) -> None:
        try:
            self._queue(_jobs(self._baseline is None), pynwb_sdist_dir())
        except BaseException as exc:  # handed to result(), in the main thread
            self._error = exc

    def _queue(self, pending: list[tuple[str, dict]], sdist: Path) -> None:
        runs, durations = self._runs, self._durations
        try:
            while (pending or len(durations) < len(runs)) and not self._stop.is_set():
                active = [label for label in runs if label not in durations]
                if pending and len(active) < self.slots:
                    label, kwargs = pending.pop(0)
                    runs[label] = _Run(label, sdist, self.root / label, **kwargs)
                    continue
                for label in active:
                    if runs[label].proc.poll() is not None or time.monotonic() - runs[label].started > TIMEOUT:
                        durations[label] = runs[label].wait()
                self._stop.wait(0.5)
        finally:
            self.cancel()

    def cancel(self) -> None:
        """Stop queueing and kill the runs still going."""
        self._stop.set()
        for run in list(self._runs.values()):
            if run.proc.poll() is None:
                os.killpg(run.proc.pid, signal.SIGKILL)  # its own session: kills just this run
                run.proc.wait()

    def result(self) -> dict[str, tuple[_Run | None, dict[str, dict], float]]:
        self.slots = 2
        self._thread.join()
        if self._error is not None:
            raise self._error
        found = {label: (run, run.results(), self._durations[label]) for label, run in self._runs.items()}
        if self._baseline is None:
            _record(found["hdf5"][1], self.root / BASELINE_FILE.name)
            print(f"HDF5 baseline run for {_stack()}; to record it: cp {self.root / BASELINE_FILE.name} "
                  f"{BASELINE_FILE}")
        else:
            found["hdf5"] = (None, self._baseline, 0.0)
        return found
