"""Plants at every side file beside a file (issue #38, point 1 beside the file): the write lock ``<x>.lock`` of a
directory and of a zip, ``<zip>.partial`` (the zip being packed), ``<zip>.appending`` (the record of a change
added in place), the working directories ``<x>.<random>.partial/`` (of a zip's writer and of ``w`` over a
directory: planted at the first name ``tempfile`` would draw) and the temporary of an HDF5 destination.

At each, in turn, a symlink to a file outside, a dangling symlink leading outside, a FIFO and a directory
holding a file; then each operation that touches it: ``w`` over the file, ``w`` of a new file, ``a``,
``recover`` (with and without ``break_lock``), ``break_lock``, ``convert`` to the file. Whatever happens:
nothing outside changes (the sentinel byte for byte, the dangling target still absent), nothing hangs (a
timeout fails the test), the planted directory's file is kept, and either the operation raises our typed error
naming the planted path with the file as it was, byte for byte, or it succeeds without writing through the plant
(the file then reads as it should, and the plant is still there, or was unlinked as a link by ``break_lock``).
"""

from __future__ import annotations

import os
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
KINDS = {"dir": "f.nwb.zarr", "zip": "f.nwb.zarr.zip"}
TIMEOUT = 60.0


def _tree(values: list[int]) -> GroupBuilder:
    return GroupBuilder("root", datasets={"d": DatasetBuilder("d", values)})


def _append(path: Path) -> None:
    with ZarrIO(path, mode="a") as io:
        io.read_builder()["d"].data.append(3)


#: operation -> (what it does to the file at ``path``, given the HDF5 source; what ``d`` holds after it succeeds,
#: ``None``: the file as it was byte for byte; whether it needs the file to exist first)
OPERATIONS: dict[str, tuple[Callable[[Path, Path], Any], list[int] | None, bool]] = {
    "w-over": (lambda path, source: write_builder(path, _tree([7])), [7], True),
    "w-new": (lambda path, source: write_builder(path, _tree([7])), [7], False),
    "a": (lambda path, source: _append(path), [0, 1, 2, 3], True),
    "recover": (lambda path, source: recover(path), None, True),
    "recover-break": (lambda path, source: recover(path, break_lock=True), None, True),
    "break_lock": (lambda path, source: break_lock(path), None, True),
    "convert": (lambda path, source: convert(source, path), [], False),
}


@pytest.fixture(scope="module")
def hdf5_source(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("source") / "source.nwb"
    with NWBHDF5IO(str(path), mode="w") as io:
        io.write(small_nwbfile())
    return path


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
    """``tempfile`` draws ``first`` (the names listed) before its random names: a plant there is met."""
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


def _side_path(side: str, path: Path) -> Path:
    return {
        "lock": Path(f"{path}.lock"),
        "zip-partial": Path(f"{path}.partial"),
        "zip-appending": Path(f"{path}.appending"),
        "working-directory": Path(f"{path}.pl4nted.partial"),
    }[side]


def run_planted(side: str, kind: str, plant: str, operation: str, tmp_path: Path, source: Path, names: list[str]):
    """One case of the harness (see the module's description)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "sentinel.txt").write_text("the user's sentinel")
    home = tmp_path / "home"
    home.mkdir()
    path = home / KINDS[kind]
    call, expected, needs_file = OPERATIONS[operation]
    if needs_file:
        write_builder(path, _tree([0, 1, 2]))
    before = files(path) if path.exists() else None
    where = _side_path(side, path)
    _plant(where, plant, outside)
    planted_kind = _kind_at(where)
    names.append("pl4nted")  # the first working directory tempfile would make is the planted one
    error = _bounded(lambda: call(path, source), [where] if plant == "fifo" else [])
    assert (outside / "sentinel.txt").read_text() == "the user's sentinel"
    assert sorted(p.name for p in outside.iterdir()) == ["sentinel.txt"]
    if plant == "directory":
        assert (where / "kept.txt").read_text() == "the user's"
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
    elif operation != "convert":
        with ZarrIO(path, mode="r") as io:
            assert list(io.read_builder()["d"].data[:]) == expected
    else:
        with ZarrIO(path, mode="r") as io:
            assert "acquisition" in io.read_builder()


@pytest.mark.parametrize("operation", list(OPERATIONS))
@pytest.mark.parametrize("plant", PLANTS)
@pytest.mark.parametrize("kind", list(KINDS))
def test_a_plant_at_the_lock(tmp_path, hdf5_source, fixed_temporary_names, kind, plant, operation):
    run_planted("lock", kind, plant, operation, tmp_path, hdf5_source, fixed_temporary_names)
