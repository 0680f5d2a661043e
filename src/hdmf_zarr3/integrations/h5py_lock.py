"""Letting go of h5py's global lock around reads of our lazy datasets (see :func:`h5py_lock_released`).

A module of its own, importing nothing of this package: the lazy datasets use it on every read, and
:mod:`.hdmf_shims`, which imports the datasets to register them with hdmf, re-exports it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def h5py_lock_released() -> Iterator[None]:
    """Release h5py's global lock (``h5py._objects.phil``) around a Zarr read made while this thread holds it.

    Needed because of how h5py converts values: ``Dataset.__setitem__`` (HDF5IO writes ``dset[:] = data``,
    e.g. exporting a file read from Zarr to HDF5) holds ``phil`` while it calls ``np.asarray`` on the value,
    which is our lazy dataset. Reading it waits on other threads (zarr's event-loop thread, the store's I/O and
    decode threads); a garbage-collection pass on one of them that frees an h5py object needs ``phil`` in that
    object's dealloc, and both threads wait forever (tests/hdf5/test_real_files.py reproduces it). No read is
    synchronous in this thread for every store (remote stores are async-only), so the lock is let go for the
    duration of the read -- h5py is between HDF5 calls there, only converting its input -- and taken back as
    many times as it was held. Nothing happens when this thread does not hold it.
    """
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
