"""Writes touch only regular files and directories inside the file (issue #38): a symlink, a dangling symlink, a
FIFO or a directory planted where a write goes is refused with our error naming it, nothing outside the file
changes, nothing hangs, and the file is as before.

The first tests are the probe's cases (a group directory symlinked out of the file, written through by modes
``a`` and ``r+`` and by ``recover``). The harness below them traces every path each write path touches in a real
run (:mod:`path_trace`) and plants at each one, in turn, each kind of plant.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

import pytest
from pynwb import TimeSeries
from writing import write_nwb

from hdmf_zarr3 import NWBZarrIO, recover
from hdmf_zarr3.errors import HdmfZarrError, UnsafeDataError

JOURNAL = "__hdmf_zarr3_journal"


def bounded(function, *args, seconds: float = 60.0):
    """``function(*args)`` run in a thread: its value, or its exception raised here; the test fails (instead of
    hanging) when it has not ended within ``seconds``."""
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["value"] = function(*args)
        except BaseException as exc:  # handed to the test
            outcome["error"] = exc

    worker = threading.Thread(target=run, daemon=True, name="planted-path-case")
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"{getattr(function, '__name__', function)} blocked for more than {seconds} s"
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome.get("value")


def state(directory: Path) -> dict[str, object]:
    """Everything below ``directory``: each file's bytes, each symlink's target, each FIFO and directory."""
    out: dict[str, object] = {}
    for base, dirs, names in os.walk(directory):
        for name in dirs + names:
            path = os.path.join(base, name)
            key = os.path.relpath(path, directory)
            info = os.lstat(path)
            if os.path.islink(path):
                out[key] = ("symlink", os.readlink(path))
            elif os.path.isdir(path):
                out[key] = "directory"
            elif os.path.isfile(path):
                with open(path, "rb") as handle:
                    out[key] = handle.read()
            else:
                out[key] = ("special", info.st_mode)
    return out


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
    _interrupted_append(path)
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


def _interrupted_append(path: Path) -> None:
    """Leave ``path`` as an append killed half way would: journal kept, root marked, new nodes written."""
    from hdmf_zarr3.storage.stores import opening as stores

    commit = stores.StoreHandle.commit
    stores.StoreHandle.commit = lambda self: None  # the commit never happens: as if killed before it
    try:
        io = NWBZarrIO(path, mode="a")
        nwb = io.read()
        nwb.add_acquisition(TimeSeries(name="late", data=[1.0, 2.0, 3.0], unit="V", rate=1.0))
        nwb.add_trial(start_time=7.0, stop_time=8.0)
        io.write(nwb)
        io.store_handle.lock.release()
        io._open_file.handle = None  # dropped without closing, like a killed process
    finally:
        stores.StoreHandle.commit = commit
    assert (path / JOURNAL / "root").is_file()
    json.loads((path / JOURNAL / "root").read_bytes())


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
