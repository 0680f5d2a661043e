"""pytest plugin: deselect the hdmf-zarr 0.14 unit tests listed in ``hdmf_zarr_exclusions.txt``.

Loaded by ``scripts/hdmf_zarr_suite.py`` (``-p exclude_hdmf_zarr``, this folder on ``PYTHONPATH``) unless
``--no-exclusions`` is given. Each line of the list is a pytest node id relative to the sdist root, or an
``fnmatch`` pattern over node ids (``*`` matches across ``::``), then ``# category: reason``. Blank lines
and lines starting with ``#`` are comments. A pattern that matches no collected test is reported, so the
list cannot silently go stale; ``HDMF_ZARR3_EXCLUSIONS`` names another list file. When
``HDMF_ZARR3_EXCLUSION_REPORT`` names a file, the deselected node ids (with the entry that matched) and
the stale entries are written there as JSON, for tests/suites/test_hdmf_zarr_suite.py.
"""

from __future__ import annotations

import fnmatch
import json
import os
import warnings
from pathlib import Path

import pytest

LIST = Path(__file__).with_name("hdmf_zarr_exclusions.txt")
CATEGORIES = ("private-api", "on-disk-names", "class-names", "deliberate", "fails-on-theirs", "cannot-run")


def load_exclusions(path: Path) -> dict[str, str]:
    """Read the exclusion list.

    Parameters
    ----------
    path : Path
        The list file.

    Returns
    -------
    dict[str, str]
        Pattern -> ``"category: reason"``.

    Raises
    ------
    ValueError
        When a line has no ``# category: reason`` or an unknown category (a list that cannot be
        reviewed is refused rather than half applied).
    """
    entries: dict[str, str] = {}
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        pattern, sep, comment = line.partition(" # ")
        category = comment.split(":", 1)[0].strip()
        if not sep or category not in CATEGORIES or ":" not in comment:
            raise ValueError(
                f"{path}:{number}: expected '<node id or glob> # <category>: <reason>' with a "
                f"category among {', '.join(CATEGORIES)}; got {raw!r}"
            )
        entries[pattern.strip()] = comment.strip()
    return entries


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    entries = load_exclusions(Path(os.environ.get("HDMF_ZARR3_EXCLUSIONS", LIST)))
    used: set[str] = set()
    kept, dropped = [], []
    matched: dict[str, str] = {}
    for item in items:
        hits = [p for p in entries if fnmatch.fnmatchcase(item.nodeid, p)]
        used.update(hits)
        (dropped if hits else kept).append(item)
        if hits:
            matched[item.nodeid] = hits[0]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
    # Report stale entries only when the whole suite was collected (a -k or path selection legitimately
    # leaves patterns unmatched).
    whole = not config.option.keyword and not config.option.markexpr and len(config.args) == 1
    stale = sorted(set(entries) - used) if whole else []
    report = os.environ.get("HDMF_ZARR3_EXCLUSION_REPORT")
    if report:
        Path(report).write_text(
            json.dumps(
                {"deselected": matched, "kept": [i.nodeid for i in kept], "stale": stale, "whole": whole}, indent=1
            ),
            encoding="utf-8",
        )
    if whole:
        if stale:
            warnings.warn(
                pytest.PytestConfigWarning("exclusion entries matching no test: " + ", ".join(stale)), stacklevel=1
            )
