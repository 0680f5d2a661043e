"""Each private name of another library is reached from one adapter module, checked against the library here.

:data:`ADAPTERS` says, for every private name of another library the package reaches (``x._name``, or
``getattr(x, "_name")``, on something not ``self``/``cls``), which library owns it and the one module that
reaches it. The source is read with ``ast``: a second module reaching the same name, or a private name of a
library with no adapter, fails :func:`test_each_library_private_is_reached_from_its_adapter_only`. Then one probe
per name (:data:`PROBES`) uses the adapter, or the name itself, on the installed library: a library that renames
or changes the name fails here, not in a user's conversion. (zarr's private modules are
``tests/project/test_zarr_adapter.py``'s.)
"""

from __future__ import annotations

import ast
import inspect
import threading
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import h5py
import numpy as np
import pytest
from source_tree import PACKAGE

from .test_no_reaching_back import THIRD_PARTY_PRIVATES, _private_reads

#: private name -> (what it is, the one module of the package that reaches it).
ADAPTERS = {
    "_file": ("hdmf HDF5IO's open h5py.File", "integrations/hdmf_private.py"),
    "_get_data": ("hdmf GenericDataChunkIterator's region read", "integrations/hdmf_private.py"),
    "_check_indices_in_bounds": ("hdmf DynamicTableRegion's bounds check (replaced)", "integrations/hdmf_shims.py"),
    "_is_owned": ("h5py's global lock: held by this thread?", "integrations/h5py_lock.py"),
    "_filters": ("h5py Dataset's filter pipeline", "h5py_adapters/h5py_private.py"),
    "_meta": ("dask Array's chunk type", "integrations/dask_arrays.py"),
    "_register_atexit": ("CPython threading's hook before thread pools stop", "storage/stores/pools.py"),
    "_store": ("zarr WrapperStore's wrapped store", "storage/stores/zarr_adapter.py"),
    "_chunk_grid": ("zarr AsyncArray's chunk grid", "storage/stores/zarr_adapter.py"),
    "_set_selection": ("zarr AsyncArray's assignment coroutine", "storage/stores/zarr_adapter.py"),
}
#: Private names of our own objects (markers we set, our stores' state), not another library's.
OURS = {"_hdmf_zarr3_checked", "_documents", "_bounds"}


def private_names_reached(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Each private name read on something other than ``self``/``cls`` -> the modules (relative paths) reading it."""
    found: dict[str, set[str]] = defaultdict(set)
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        for _, expression in _private_reads(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            found[expression.rpartition(".")[2]].add(relative)
    return found


def test_the_scan_sees_every_way_of_reaching_a_private(tmp_path):
    (tmp_path / "a.py").write_text("def f(io):\n    return io._file, getattr(io, '_meta')\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("class C:\n    def f(self):\n        return self._file, x._file\n", encoding="utf-8")
    assert private_names_reached(tmp_path) == {"_file": {"a.py", "b.py"}, "_meta": {"a.py"}}


def test_every_allowed_private_is_an_adapters_or_ours():
    names = {expression.rpartition(".")[2] for _, expression in THIRD_PARTY_PRIVATES}
    assert names - OURS - set(ADAPTERS) == set()


def test_each_library_private_is_reached_from_its_adapter_only():
    reached = private_names_reached()
    wrong = {
        name: sorted(modules)
        for name, modules in reached.items()
        if name not in OURS and modules != {ADAPTERS.get(name, ("", "(no adapter)"))[1]}
    }
    assert wrong == {}


def _hdf5io_file(tmp_path: Path) -> None:
    from hdmf.backends.hdf5 import HDF5IO

    from hdmf_zarr3.integrations import hdf5io_file

    with h5py.File(tmp_path / "f.h5", "w"):
        pass
    io = HDF5IO(str(tmp_path / "f.h5"), mode="r")
    try:
        assert isinstance(hdf5io_file(io), h5py.File) and hdf5io_file(io).filename == str(tmp_path / "f.h5")
    finally:
        io.close()


def _iterator_block(tmp_path: Path) -> None:
    from hdmf.data_utils import GenericDataChunkIterator

    from hdmf_zarr3.integrations import iterator_block

    assert list(inspect.signature(GenericDataChunkIterator._get_data).parameters) == ["self", "selection"]
    assert "_get_data" in GenericDataChunkIterator.__abstractmethods__

    class Rows(GenericDataChunkIterator):
        def __init__(self, values: np.ndarray):
            self.values = values
            super().__init__(buffer_shape=(2, 3), chunk_shape=(2, 3))

        def _get_data(self, selection: tuple[slice, ...]) -> np.ndarray:
            return self.values[selection]

        def _get_maxshape(self) -> tuple[int, ...]:
            return self.values.shape

        def _get_dtype(self) -> np.dtype:
            return self.values.dtype

    values = np.arange(12).reshape(4, 3)
    assert np.array_equal(iterator_block(Rows(values), (slice(1, 3), slice(0, 2))), values[1:3, 0:2])


def _region_bounds(tmp_path: Path) -> None:
    from hdmf.common.table import DynamicTableRegion

    from hdmf_zarr3.integrations.hdmf_shims import REGION_CHECK_PARAMETERS

    method = DynamicTableRegion.__dict__["_check_indices_in_bounds"]
    assert tuple(inspect.signature(method).parameters) == REGION_CHECK_PARAMETERS


def _h5py_lock(tmp_path: Path) -> None:
    from h5py._objects import phil

    from hdmf_zarr3.integrations import h5py_lock_released

    assert not phil._is_owned()
    with phil:
        assert phil._is_owned()
        with h5py_lock_released():
            assert not phil._is_owned()  # let go while our read runs
        assert phil._is_owned()
    assert not phil._is_owned()


def _h5py_filters(tmp_path: Path) -> None:
    from hdmf_zarr3.h5py_adapters import dataset_filters

    with h5py.File(tmp_path / "f.h5", "w") as file:
        dset = file.create_dataset("x", data=np.arange(100), chunks=(10,), compression="gzip", shuffle=True)
        assert {"gzip", "shuffle"} <= set(dataset_filters(dset))
        assert dataset_filters(file.create_dataset("y", data=np.arange(3))) == {}


def _dask_meta(tmp_path: Path) -> None:
    import dask.array

    assert isinstance(dask.array.zeros(3, chunks=2)._meta, np.ndarray)


def _register_atexit(tmp_path: Path) -> None:
    assert callable(threading._register_atexit)  # type: ignore[attr-defined]
    assert list(inspect.signature(threading._register_atexit).parameters)[0] == "func"  # type: ignore[attr-defined]


def _wrapped_store(tmp_path: Path) -> None:
    from zarr.storage import MemoryStore, WrapperStore

    inner = MemoryStore()
    assert WrapperStore(inner)._store is inner


def _zarr_setter(tmp_path: Path) -> None:
    import zarr

    array = zarr.create_array(zarr.storage.MemoryStore(), shape=(4,), chunks=(2,), dtype="int8")
    target = array.async_array
    assert target._chunk_grid is not None
    assert list(inspect.signature(target._set_selection).parameters)[:2] == ["indexer", "value"]


#: private name -> its probe (see the module docstring).
PROBES: dict[str, Callable[[Path], None]] = {
    "_file": _hdf5io_file,
    "_get_data": _iterator_block,
    "_check_indices_in_bounds": _region_bounds,
    "_is_owned": _h5py_lock,
    "_filters": _h5py_filters,
    "_meta": _dask_meta,
    "_register_atexit": _register_atexit,
    "_store": _wrapped_store,
    "_chunk_grid": _zarr_setter,
    "_set_selection": _zarr_setter,
}


def test_every_adapter_has_a_probe():
    assert set(PROBES) == set(ADAPTERS)


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_the_library_still_has_it(name, tmp_path):
    PROBES[name](tmp_path)
