"""Bridges for places where HDMF, numcodecs or h5py need help with our lazy datasets.

Shims
-----
Importing this package changes nothing in hdmf, numcodecs or h5py. Each shim is applied explicitly, once per
process (idempotent, under a lock), when it is first needed:

- ``extend_data`` (hdmf versions :data:`EXTEND_DATA_HDMF`), by :func:`activate`, which the first
  :class:`~hdmf_zarr3.ZarrIO` created calls with the backend's lazy dataset class (only a ZarrIO hands HDMF our
  lazy datasets; the class is passed in because this adapter sits below the backend and never imports it). hdmf's
  ``extend_data`` knows lists, numpy arrays, ``DataIO``, ``TermSetWrapper`` and ``h5py.Dataset`` and raises
  ``ValueError`` ("Data cannot extend object of type ...") for any other lazy dataset, so
  ``VectorData.extend`` on a table read from Zarr would fail. Every hdmf module that bound the name
  (:data:`EXTEND_DATA_SITES`, and any other loaded ``hdmf`` module still holding the original) gets
  :func:`extend_data`, which extends our datasets in place and hands everything else to hdmf's original.
  :func:`activate` also registers our lazy datasets with hdmf's ``ObjectMapper.no_convert`` (a public hdmf
  hook, so the datasets read are handed to containers as they are, not converted).
- ``VectorIndex.add_vector`` (hdmf versions :data:`ADD_VECTOR_HDMF`), by :func:`activate` too. hdmf widens
  an index's integer type in memory as its values grow (``uint8`` holds 255), but only for lists and numpy
  arrays: for a lazy dataset it raises ``ValueError`` ("cannot adjust precision") as soon as the column
  holds more than 255 elements, whatever the stored type, after the values were appended and before the
  index was (a table left with columns of different lengths, which a later ``write()`` stored). For our
  lazy datasets :func:`add_vector` instead has the dataset widen its stored type first, if the new index
  needs it (``widen_to_hold``: the array rewritten, journaled), then appends the values and the index, as
  hdmf does; any other index goes to hdmf's original.
- ``DynamicTableRegion._check_indices_in_bounds`` (hdmf versions :data:`REGION_BOUNDS_HDMF`), by :func:`activate`
  too. hdmf checks a region's indices against its table by reading the region's data whole (``data[:]``) while
  ``read()`` builds the containers, so a file of a few KiB declaring a region of 2**33 rows (missing chunks read
  as the fill value) asked for 64 GiB. For our lazy datasets :func:`check_region_bounds` reads the data in
  blocks of :data:`REGION_BLOCK` elements (min and max per block), stops at the first block holding indices out
  of range (hdmf's message, naming those), and checks at most :data:`REGION_CHECK_LIMIT` elements in at most
  :data:`REGION_CHECK_CHUNKS` chunks (zarr's cost per chunk, missing ones too, dwarfs its cost per value when the
  chunks are small): past them it
  warns that the rest was not checked (on read hdmf only warns about indices out of range anyway; indexing the
  region still refuses them). Any other data goes to hdmf's original. :func:`activate` checks the method's
  signature first (``RuntimeError`` if hdmf renamed or changed it: the shim would otherwise do nothing).
- the blosc frame check (:func:`hdmf_zarr3.storage.stores.decoding.install`), when this package first opens a store
  (``open_store``, so by every ZarrIO and the CLI): numcodecs decodes a blosc frame by the sizes its header
  declares, reading past the end of a truncated frame (numcodecs issue #228, open). Not version-gated: the
  check is harmless where numcodecs validates frames itself.
- :func:`.h5py_lock.h5py_lock_released` (its own module, which the lazy datasets import), the only code
  touching h5py's private global lock, applied around each read of a lazy dataset (not a patch: it does
  nothing unless this thread holds that lock).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import math
import re
import sys
import threading
import warnings
from typing import Any

import hdmf.data_utils
import numpy as np

__all__ = ["activate", "add_vector", "check_region_bounds", "extend_data", "extend_data_needed", "version_in"]

#: hdmf versions (``(major, minor)``, lower bound included, upper excluded) whose ``extend_data`` does not
#: know lazy datasets other than ``h5py.Dataset``: from the oldest hdmf this package supports to the newest
#: checked (6.2); re-check and widen when a new major version ships.
EXTEND_DATA_HDMF = ((6, 2), (7, 0))
#: The hdmf modules that import ``extend_data`` by name (``from .data_utils import extend_data``) and
#: call it through that binding: ``Data.extend``/``DataIO.extend`` (data_utils), ``Data.extend``
#: (container), ``TermSetWrapper.extend`` (term_set).
EXTEND_DATA_SITES = ("hdmf.data_utils", "hdmf.container", "hdmf.term_set")

#: hdmf versions whose ``VectorIndex.add_vector`` cannot widen an index that is not a list or numpy array
#: (:func:`add_vector`); the same range as :data:`EXTEND_DATA_HDMF`, checked the same way.
ADD_VECTOR_HDMF = ((6, 2), (7, 0))

#: hdmf versions whose ``DynamicTableRegion`` reads its data whole to check it (:func:`check_region_bounds`).
REGION_BOUNDS_HDMF = ((6, 2), (7, 0))
#: The elements of a region's data read at once by :func:`check_region_bounds` (8 MiB of int64).
REGION_BLOCK = 2**20
#: The most elements of a region's data :func:`check_region_bounds` checks (512 MiB of int64, read a block at a
#: time): a bound on the time a file declaring a huge region makes ``read()`` take.
REGION_CHECK_LIMIT = 2**26
#: The most chunks (along the rows) of a region's data :func:`check_region_bounds` reads: 2**33 rows in chunks of
#: 32 took minutes for 2**26 values.
REGION_CHECK_CHUNKS = 2**14
#: The most chunks one block read by :func:`check_region_bounds` spans.
REGION_BLOCK_CHUNKS = 2**10
#: The parameters of hdmf's ``DynamicTableRegion._check_indices_in_bounds`` the shim replaces.
REGION_CHECK_PARAMETERS = ("self", "data", "table")

_ORIGINAL = getattr(hdmf.data_utils.extend_data, "__wrapped__", hdmf.data_utils.extend_data)
_LOCK = threading.Lock()
_ACTIVE = False
#: The lazy dataset classes :func:`extend_data` extends in place (set by :func:`activate`).
_EXTENDED_IN_PLACE: tuple[type[Any], ...] = ()


def extend_data(data: Any, arg: Any) -> Any:
    """hdmf's ``extend_data``, extending our lazy datasets in place (hdmf's original raises ``ValueError`` on
    them, see the module docstring); any other ``data`` goes to hdmf's original."""
    if isinstance(data, _EXTENDED_IN_PLACE):
        data.extend(arg)
        return data
    return _ORIGINAL(data, arg)


extend_data.__wrapped__ = _ORIGINAL  # type: ignore[attr-defined]


def add_vector(index: Any, arg: Any, **kwargs: Any) -> None:
    """hdmf's ``VectorIndex.add_vector`` for an index whose data is one of our lazy datasets: the stored type
    is widened first if the index about to be appended needs it, then the values and the index are appended
    (see the module docstring); any other index goes to hdmf's original."""
    from hdmf.common.table import VectorIndex

    original = getattr(VectorIndex.add_vector, "__wrapped__", VectorIndex.add_vector)
    if not isinstance(index.data, _EXTENDED_IN_PLACE):
        return original(index, arg, **kwargs)
    if not hasattr(arg, "__len__"):
        arg = list(arg)
    index.data.widen_to_hold(len(index.target) + len(arg))  # before anything is appended to any column
    if isinstance(index.target, VectorIndex):
        for value in arg:
            index.target.add_vector(value)
    else:
        index.target.extend(arg, **kwargs)
    index.append(len(index.target))
    return None


def _install_add_vector() -> None:
    from hdmf.common.table import VectorIndex

    if getattr(VectorIndex.add_vector, "__wrapped__", None) is None:
        shim = functools.wraps(VectorIndex.add_vector)(add_vector)
        VectorIndex.add_vector = shim


def check_region_bounds(region: Any, data: Any, table: Any) -> str | None:
    """hdmf's ``DynamicTableRegion._check_indices_in_bounds`` (hdmf's message if an index of ``data`` is out of
    the rows of ``table``, else ``None``), reading our lazy datasets in blocks (see the module docstring); any
    other ``data`` goes to hdmf's original."""
    from hdmf.common.table import DynamicTableRegion

    check = DynamicTableRegion._check_indices_in_bounds
    original = getattr(check, "__wrapped__", check)
    if not table or not isinstance(data, _EXTENDED_IN_PLACE) or not data.shape:
        return original(region, data, table)
    rows = len(table)
    per_row = math.prod(data.shape[1:])
    step, chunk_rows = max(1, REGION_BLOCK // max(per_row, 1)), _chunk_rows(data)
    step = min(step - step % chunk_rows, REGION_BLOCK_CHUNKS * chunk_rows) if chunk_rows <= step else step
    checked_rows = min(data.shape[0], max(1, REGION_CHECK_LIMIT // max(per_row, 1)), REGION_CHECK_CHUNKS * chunk_rows)
    for start in range(0, checked_rows, step):
        block = np.asarray(data[start : min(start + step, checked_rows)])
        if block.size and (block.min() < 0 or block.max() >= rows):
            violators = block[(block >= rows) | (block < 0)]
            return f"DynamicTableRegion values {violators} are out of bounds for {type(table)} '{table.name}'."
    if checked_rows < data.shape[0]:
        warnings.warn(
            f"DynamicTableRegion {getattr(data, 'path', '')} has {data.shape[0]} rows: only the first "
            f"{checked_rows} were checked against the rows of '{table.name}' (REGION_CHECK_LIMIT, REGION_CHECK_CHUNKS)",
            stacklevel=2,
        )
    return None


def _chunk_rows(data: Any) -> int:
    """The rows of one chunk of ``data`` (1 if it says none)."""
    chunks = getattr(data, "chunks", None)
    return max(1, int(chunks[0])) if chunks else 1


def _install_region_bounds() -> None:
    from hdmf.common.table import DynamicTableRegion

    method = DynamicTableRegion.__dict__.get("_check_indices_in_bounds")
    if method is None or tuple(inspect.signature(method).parameters) != REGION_CHECK_PARAMETERS:
        raise RuntimeError(
            f"hdmf {getattr(hdmf, '__version__', '?')}: DynamicTableRegion._check_indices_in_bounds is not the "
            f"method {REGION_CHECK_PARAMETERS} hdmf_zarr3's region shim replaces; widen REGION_BOUNDS_HDMF only "
            "for an hdmf that has it"
        )
    if getattr(method, "__wrapped__", None) is None:
        DynamicTableRegion._check_indices_in_bounds = functools.wraps(method)(check_region_bounds)


def version_in(version: str, bounds: tuple[tuple[int, int], tuple[int, int]]) -> bool:
    """Whether ``version`` (``"6.2.0"``, ``"6.3.0.dev4"``) falls in ``bounds`` (lower included, upper excluded)."""
    match = re.match(r"(\d+)\.(\d+)", version)
    if match is None:
        return False
    key = (int(match[1]), int(match[2]))
    return bounds[0] <= key < bounds[1]


def extend_data_needed() -> bool:
    """Whether the installed hdmf is one whose ``extend_data`` needs :func:`extend_data` (:data:`EXTEND_DATA_HDMF`)."""
    return version_in(getattr(hdmf, "__version__", ""), EXTEND_DATA_HDMF)


def _install_extend_data() -> list[str]:
    """Bind :func:`extend_data` in every hdmf module holding the original; the names of those modules."""
    for name in EXTEND_DATA_SITES:
        importlib.import_module(name)
    patched = []
    for name, module in list(sys.modules.items()):
        if (name == "hdmf" or name.startswith("hdmf.")) and getattr(module, "extend_data", None) is _ORIGINAL:
            module.extend_data = extend_data  # type: ignore[attr-defined]
            patched.append(name)
    return patched


def activate(dataset_type: type[Any]) -> None:
    """Apply the shims of the module docstring, once per process (thread-safe; later calls return at once).

    Parameters
    ----------
    dataset_type : type
        The backend's lazy dataset class (``ZarrDataset``): registered with hdmf's ``no_convert`` and
        extended in place by :func:`extend_data`.
    """
    global _ACTIVE, _EXTENDED_IN_PLACE
    if _ACTIVE:
        return
    with _LOCK:
        if _ACTIVE:
            return
        from hdmf.build import ObjectMapper

        from ..storage.stores import decoding

        _EXTENDED_IN_PLACE = (dataset_type,)
        ObjectMapper.no_convert(dataset_type)  # hdmf's registration: read datasets are kept as they are
        if extend_data_needed():
            _install_extend_data()
        if version_in(getattr(hdmf, "__version__", ""), ADD_VECTOR_HDMF):
            _install_add_vector()
        if version_in(getattr(hdmf, "__version__", ""), REGION_BOUNDS_HDMF):
            _install_region_bounds()
        decoding.install()
        _ACTIVE = True
