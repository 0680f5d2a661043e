"""hdmf-zarr 0.14's own unit tests, run in the background of the test session (see _peer_runs.py) with
its ``ZarrIO``, ``NWBZarrIO`` and ``ZarrDataIO`` bound to ours, minus the reviewed exclusion list.

The run is ``scripts/hdmf_zarr_suite.py`` (which loads the binding and exclusion plugins of tests/peer/),
offline, with the exclusion plugin reporting what it deselected into the run's directory. hdmf-zarr's
sdist is fetched into the cache first, by this process (the run itself has no network).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

try:
    from ._peer_runs import Job, _Run, offline_env
except ImportError:  # tests/ is not a package: pytest puts tests/ itself on sys.path
    from _peer_runs import Job, _Run, offline_env

REPO_ROOT = Path(__file__).resolve().parents[1]
SCRIPT = REPO_ROOT / "scripts" / "hdmf_zarr_suite.py"
LABEL = "hdmf-zarr"
REPORT = "exclusions.json"


def _fetch_sdist() -> Path:
    """hdmf-zarr's sdist, downloaded into the cache if it is not there yet (the script's own function)."""
    spec = importlib.util.spec_from_file_location("hdmf_zarr_suite", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.sdist_dir()


def _start(workdir: Path) -> _Run:
    _fetch_sdist()
    env = offline_env()
    env["HDMF_ZARR3_EXCLUSION_REPORT"] = str(workdir / REPORT)
    return _Run(LABEL, workdir, [sys.executable, str(SCRIPT)], env)


def hdmf_zarr_jobs() -> list[Job]:
    """The one run of hdmf-zarr's suite."""
    return [(LABEL, _start)]


def exclusion_report(run: _Run) -> dict:
    """What the exclusion plugin deselected, kept and found stale in ``run``."""
    path = run.workdir / REPORT
    if not path.exists():
        raise AssertionError(f"the {LABEL} run wrote no exclusion report\n{run.log_tail()}")
    return json.loads(path.read_text(encoding="utf-8"))
