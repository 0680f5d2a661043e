"""Bridges for places where HDMF (or h5py under it) needs help with our lazy datasets.

``hdmf.data_utils.extend_data`` (used by ``VectorData.extend``, e.g. when a row with a ragged value
is added to a table read from a file) knows lists, numpy arrays, ``DataIO`` and ``h5py.Dataset`` but
not other lazy datasets, so extending a table read from Zarr would fail. We wrap it so that our own
lazy datasets extend in place, and leave every other type to HDMF's original function.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import hdmf.container
import hdmf.data_utils

_ORIGINAL = getattr(hdmf.data_utils.extend_data, "__wrapped__", hdmf.data_utils.extend_data)


def extend_data(data: Any, arg: Any) -> Any:
    from .datasets import ZarrDataset

    if isinstance(data, ZarrDataset):
        data.extend(arg)
        return data
    return _ORIGINAL(data, arg)


extend_data.__wrapped__ = _ORIGINAL  # type: ignore[attr-defined]


def install() -> None:
    """Route ``extend_data`` through :func:`extend_data`, and check blosc frames before numcodecs decodes
    them (:func:`hdmf_zarr3.storage.decoding.install`); idempotent."""
    from .storage import decoding

    hdmf.data_utils.extend_data = extend_data
    hdmf.container.extend_data = extend_data
    decoding.install()


@contextmanager
def h5py_lock_released() -> Iterator[None]:
    """Release h5py's global lock around a Zarr read made while this thread holds it.

    HDF5IO hands our lazy datasets straight to h5py (``dset[...] = dataset``), and h5py converts the
    value to numpy while holding its global lock. The Zarr read then waits on zarr's I/O threads; if
    one of them frees an h5py object meanwhile, it needs the same lock, and both threads wait forever.
    h5py is between HDF5 calls at that point (it is only converting its input), so the lock is let go
    for the duration of the read and taken back as many times as it was held.
    """
    import sys

    objects = sys.modules.get("h5py._objects")
    lock = getattr(objects, "phil", None)
    if lock is None or not lock._is_owned():
        yield
        return
    held = 0
    while lock._is_owned():
        lock.release()
        held += 1
    try:
        yield
    finally:
        for _ in range(held):
            lock.acquire()
