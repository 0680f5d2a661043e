"""HDF5 → HDF5 conversions under faults (issue #27): the k-th h5py call about the SOURCE (opening, lookups,
attribute and dataset reads, closing) and, separately, the k-th h5py call about the DESTINATION (creating it,
groups, datasets, attributes, writes, lookups, flush, close) raises a ``RuntimeError`` (as h5py reports damaged
data), ``OSError(EIO)``, ``OSError(ENOSPC)`` or ``KeyboardInterrupt``; both files are open at once, so which
file failed is told by the h5py object the failing call was about (``tests/h5_faults.py``, ``where=``).

After each run: the error is ours (``StoreError``) naming the file that failed — ``reading the HDF5 file <src>``
for the source (and the node, for a dataset read), ``writing the HDF5 file <dst>`` for the destination — or,
for Ctrl-C, the ``KeyboardInterrupt`` itself; the destination holds exactly what it held before (nothing if
there was none, the old file byte for byte if there was), and nothing is left beside it. One exception, stated
by the error: the source failing to close after the new file was swapped in (``... the conversion to <dst>
finished``): the destination is then the new, whole file.

The default run tries the first and last calls of each side and a few between (:func:`_spread`); every call is
tried in the sweep marked ``slow`` (its runs shared among worker processes, ``tests/sweep_pool.py``).
"""

from __future__ import annotations

import errno
import functools
import os
import tempfile
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import h5py
import numpy as np
import pytest
from h5_faults import READ_CALLS, WRITE_CALLS, H5Faults, in_directory, in_file
from nwb_factories import small_nwbfile
from pynwb import NWBHDF5IO
from sweep_pool import pool, run_all

from hdmf_zarr3 import StoreError, convert

#: Every h5py call a conversion makes to read or to write a file (the side is chosen by ``where``).
CALLS = tuple(dict.fromkeys(WRITE_CALLS + READ_CALLS))

FAULTS = {
    "runtime": lambda: RuntimeError("Can't read data (inflate() failed)"),  # as h5py reports damaged data
    "EIO": lambda: OSError(errno.EIO, "Input/output error"),
    "ENOSPC": lambda: OSError(errno.ENOSPC, "No space left on device"),
    "interrupt": KeyboardInterrupt,
}
SIDES = ("source", "destination")


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("src") / "s.nwb"
    with NWBHDF5IO(path, "w") as io:
        io.write(small_nwbfile(50))
    return path


@pytest.fixture(scope="module")
def old(tmp_path_factory) -> bytes:
    """An existing destination: another NWB file, as a user would have one there."""
    path = tmp_path_factory.mktemp("old") / "old.nwb"
    with NWBHDF5IO(path, "w") as io:
        io.write(small_nwbfile(7))
    return path.read_bytes()


@pytest.fixture(scope="module")
def counts(source, tmp_path_factory) -> dict[str, int]:
    """How many h5py calls a conversion makes about each side (the second conversion of the process: the
    first loads what later ones reuse)."""
    found = {}
    for run in range(2):
        for side in SIDES:
            dst = tmp_path_factory.mktemp(f"count-{side}-{run}") / "out.nwb"
            with H5Faults(calls=CALLS, where=_where(side, source, dst)) as faults:
                convert(source, dst)
            found[side] = faults.calls
    assert found["source"] > 40 and found["destination"] > 40, found
    return found


def _where(side: str, source: Path, dst: Path):
    return in_file(source) if side == "source" else in_directory(dst.parent)


def _run(source: Path, where: Path, old: bytes | None, side: str, fault: str, k: int) -> str | None:
    """Convert ``source`` into ``where`` with call ``k`` of ``side`` failing; what is wrong, if anything."""
    where.mkdir()
    dst = where / "old.nwb"
    if old is not None:
        dst.write_bytes(old)
    exc: BaseException | None = None
    with H5Faults(fail_at=k, fault=FAULTS[fault], calls=CALLS, where=_where(side, source, dst)) as faults:
        try:
            convert(source, dst)
        except BaseException as caught:  # noqa: BLE001 -- judged below (Ctrl-C is one of the faults)
            exc = caught
    label = f"{fault} at {side} call {k} ({faults.failed})"
    try:
        assert faults.failed is not None, "the call was not made"
        _check(source, dst, old, exc, side, fault, faults.failed)
    except AssertionError as error:
        return f"{label}: {str(error).splitlines()[0]}"
    return None


def _check(
    source: Path, dst: Path, old: bytes | None, exc: BaseException | None, side: str, fault: str, failed: str
) -> None:
    assert exc is not None, "went unnoticed"
    if fault == "interrupt":
        assert type(exc) is KeyboardInterrupt, f"not the interrupt: {exc!r}"
        if side == "source" and failed == "File.close" and _whole(dst):
            return  # (Ctrl-C while the source closed, after the new file was swapped in: it is whole)
    else:
        assert isinstance(exc, StoreError), f"not ours: {exc!r}"
        message = str(exc).removeprefix(f"{exc.path}: ")
        if side == "source":
            assert message.startswith(f"reading the HDF5 file {source} failed"), f"the source is not named: {exc}"
        else:
            assert message.startswith(f"writing the HDF5 file {dst} failed"), f"the destination is not named: {exc}"
        assert exc.path is None or exc.path.startswith("/"), f"no node path: {exc.path!r}"
        if fault != "runtime":
            assert os.strerror(errno.EIO if fault == "EIO" else errno.ENOSPC) in message, message
        if side == "source" and message.endswith("the conversion to " + str(dst) + " finished"):
            # (the source failed to close after the new file was swapped in: the destination is the new file)
            assert _whole(dst), "the conversion said it finished"
            return
    assert sorted(p.name for p in dst.parent.iterdir()) == ([dst.name] if old is not None else []), "left beside it"
    if old is not None:
        assert dst.read_bytes() == old, "the old file changed"


def _whole(dst: Path) -> bool:
    """Whether ``dst`` is the whole new file (and nothing is beside it)."""
    if sorted(p.name for p in dst.parent.iterdir()) != [dst.name]:
        return False
    with NWBHDF5IO(dst, "r") as io:
        data = io.read().acquisition["ts"].data[:]
    return len(data) == 50 and bool(np.array_equal(data, np.arange(50.0)))


def _run_at(source: Path, root: Path, old: bytes | None, side: str, fault: str, k: int) -> str | None:
    """:func:`_run` in a directory of its own under ``root`` (in the test's process or a worker's)."""
    return _run(source, root / f"{fault}-{side}-{k}", old, side, fault, k)


def _sweep(
    source: Path, tmp_path: Path, old: bytes | None, side: str, fault: str, indices: list[int], workers=None
) -> None:
    run = functools.partial(_run_at, source, tmp_path, old, side, fault)
    failed = run_all(workers, run, indices) if workers else [f for f in map(run, indices) if f is not None]
    assert not failed, f"{len(failed)} of {len(indices)}:\n" + "\n".join(failed)


def _start_worker(source: Path) -> None:
    """One conversion before any is counted, as the test's process made (``counts``): calls numbered alike."""
    with tempfile.TemporaryDirectory() as where:
        convert(source, Path(where) / "warm.nwb")


@pytest.fixture(scope="module")
def workers(source) -> Iterator[ProcessPoolExecutor | None]:
    """The worker processes the exhaustive sweep shares its runs among (``sweep_pool.py``)."""
    with pool(_start_worker, source) as executor:
        yield executor


def _spread(total: int) -> list[int]:
    """The first and last calls, their neighbours, and some between (every call of a kind is in the slow sweep)."""
    return sorted({1, 2, total // 4, total // 2, 3 * total // 4, total - 1, total})


@pytest.mark.parametrize("fault", list(FAULTS))
@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("existing", [True, False], ids=["over-existing", "new"])
def test_hdf5_to_hdf5_names_the_file_that_failed(source, old, counts, tmp_path, existing, side, fault):
    _sweep(source, tmp_path, old if existing else None, side, fault, _spread(counts[side]))


@pytest.mark.slow
@pytest.mark.parametrize("fault", list(FAULTS))
@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("existing", [True, False], ids=["over-existing", "new"])
def test_hdf5_to_hdf5_every_call_failing(source, old, counts, tmp_path, existing, side, fault, workers):
    """Every call of the side, in turn (the runs shared among worker processes)."""
    _sweep(source, tmp_path, old if existing else None, side, fault, list(range(1, counts[side] + 1)), workers)


def _copy_failing(monkeypatch, source: Path, fault: BaseException, bad_sectors: bool) -> None:
    """h5py's copy of the source's ``/acquisition/ts/data`` into the destination (HDF5IO copies each dataset
    with ``Group.copy``, one HDF5 call reading one file and writing the other) fails with ``fault``; with
    ``bad_sectors``, reading that dataset fails from then on too, as it would on a disk returning EIO for it."""
    copy, read = h5py.Group.copy, h5py.Dataset.__getitem__
    in_src = in_file(source)
    failed = []

    def failing_copy(group, source, dest, *args, **kwargs):  # (as h5py's: HDF5IO passes them by name)
        if isinstance(source, h5py.Dataset) and source.name == "/acquisition/ts/data" and in_src(source.file.filename):
            failed.append(source.name)
            raise fault
        return copy(group, source, dest, *args, **kwargs)

    def failing_read(dataset, *args, **kwargs):
        if bad_sectors and failed and dataset.name == "/acquisition/ts/data":
            raise OSError(errno.EIO, "Input/output error")
        return read(dataset, *args, **kwargs)

    monkeypatch.setattr(h5py.Group, "copy", failing_copy)
    monkeypatch.setattr(h5py.Dataset, "__getitem__", failing_read)


@pytest.mark.parametrize("existing", [True, False], ids=["over-existing", "new"])
def test_a_copy_failing_on_the_source_names_the_source(source, old, tmp_path, monkeypatch, existing):
    """The copy fails and the source's data cannot be read (its disk): the source and the node are named."""
    dst = tmp_path / "old.nwb"
    if existing:
        dst.write_bytes(old)
    _copy_failing(monkeypatch, source, OSError(errno.EIO, "Input/output error"), bad_sectors=True)
    with pytest.raises(StoreError) as caught:
        convert(source, dst)
    assert str(caught.value).startswith(f"/acquisition/ts/data: reading the HDF5 file {source} failed")
    assert caught.value.path == "/acquisition/ts/data"
    assert sorted(p.name for p in tmp_path.iterdir()) == (["old.nwb"] if existing else [])
    assert not existing or dst.read_bytes() == old


@pytest.mark.parametrize("fault", ["ENOSPC", "runtime"])
def test_a_copy_failing_on_the_destination_names_the_destination(source, old, tmp_path, monkeypatch, fault):
    """The copy fails and the source's data reads well: the destination failed (a full disk, say)."""
    dst = tmp_path / "old.nwb"
    dst.write_bytes(old)
    _copy_failing(monkeypatch, source, FAULTS[fault](), bad_sectors=False)
    with pytest.raises(StoreError) as caught:
        convert(source, dst)
    assert str(caught.value).startswith(f"/acquisition/ts/data: writing the HDF5 file {dst} failed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.nwb"] and dst.read_bytes() == old
