"""SIGKILL during the writes the fault sweeps added for issue #38: in-place edits (mode ``r+``: slices, index
arrays, scalars of a chunked and a sharded array), the growth of a sharded array past its shape, and a virtual
conversion. The writers are ``crash_writer.py``'s (forked by ``test_crash_safety.py``'s server), killed at their
N-th store mutation, N drawn at random (seeded) plus the edges.

After the kill, ``recover`` puts back the old file byte for byte, or the finished change is there, byte for byte;
a virtual conversion killed before its commit leaves a repository that reading refuses as incomplete and that
the next conversion replaces (once the killed writer's lock is broken).
"""

from __future__ import annotations

import random
import shutil
import zipfile
from pathlib import Path

import pytest
from fault_scenarios import scenario_nwbfile, write_edit_base
from pynwb import NWBHDF5IO

from hdmf_zarr3 import FileLockedError, IncompleteFileError, NWBZarrIO, break_lock, convert, recover

from .test_crash_safety import SEED, _files, _kill_points, writers  # noqa: F401 -- the writers' server fixture

EDITS = ("edit", "grow_sharded")


@pytest.fixture(scope="module")
def edited(tmp_path_factory, writers):  # noqa: F811 -- the fixture imported above
    """The edit base (a directory and a zip), each edited to the end by the writer, and how many mutations it took."""
    root = tmp_path_factory.mktemp("edited")
    found = {}
    for suffix in (".nwb.zarr", ".nwb.zarr.zip"):
        base = root / f"base{suffix}"
        write_edit_base(base)
        for scenario in EDITS:
            path = root / f"{scenario}{suffix}"
            (shutil.copytree if base.is_dir() else shutil.copy2)(base, path)
            count = writers(scenario, path, -1)["mutations"]
            found[scenario, suffix] = (base, _content(base), _content(path), count)
    return found


def _content(path: Path) -> dict[str, bytes]:
    """Every file of a directory (temporary ones too); a zip's bytes and, under ``members``, its members."""
    if path.is_dir():
        return _files(path, every=True)
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    return {"": path.read_bytes(), **{f"members/{k}": v for k, v in members.items()}}


def _same(found: dict[str, bytes], expected: dict[str, bytes]) -> bool:
    """Whether ``found`` is ``expected``: byte for byte, a zip by its members (a zip records when they were written)."""
    if "" not in expected:
        return found == expected
    return found[""] == expected[""] or {k: v for k, v in found.items() if k} == {
        k: v for k, v in expected.items() if k
    }


@pytest.mark.parametrize("suffix", [".nwb.zarr", ".nwb.zarr.zip"])
@pytest.mark.parametrize("scenario", EDITS)
def test_a_killed_edit_is_recovered_or_finished_byte_for_byte(scenario, suffix, edited, writers, tmp_path):  # noqa: F811
    base, before, after, total = edited[scenario, suffix]
    rng = random.Random(f"{SEED}-{scenario}{suffix}")
    seen = set()
    for kill_at in _kill_points(total, rng):
        path = tmp_path / f"{kill_at}{suffix}"
        (shutil.copytree if base.is_dir() else shutil.copy2)(base, path)
        writers(scenario, path, kill_at)
        recover(path, break_lock=True)  # puts back the old file, or deletes what the finished change left
        found = _content(path)
        assert _same(found, before) or _same(found, after), f"killed at {kill_at}: a mix of old and new"
        seen.add(_same(found, before))
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(path.name)) == [path.name]
        with NWBZarrIO(path, mode="r") as io:
            io.read()
    assert seen == {True, False}, "the kills never hit both sides of the commit: the test proves little"


def test_a_killed_virtual_conversion_is_refused_as_incomplete_and_replaced_by_the_next(writers, tmp_path):  # noqa: F811
    pytest.importorskip("icechunk")
    source = tmp_path / "source.nwb"
    with NWBHDF5IO(source, mode="w") as io:
        io.write(scenario_nwbfile())
    total = writers("virtual", tmp_path / "finished.icechunk", -1)["mutations"]
    rng = random.Random(f"{SEED}-virtual")
    outcomes = set()
    for kill_at in _kill_points(total, rng):
        path = tmp_path / f"{kill_at}.icechunk"
        writers("virtual", path, kill_at)
        try:
            with NWBZarrIO(path, mode="r") as io:
                io.read()
            outcomes.add("complete")
        except IncompleteFileError as exc:
            assert "convert the HDF5 file again" in str(exc) and exc.path == str(path)
            outcomes.add("incomplete")
        except Exception as exc:  # noqa: BLE001 -- only: killed before the repository was made
            assert not path.exists(), f"killed at {kill_at}: {type(exc).__name__}: {exc}"
            outcomes.add("absent")
        if Path(f"{path}.lock").exists():
            with pytest.raises(FileLockedError, match="no longer running"):
                convert(source, path, virtual=True, min_bytes=64)
            break_lock(path)
        try:
            convert(source, path, virtual=True, min_bytes=64)  # replaces an unfinished repository
        except Exception as exc:  # noqa: BLE001
            assert "the destination exists" in str(exc), f"killed at {kill_at}: {exc}"  # a finished one stays
        with NWBZarrIO(path, mode="r") as io:
            assert "mean_rate" in io.read().analysis
    assert "incomplete" in outcomes, outcomes
