"""Converting from an HDF5 file whose reads fail (issue #27): the k-th read-side h5py call (opening or closing
the source, looking up a group, dataset or attribute, reading a dataset; ``tests/h5_faults.py`` ``READ_CALLS``)
raises an I/O error or a RuntimeError. The error is ours (``StoreError``), naming the source file, and
the node when the failing call was about one; it does not blame the destination. A new Zarr destination is
absent or refused as incomplete; an HDF5 destination that
existed is as it was, byte for byte.

The default run tries every other call of the opening (which reads the namespaces: about 40 calls) and every
13th call after it, and always the last (closing the source), so that every kind of call is tried in every
phase; every index is tried in the sweep marked ``slow``.
"""

from __future__ import annotations

import errno
import functools
import os
import subprocess
import sys
from pathlib import Path

import pytest
from h5_faults import READ_CALLS, H5Faults
from nwb_factories import small_nwbfile
from pynwb import NWBHDF5IO

from hdmf_zarr3 import NWBZarrIO, StoreError, convert
from hdmf_zarr3.errors import IncompleteFileError

_FAULTS = {
    "EIO": lambda: OSError(errno.EIO, "Input/output error"),
    "runtime": lambda: RuntimeError("Can't read data (inflate() failed)"),  # as h5py reports a damaged chunk
    "interrupt": KeyboardInterrupt,  # Ctrl-C, also when it lands in a thread reading the source
}
#: Seconds a sweep with Ctrl-C may take in its own process, per conversion (it once hung a conversion for good)
_INTERRUPT_SECONDS = 5


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("src") / "s.nwb"
    with NWBHDF5IO(path, "w") as io:
        io.write(small_nwbfile(50))
    return path


def _calls(source: Path, name: str) -> int:
    out = source.parent / f"count-{os.getpid()}" / name
    out.parent.mkdir(exist_ok=True)
    with H5Faults(calls=READ_CALLS) as faults:
        convert(source, out)
    assert faults.calls > 40
    return faults.calls


@functools.cache
def _opening(source: Path) -> int:
    """How many read-side calls opening the source makes (HDMF reads its namespaces from files it closes)."""
    with H5Faults(calls=READ_CALLS) as faults:
        NWBHDF5IO(source, "r").close()
    return faults.calls - 1


def _check(source: Path, dst: Path, old: bytes | None, exc: BaseException | None, fault: str, k: int, at: str) -> None:
    label = f"{fault} at {at}"
    assert exc is not None, f"{label}: went unnoticed"
    if fault == "interrupt":
        _check_interrupted(dst, old, exc, label, at)
        return
    source_call = "(Dataset." in at and k > _opening(source)
    assert isinstance(exc, StoreError), f"{label}: not ours: {exc!r}"
    assert str(source) in str(exc), f"{label}: the source is not named: {exc}"
    assert "reading the HDF5 file" in str(exc), f"{label}: {exc}"
    assert getattr(exc, "path", None) is None or exc.path.startswith("/"), f"{label}: {exc}"
    if source_call:  # (not the namespaces' reads during the opening: their file is closed by then)
        assert exc.path is not None and exc.path != "/", f"{label}: the node is not named: {exc}"
    finished = str(exc).endswith(" finished")  # (closing the source failed, after the file was written)
    if finished:
        assert "(File.close)" in at, f"{label}: {exc}"
        with (NWBHDF5IO if dst.suffix == ".nwb" else NWBZarrIO)(dst, mode="r") as io:
            assert len(io.read().acquisition["ts"].data) == 50
    elif old is not None:
        assert dst.read_bytes() == old, f"{label}: the old file changed"
        assert sorted(p.name for p in dst.parent.iterdir()) == [dst.name], f"{label}: left beside it"
    elif dst.exists():
        with pytest.raises(IncompleteFileError):
            with NWBZarrIO(dst, mode="r") as io:
                io.read()


def _check_interrupted(dst: Path, old: bytes | None, exc: BaseException, label: str, at: str) -> None:
    """Ctrl-C ends the conversion with the KeyboardInterrupt itself, after the cleanup."""
    assert type(exc) is KeyboardInterrupt, f"{label}: not the interrupt: {exc!r}"
    assert sorted(p.name for p in dst.parent.iterdir()) in ([], [dst.name]), f"{label}: left beside it"
    if old is not None:
        assert dst.read_bytes() == old, f"{label}: the old file changed"
    elif dst.exists() and "(File.close)" in at:  # (the source closes after the file was written: it may be whole)
        with NWBZarrIO(dst, mode="r") as io:
            assert len(io.read().acquisition["ts"].data) == 50
    elif dst.exists():
        with pytest.raises(IncompleteFileError):
            with NWBZarrIO(dst, mode="r") as io:
                io.read()


def _sweep(source: Path, tmp_path: Path, name: str, indices: list[int], fault: str, existing: bool) -> None:
    failures = []
    for k in indices:
        where = tmp_path / f"{fault}-{k}"
        where.mkdir()
        dst = where / name
        old = None
        if existing:
            with NWBHDF5IO(dst, "w") as io:
                io.write(small_nwbfile(7))
            old = dst.read_bytes()
        exc: BaseException | None = None
        with H5Faults(fail_at=k, fault=_FAULTS[fault], calls=READ_CALLS) as faults:
            try:
                convert(source, dst)
            except BaseException as caught:  # noqa: BLE001 -- judged below
                exc = caught
        try:
            _check(source, dst, old, exc, fault, k, f"call {k} ({faults.failed})")
        except AssertionError as error:
            failures.append(str(error).splitlines()[0])
    assert not failures, f"{len(failures)} of {len(indices)}:\n" + "\n".join(failures)


def _spread(total: int) -> list[int]:
    return sorted({*range(1, 41, 2), *range(41, total, 13), total})


#: (HDF5 → HDF5, where both files are open at once and h5py's calls are counted per file:
#: tests/hdf5/test_hdf5_to_hdf5_faults.py)
_TARGETS = [("out.nwb.zarr", False)]


def _run_sweep(source: Path, tmp_path: Path, name: str, indices: list[int], fault: str, existing: bool) -> None:
    """:func:`_sweep`; with Ctrl-C in a process of its own, ended after ``_INTERRUPT_SECONDS`` a conversion (at
    least a minute), so that a conversion that hangs fails the test instead of hanging the suite."""
    if fault != "interrupt":
        _sweep(source, tmp_path, name, indices, fault, existing)
        return
    here = Path(__file__)
    code = (
        "import importlib.util, sys\n"
        "from pathlib import Path\n"
        f"sys.path.insert(0, {str(here.parent.parent)!r})\n"
        f"spec = importlib.util.spec_from_file_location('source_faults', {str(here)!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        f"module._sweep(Path({str(source)!r}), Path({str(tmp_path)!r}), {name!r}, {indices!r},"
        f" 'interrupt', {existing!r})\n"
    )
    timeout = max(60, _INTERRUPT_SECONDS * len(indices))
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"Ctrl-C at a read-side call: {len(indices)} conversions did not end within {timeout} s")
    assert done.returncode == 0, done.stderr[-4000:]


@pytest.mark.parametrize("fault", sorted(_FAULTS))
@pytest.mark.parametrize(("name", "existing"), _TARGETS, ids=["to-zarr"])
def test_a_failing_source_is_named(source, tmp_path, name, existing, fault):
    _run_sweep(source, tmp_path, name, _spread(_calls(source, name)), fault, existing)


@pytest.mark.slow
@pytest.mark.parametrize("fault", sorted(_FAULTS))
@pytest.mark.parametrize(("name", "existing"), _TARGETS, ids=["to-zarr"])
def test_every_source_call_failing(source, tmp_path, name, existing, fault):
    total = _calls(source, name)
    _run_sweep(source, tmp_path, name, list(range(1, total + 1)), fault, existing)
