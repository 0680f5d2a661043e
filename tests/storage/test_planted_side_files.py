"""Plants at every side file beside a file (issue #38, point 1 beside the file): the write lock ``<x>.lock`` of a
directory and of a zip, ``<zip>.partial`` (the zip being packed), ``<zip>.appending`` (the record of a change
added in place), the working directories ``<x>.<random>.partial/`` (of a zip's writer and of ``w`` over a
directory: planted at the first name ``tempfile`` would draw) and the temporary of an HDF5 destination.

At each, in turn, a symlink to a file outside, a dangling symlink leading outside, a FIFO and a directory
holding a file; then each operation that touches it: ``w`` over the file, ``w`` of a new file, ``a``,
``recover`` (with and without ``break_lock``), ``break_lock``, ``convert`` to the file. Whatever happens:
nothing outside changes (the sentinel byte for byte, the dangling target still absent), nothing hangs (a
timeout fails the test), the planted directory's file is kept, the lock is released, and either the operation
raises our typed error naming the planted path with the file as it was, byte for byte, or it succeeds without
writing through the plant (the file then reads as it should, and the plant is still there, or was unlinked as a
link by ``break_lock``).
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from file_bytes import files
from hdmf.build import DatasetBuilder, GroupBuilder
from nwb_factories import small_nwbfile
from pynwb import NWBHDF5IO
from writing import write_builder

from hdmf_zarr3 import HdmfZarrError, ZarrIO, break_lock, convert, recover

PLANTS = ("symlink-out", "dangling", "fifo", "directory")
KINDS = {"dir": "f.nwb.zarr", "zip": "f.nwb.zarr.zip", "hdf5": "f.nwb"}
TIMEOUT = 60.0


def _tree(values: list[int]) -> GroupBuilder:
    return GroupBuilder("root", datasets={"d": DatasetBuilder("d", values)})


def _append(path: Path) -> None:
    with ZarrIO(path, mode="a") as io:
        io.read_builder()["d"].data.append(3)


def _convert(path: Path, sources: dict[str, Path]) -> None:
    convert(sources["zarr" if path.suffix == ".nwb" else "hdf5"], path)


#: operation -> (what it does to the file at ``path``, given the sources of a conversion; what ``d`` holds after it
#: succeeds, ``None``: the file as it was byte for byte, ``[]``: a converted NWB file; whether the file exists first)
OPERATIONS: dict[str, tuple[Callable[[Path, dict[str, Path]], Any], list[int] | None, bool]] = {
    "w-over": (lambda path, sources: write_builder(path, _tree([7])), [7], True),
    "w-new": (lambda path, sources: write_builder(path, _tree([7])), [7], False),
    "a": (lambda path, sources: _append(path), [0, 1, 2, 3], True),
    "recover": (lambda path, sources: recover(path), None, True),
    "recover-break": (lambda path, sources: recover(path, break_lock=True), None, True),
    "break_lock": (lambda path, sources: break_lock(path), None, True),
    "convert-new": (_convert, [], False),
    "convert-over": (_convert, [], True),
}


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> dict[str, Path]:
    """An NWB file in HDF5 and in Zarr, to convert from."""
    directory = tmp_path_factory.mktemp("source")
    with NWBHDF5IO(str(directory / "source.nwb"), mode="w") as io:
        io.write(small_nwbfile())
    convert(directory / "source.nwb", directory / "source.nwb.zarr")
    return {"hdf5": directory / "source.nwb", "zarr": directory / "source.nwb.zarr"}


def _plant(where: Path, plant: str, outside: Path) -> None:
    if plant == "symlink-out":
        where.symlink_to(outside / "sentinel.txt")
    elif plant == "dangling":
        where.symlink_to(outside / "absent")
    elif plant == "fifo":
        os.mkfifo(where)
    else:
        where.mkdir()
        (where / "kept.txt").write_text("the user's")


def _kind_at(where: Path) -> int | None:
    try:
        return stat.S_IFMT(os.lstat(where).st_mode)
    except FileNotFoundError:
        return None


def _bounded(call: Callable[[], Any], fifos: list[Path]) -> BaseException | None:
    """``call()``'s error (``None`` if it returns), failing the test if it has not ended after ``TIMEOUT``
    seconds (a planted FIFO is then opened for writing, so that a reader blocked on it wakes up)."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            call()
        except BaseException as exc:
            outcome.append(exc)
        else:
            outcome.append(None)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(TIMEOUT)
    if worker.is_alive():
        for fifo in fifos:
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        pytest.fail(f"still running after {TIMEOUT} s (waiting on a planted FIFO?)")
    return outcome[0]


@pytest.fixture
def fixed_temporary_names(monkeypatch) -> Iterator[list[str]]:
    """``tempfile`` draws the names listed before its random ones: a plant at the first is met."""
    drawn: list[str] = []
    original = tempfile._get_candidate_names

    class Names:
        def __init__(self) -> None:
            self.random = original()

        def __iter__(self) -> Names:
            return self

        def __next__(self) -> str:
            return drawn.pop(0) if drawn else next(self.random)

    monkeypatch.setattr(tempfile, "_get_candidate_names", Names)
    yield drawn


#: The first name ``tempfile`` draws in a case: a working directory (or an HDF5 destination's private directory)
#: planted there is met by the first writer that makes one.
PLANTED_NAME = "pl4nted"


def _side_path(side: str, path: Path) -> Path:
    return {
        "lock": Path(f"{path}.lock"),
        "zip-partial": Path(f"{path}.partial"),
        "zip-appending": Path(f"{path}.appending"),
        "working-directory": Path(f"{path}.{PLANTED_NAME}.partial"),
        "hdf5-temporary": path.parent / f".{path.name}.{PLANTED_NAME}.partial",
    }[side]


def _existing(kind: str, path: Path, sources: dict[str, Path]) -> None:
    if kind == "hdf5":
        shutil.copyfile(sources["hdf5"], path)
    else:
        write_builder(path, _tree([0, 1, 2]))


def _check_written(path: Path, expected: list[int]) -> None:
    if path.suffix == ".nwb":
        with NWBHDF5IO(str(path), mode="r") as io:
            assert "ts" in io.read().acquisition
        return
    with ZarrIO(path, mode="r") as io:
        root = io.read_builder()
        if expected:
            assert list(root["d"].data[:]) == expected
        else:
            assert "acquisition" in root


def run_planted(side: str, kind: str, plant: str, operation: str, tmp_path: Path, sources, names: list[str]):
    """One case of the harness (see the module's description)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "sentinel.txt").write_text("the user's sentinel")
    home = tmp_path / "home"
    home.mkdir()
    path = home / KINDS[kind]
    call, expected, needs_file = OPERATIONS[operation]
    if needs_file:
        _existing(kind, path, sources)
    before = files(path) if path.exists() else None
    where = _side_path(side, path)
    _plant(where, plant, outside)
    planted_kind = _kind_at(where)
    names.append(PLANTED_NAME)
    error = _bounded(lambda: call(path, sources), [where] if plant == "fifo" else [])
    assert (outside / "sentinel.txt").read_text() == "the user's sentinel"
    assert sorted(p.name for p in outside.iterdir()) == ["sentinel.txt"]
    if plant == "directory":
        assert (where / "kept.txt").read_text() == "the user's"
    if side != "lock":  # released with the error, or on close (never left for the garbage collector)
        assert not os.path.lexists(f"{path}.lock")
    if error is not None:
        if not isinstance(error, HdmfZarrError):
            raise AssertionError(f"not our typed error: {error!r}") from error
        assert str(where) in str(error), f"the error does not name {where}: {error}"
        assert (files(path) if path.exists() else None) == before
        return
    if _kind_at(where) != planted_kind:  # only break_lock may remove a lock that is not one (as a name)
        assert side == "lock" and operation in ("break_lock", "recover-break") and plant != "directory"
        assert _kind_at(where) is None
    if expected is None:
        assert files(path) == before
    else:
        _check_written(path, expected)
    if side in ("working-directory", "hdf5-temporary"):
        assert names == [], "the planted name was never drawn"


@pytest.mark.parametrize("operation", list(OPERATIONS))
@pytest.mark.parametrize("plant", PLANTS)
@pytest.mark.parametrize("kind", ["dir", "zip"])
def test_a_plant_at_the_lock(tmp_path, sources, fixed_temporary_names, kind, plant, operation):
    run_planted("lock", kind, plant, operation, tmp_path, sources, fixed_temporary_names)


@pytest.mark.parametrize("operation", list(OPERATIONS))
@pytest.mark.parametrize("plant", PLANTS)
@pytest.mark.parametrize("side", ["zip-partial", "zip-appending"])
def test_a_plant_where_a_zip_is_packed_or_its_update_recorded(
    tmp_path, sources, fixed_temporary_names, side, plant, operation
):
    run_planted(side, "zip", plant, operation, tmp_path, sources, fixed_temporary_names)


#: The writes that make a working directory beside the file (a new directory, or an append to one, is written
#: in place: it has none).
WORKING_DIRECTORIES = [
    (kind, operation)
    for kind in ("dir", "zip")
    for operation in ("w-over", "w-new", "a", "convert-new", "convert-over")
    if kind == "zip" or operation in ("w-over", "convert-over")
]


@pytest.mark.parametrize(("kind", "operation"), WORKING_DIRECTORIES)
@pytest.mark.parametrize("plant", PLANTS)
def test_a_plant_at_the_name_of_a_working_directory(tmp_path, sources, fixed_temporary_names, kind, plant, operation):
    run_planted("working-directory", kind, plant, operation, tmp_path, sources, fixed_temporary_names)


@pytest.mark.parametrize("operation", ["convert-new", "convert-over"])
@pytest.mark.parametrize("plant", PLANTS)
def test_a_plant_at_the_name_of_an_hdf5_destinations_temporary(
    tmp_path, sources, fixed_temporary_names, plant, operation
):
    run_planted("hdf5-temporary", "hdf5", plant, operation, tmp_path, sources, fixed_temporary_names)


#: Each kind of file with the writes that create one (an HDF5 file is written by a conversion only).
NEW_FILES = [
    (kind, operation)
    for kind in KINDS
    for operation in ("w-new", "a", "convert-new")
    if kind != "hdf5" or operation == "convert-new"
]


@pytest.mark.parametrize(("kind", "operation"), NEW_FILES)
@pytest.mark.parametrize("plant", ["dangling", "fifo"])
def test_a_new_file_is_never_made_through_a_dangling_symlink_nor_over_a_fifo(tmp_path, sources, kind, plant, operation):
    """At the file's own name: a symlink leading nowhere (outside) would have a new zip or HDF5 file created where it
    points; a FIFO was taken for no file (``a`` then wrote a new zip over it). Both are our error naming the path."""
    outside = tmp_path / "outside"
    outside.mkdir()
    path = tmp_path / KINDS[kind]
    _plant(path, plant, outside)
    call = OPERATIONS[operation][0] if operation != "a" else (lambda path, sources: ZarrIO(path, mode="a").close())
    error = _bounded(lambda: call(path, sources), [path] if plant == "fifo" else [])
    assert isinstance(error, HdmfZarrError) and str(path) in str(error), repr(error)
    assert list(outside.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["outside", path.name])
