"""Writes touch only regular files and directories inside the file (issue #38): a symlink, a dangling symlink, a
FIFO or a directory planted where a write goes is refused with our error naming it, nothing outside the file
changes, nothing hangs, and the file is as before.

The first tests are the probe's cases (a group directory symlinked out of the file, written through by modes
``a`` and ``r+``, by ``recover`` and by a parallel write's workers). Then the harness (:mod:`planted_paths`):
every path each write path touches, traced in a real run, planted at in turn with each kind of plant.
:data:`FAST_CASES` run always; every write path and plant inside the file is marked ``slow``; plants beside
the file (the lock, a zip being written or appended to, the file's own name, an HDF5 destination) are
:data:`SIDE_FILE_PLANTS` (slice "beside" of issue #38 makes them pass; marked ``slow``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import fault_scenarios
import pytest
from planted_paths import JOURNAL, PLANTS, WRITE_PATHS, Target, bounded, interrupted_append, state, sweep
from pynwb import TimeSeries
from writing import write_nwb

from hdmf_zarr3 import NWBZarrIO, recover
from hdmf_zarr3.errors import CorruptStoreError, HdmfZarrError, UnsafeDataError


@pytest.fixture
def symlinked_group(tmp_path: Path) -> tuple[Path, Path]:
    """A file whose ``acquisition/`` directory is a symlink to ``outside`` (which holds its content)."""
    path = write_nwb(tmp_path / "f.nwb.zarr")
    outside = tmp_path / "outside"
    shutil.move(str(path / "acquisition"), outside)
    os.symlink(outside, path / "acquisition")
    return path, outside


def _append_series(path: Path) -> None:
    with NWBZarrIO(path, mode="a") as io:
        nwb = io.read()
        nwb.add_acquisition(TimeSeries(name="late", data=[1.0, 2.0, 3.0], unit="V", rate=1.0))
        io.write(nwb)


def _change_chunk(path: Path) -> None:
    with NWBZarrIO(path, mode="r+") as io:
        io.read().acquisition["ts"].data[0:3] = [9.0, 9.0, 9.0]


@pytest.mark.parametrize("write", [_append_series, _change_chunk], ids=["a adds a container", "r+ changes a chunk"])
def test_a_write_never_goes_through_a_symlinked_group(symlinked_group: tuple[Path, Path], write) -> None:
    path, outside = symlinked_group
    before_file, before_outside = state(path), state(outside)
    with pytest.raises(HdmfZarrError) as caught:
        bounded(write, path)
    assert str(path / "acquisition") in str(caught.value)
    assert state(outside) == before_outside  # (before #38: 4 objects added there, or a chunk changed)
    assert state(path) == before_file


def test_recover_never_deletes_or_writes_through_a_symlinked_group(tmp_path: Path) -> None:
    """A journal naming keys below a group that is a symlink (planted after the crash): recover refuses, and
    neither deletes the files it leads to nor writes the journal's bytes into them."""
    path = write_nwb(tmp_path / "f.nwb.zarr")
    interrupted_append(path)
    project = tmp_path / "project"
    project.mkdir()
    (project / "results.csv").write_text("precious results\n")
    (project / "notes.txt").write_text("keep me\n")
    entries = path / JOURNAL
    (entries / "saved").mkdir(exist_ok=True)
    (entries / "saved" / "acquisition%2Fresults.csv").write_bytes(b"the journal's bytes")
    (entries / "absent").mkdir(exist_ok=True)
    (entries / "absent" / "acquisition%2Fnotes.txt").write_bytes(b"")
    shutil.rmtree(path / "acquisition")
    os.symlink(project, path / "acquisition")
    before_project = state(project)
    with pytest.raises(UnsafeDataError) as caught:
        bounded(recover, path)
    assert caught.value.path == str(path / "acquisition")
    assert state(project) == before_project  # (before #38: notes.txt deleted, results.csv overwritten)
    assert (entries / "root").is_file()  # the journal is kept: nothing was applied


@pytest.mark.parametrize("plant", ["fifo", "regular file"])
def test_recover_refuses_a_journal_place_that_is_no_directory(tmp_path: Path, plant: str) -> None:
    """A FIFO or a file where the journal's directory belongs: not "nothing to go back to", but our error naming it
    (before #38: IncompleteFileError saying it was the file's first write); the file is left as it is."""
    path = write_nwb(tmp_path / "f.nwb.zarr")
    interrupted_append(path)
    shutil.rmtree(path / JOURNAL)
    os.mkfifo(path / JOURNAL) if plant == "fifo" else (path / JOURNAL).write_bytes(b"")
    before = state(path)
    with pytest.raises(CorruptStoreError) as caught:
        bounded(recover, path)
    assert caught.value.path == str(path / JOURNAL)
    assert state(path) == before


def test_parallel_workers_write_through_the_guarded_store(symlinked_group: tuple[Path, Path]) -> None:
    """The store a worker process of a parallel write reopens refuses a symlinked group like the parent's."""
    from zarr.core.buffer import default_buffer_prototype

    from hdmf_zarr3.backend.write import parallel

    path, outside = symlinked_group
    before = state(outside)
    saved = dict(parallel._WORKER)
    try:
        parallel._start_worker(str(path), {}, None)
        store = parallel._WORKER["store"]
        with pytest.raises(UnsafeDataError) as caught:
            store.set_sync("acquisition/ts/data/c/0", default_buffer_prototype().buffer.from_bytes(b"\0" * 8))
        assert caught.value.path == str(path / "acquisition")
    finally:
        parallel._WORKER["pools"].close()
        parallel._WORKER.clear()
        parallel._WORKER.update(saved)
    assert state(outside) == before


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The base files the write paths copy, and the sources of the conversions (``fault_scenarios``)."""
    root = tmp_path_factory.mktemp("planted-bases")
    fault_scenarios.make_bases(root)
    return root


def _inside(target: Target) -> bool:
    return not target.beside


def _beside(target: Target) -> bool:
    return target.beside


#: Write paths that touch nothing inside a file (a zip's members are written into the archive, an HDF5 file is
#: one file, break_lock touches only the lock): swept by ``test_side_file_plants`` alone.
NOTHING_INSIDE = {"break_lock", "zip w", "zip a", "convert hdf5 to zip", "convert zarr to hdf5"}
#: The representative subset run always: each kind of plant, in the write paths the probe found writing outside.
FAST_CASES = [
    ("a adds containers", "symlink out"),
    ("r+ changes a chunk", "fifo"),
    ("a appends rows", "dangling symlink"),
    ("recover", "symlink out"),
    ("w over existing", "directory"),
    ("convert hdf5 to dir", "fifo"),
]
INSIDE_PLANTS = [(name, kind) for name in WRITE_PATHS if name not in NOTHING_INSIDE for kind in PLANTS]
#: Plants beside the file (its lock, a zip being written or appended to, the file's own name, an HDF5
#: destination): the side files' own engineer's (issue #38, slice "beside"); see the report of slice "paths".
SIDE_FILE_PLANTS = [(name, kind) for name in WRITE_PATHS for kind in PLANTS]


def _assert_sweep(bases: Path, scratch: Path, name: str, kind: str, chosen: Callable[[Target], bool]) -> None:
    runs, failures = sweep(bases, scratch, name, kind, chosen)
    assert runs, f"{name}: nothing traced to plant at"
    assert not failures, f"{len(failures)} of {runs} plants failed:\n  " + "\n  ".join(failures)


@pytest.mark.parametrize(("name", "kind"), FAST_CASES)
def test_planted_paths_inside_the_file(bases: Path, tmp_path: Path, name: str, kind: str) -> None:
    _assert_sweep(bases, tmp_path, name, kind, _inside)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "kind"), INSIDE_PLANTS)
def test_every_traced_path_inside_the_file(bases: Path, tmp_path: Path, name: str, kind: str) -> None:
    _assert_sweep(bases, tmp_path, name, kind, _inside)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "kind"), SIDE_FILE_PLANTS)
def test_side_file_plants(bases: Path, tmp_path: Path, name: str, kind: str) -> None:
    _assert_sweep(bases, tmp_path, name, kind, _beside)
