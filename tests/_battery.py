"""PyNWB's own HDF5 round-trip battery, run in the background of the test session (see _peer_runs.py).

pynwb's ``tests/integration/hdf5`` (taken from the pynwb sdist, see _pynwb_sdist.py) is run, each run
in its own scratch directory (the tests write their files into the current directory):

* unmodified: the HDF5 baseline;
* with ``-p zarr_plugin`` (tests/battery/zarr_plugin.py), which re-targets the round-trip mixins and
  the tests' own NWBHDF5IO usage onto ``hdmf_zarr3.NWBZarrIO``;
* the export tests (``roundtripExportContainer``) twice more: written to HDF5 and exported to Zarr,
  and written to Zarr and exported to HDF5.

The runs take about eleven minutes of CPU, as much as the rest of the suite.

The HDF5 baseline depends only on PyNWB's tests and the HDF5 stack, not on this package: its outcomes
are recorded in tests/battery/hdf5_baseline.json with the versions they were measured with, and the
baseline is run again only when one of those versions differs.

Environment:
  HDMF_ZARR3_BATTERY_BASELINE  "run" to run the HDF5 baseline even when a recorded one matches
  HDMF_ZARR3_CACHE            cache root for the sdist (default <repo>/.cache)
"""

from __future__ import annotations

import json
import os
import sys
from importlib.metadata import version
from pathlib import Path

try:
    from ._peer_runs import BackgroundRuns, EndedRun, Job, _Run, offline_env
    from ._pynwb_sdist import pynwb_sdist_dir
except ImportError:  # tests/ is not a package: pytest puts tests/ itself on sys.path
    from _peer_runs import BackgroundRuns, EndedRun, Job, _Run, offline_env
    from _pynwb_sdist import pynwb_sdist_dir

REPO_ROOT = Path(__file__).resolve().parents[1]
PLUGIN_DIR = REPO_ROOT / "tests" / "battery"
PLUGIN = "zarr_plugin"  # imported as a top-level module: pynwb's test-suite owns the package name `tests`
BATTERY = "tests/integration/hdf5"
# Tests that would contact the internet (they also skip without fsspec); never run them.
NETWORK_TESTS = ("tests/integration/hdf5/test_io.py::TestNWBHDF5IO::test_read_nwb_method_s3_path",)


def _battery_run(label: str, workdir: Path, use_plugin: bool, mode: str = "zarr", select: str | None = None) -> _Run:
    """Start one battery run in ``workdir``."""
    sdist = pynwb_sdist_dir()
    ini = workdir / "pytest.ini"
    ini.write_text("[pytest]\n")  # keeps any surrounding/sdist config out
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        str(sdist / BATTERY),
        "-q",
        "-p",
        "no:cacheprovider",
        "-c",
        str(ini),
        "--rootdir",
        str(sdist),
        "--confcutdir",
        str(sdist),
    ]
    cmd += [f"--deselect={test_id}" for test_id in NETWORK_TESTS]
    if select:
        cmd += ["-k", select]
    env = offline_env([str(PLUGIN_DIR)] if use_plugin else [])
    if use_plugin:
        cmd += ["-p", PLUGIN]
        env["HDMF_ZARR3_BATTERY_MODE"] = mode
    return _Run(label, workdir, cmd, env)


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


LABELS = ("zarr", "hdf5", "zarr-to-hdf5", "hdf5-to-zarr")


def battery_jobs() -> list[Job]:
    """The battery's runs, longest first (the HDF5 baseline only when none is recorded for this stack)."""
    specs = [("zarr", {"use_plugin": True})]
    if recorded_baseline() is None:
        specs.append(("hdf5", {"use_plugin": False}))
    specs += [
        (label, {"use_plugin": True, "mode": label, "select": EXPORT_TESTS})
        for label in ("zarr-to-hdf5", "hdf5-to-zarr")
    ]
    return [(label, lambda workdir, label=label, kw=kw: _battery_run(label, workdir, **kw)) for label, kw in specs]


def battery_results(runs: BackgroundRuns) -> dict[str, tuple[EndedRun | None, dict[str, dict], float]]:
    """Wait for the battery's runs; ``{label: (run, results, seconds)}``. The HDF5 entry is the recorded
    baseline (run ``None``) when one matches the installed stack; else the run's outcomes are written
    next to its report, ready to be recorded."""
    baseline = recorded_baseline()
    labels = [label for label in LABELS if not (label == "hdf5" and baseline is not None)]
    found = {label: (run, run.results(), seconds) for label, (run, seconds) in runs.result(labels).items()}
    if baseline is None:
        _record(found["hdf5"][1], runs.root / BASELINE_FILE.name)
        print(f"HDF5 baseline run for {_stack()}; to record it: cp {runs.root / BASELINE_FILE.name} {BASELINE_FILE}")
    else:
        found["hdf5"] = (None, baseline, 0.0)
    return found
