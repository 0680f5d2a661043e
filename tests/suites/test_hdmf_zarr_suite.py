"""hdmf-zarr 0.14's own unit tests, run with its ``ZarrIO``/``NWBZarrIO``/``ZarrDataIO`` bound to ours.

Code written for hdmf-zarr must run on hdmf_zarr3 unchanged: every test of its suite passes on our
classes, or is on the reviewed exclusion list (tests/peer/hdmf_zarr_exclusions.txt) with its category
and a one-line reason — hdmf-zarr's private API, its on-disk attribute or class names, a documented
deliberate difference, or a test that fails on hdmf-zarr itself. The run (a subprocess started in the
background when the session starts) is in _hdmf_zarr_peer.py. Marked ``peer``: ``-m "not peer"``
skips it locally (CI runs it).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

try:
    from ._hdmf_zarr_peer import LABEL, exclusion_report
    from ._peer_runs import BackgroundRuns, EndedRun
except ImportError:  # tests/ is not a package: pytest puts tests/ itself on sys.path
    from _hdmf_zarr_peer import LABEL, exclusion_report
    from _peer_runs import BackgroundRuns, EndedRun

pytestmark = pytest.mark.peer

LIST = Path(__file__).resolve().parents[1] / "peer" / "hdmf_zarr_exclusions.txt"
_SECTION = re.compile(r"^# ---- (?P<category>[a-z-]+) \((?P<count>\d+) tests?\) ----$")


@pytest.fixture(scope="module")
def run(peer_runs: BackgroundRuns) -> tuple[EndedRun, float]:
    return peer_runs.result([LABEL])[LABEL]


def test_every_test_not_excluded_passes(run):
    job, seconds = run
    results = job.results()
    outcomes = Counter(entry["outcome"] for entry in results.values())
    print(f"hdmf-zarr 0.14 suite on hdmf_zarr3: {dict(outcomes)} in {seconds:.0f} s; report {job.xml}")
    assert outcomes["passed"] > 250, f"only {outcomes['passed']} tests passed\n{job.log_tail()}"
    failed = {test_id: entry for test_id, entry in results.items() if entry["outcome"] == "failed"}
    if failed:
        lines = [
            f"{len(failed)} hdmf-zarr tests fail on our classes (fix them, or list them in {LIST.name} "
            "with a reason if they test hdmf-zarr's internals or a deliberate difference):"
        ]
        for test_id, entry in sorted(failed.items()):
            lines.append(f"- {test_id}\n    " + entry["detail"].replace("\n", "\n    "))
        pytest.fail("\n".join(lines), pytrace=False)
    skipped = sorted(test_id for test_id, entry in results.items() if entry["outcome"] == "skipped")
    assert not skipped, (
        f"skipped tests pass nothing (install what they need, or list them as cannot-run in {LIST.name}): {skipped}"
    )


def test_exclusion_list_is_current(run):
    """Every entry still matches a test of the suite, and each section's header counts its tests."""
    report = exclusion_report(run[0])
    assert report["whole"], "the run collected only part of hdmf-zarr's suite"
    assert not report["stale"], f"exclusion entries matching no test of hdmf-zarr's suite: {report['stale']}"
    category_of: dict[str, str] = {}
    declared: dict[str, int] = {}
    for line in LIST.read_text(encoding="utf-8").splitlines():
        header = _SECTION.match(line)
        if header:
            declared[header["category"]] = int(header["count"])
        elif line.strip() and not line.startswith("#"):
            pattern, _, comment = line.partition(" # ")
            category_of[pattern.strip()] = comment.split(":", 1)[0].strip()
    counted = Counter(category_of[pattern] for pattern in report["deselected"].values())
    assert dict(counted) == declared, f"tests excluded per category {dict(counted)}; the section headers say {declared}"
