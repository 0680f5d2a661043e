"""PyNWB's own HDF5 round-trip battery, run against the Zarr backend.

Every test of pynwb's ``tests/integration/hdf5`` that passes under HDF5 must also pass when re-targeted
onto ``NWBZarrIO`` (run ``zarr``), and every export test must pass exporting HDF5 → Zarr and Zarr → HDF5.
The runs themselves (subprocesses, started in the background when the session starts) are in
_battery.py; the junit-xml reports are left in the session's temporary directory for inspection.
Marked ``peer``: ``-m "not peer"`` skips it locally (CI runs it).
"""

from __future__ import annotations

import pytest

try:
    from ._battery import BASELINE_FILE, EXPORT_TESTS, battery_results
    from ._peer_runs import BackgroundRuns, EndedRun
except ImportError:  # tests/ is not a package: pytest puts tests/ itself on sys.path
    from _battery import BASELINE_FILE, EXPORT_TESTS, battery_results
    from _peer_runs import BackgroundRuns, EndedRun

pytestmark = pytest.mark.peer


@pytest.fixture(scope="module")
def battery(peer_runs: BackgroundRuns) -> dict[str, tuple[EndedRun | None, dict[str, dict], float]]:
    """The HDF5 baseline and the three Zarr variants (started by conftest.py when the session started)."""
    return battery_results(peer_runs)


def _collection_errors(results: dict[str, dict]) -> list[str]:
    """Errors not tied to a test function (e.g. a module that failed to import)."""
    return [
        f"{test_id}\n{entry['detail']}"
        for test_id, entry in results.items()
        if test_id.startswith("::") or test_id.split("::")[0] in ("", "None")
    ]


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def _check(battery: dict, label: str, only: str | None = None) -> None:
    """Every baseline test (matching ``only``) that passed on HDF5 passes in run ``label``."""
    base_run, hdf5, base_time = battery["hdf5"]
    assert len(hdf5) > 200, f"the HDF5 baseline holds only {len(hdf5)} tests"
    run, results, took = battery[label]
    hdf5_passed = {t for t, e in hdf5.items() if e["outcome"] == "passed" and (only is None or only in t)}
    passed = {t for t, e in results.items() if e["outcome"] == "passed"}
    regressions = sorted(hdf5_passed - passed)
    retargeted = {t for t, e in results.items() if e["props"].get("battery_backend") == "zarr"}
    touched_hdf5 = sorted(
        t for t in retargeted if label == "zarr" and results[t]["props"].get("battery_hdf5_opens", "0") != "0"
    )
    summary = (
        f"{label}: hdf5 passed {len(hdf5_passed)} / {label} passed {len(passed & hdf5_passed)} / "
        f"regressions {len(regressions)}; {len(retargeted)} tests re-targeted, "
        f"{len(results) - len(retargeted)} kept on HDF5 (HDF5-specific); "
        f"took hdf5 {base_time:.0f} s, {label} {took:.0f} s"
    )
    print(summary)
    assert results, f"{label} ran no test\n{run.log_tail()}"
    assert retargeted, f"{label}: no test was re-targeted; the plugin did nothing\n{run.log_tail()}"
    assert not touched_hdf5, f"{label}: re-targeted tests still opened HDF5 files: {touched_hdf5}"
    if not regressions:
        return
    parts = [summary, f"reports: {base_run.xml if base_run else BASELINE_FILE} and {run.xml}"]
    errors = _collection_errors(results)
    if errors:
        parts.append(f"errors outside tests in the {label} run:\n" + "\n".join(_indent(e) for e in errors))
    parts.append(f"tests that pass on HDF5 but not in {label}:")
    for test_id in regressions:
        entry = results.get(test_id)
        if entry is None:
            parts.append(f"- {test_id}: did not run (see the errors above / the log)")
        else:
            parts.append(f"- {test_id} ({entry['outcome']}):\n{_indent(entry['detail'])}")
    pytest.fail("\n".join(parts), pytrace=False)


def test_battery_round_trips_on_zarr(battery):
    _check(battery, "zarr")


def test_battery_exports_hdf5_to_zarr(battery):
    _check(battery, "hdf5-to-zarr", only=EXPORT_TESTS)


def test_battery_exports_zarr_to_hdf5(battery):
    _check(battery, "zarr-to-hdf5", only=EXPORT_TESTS)
