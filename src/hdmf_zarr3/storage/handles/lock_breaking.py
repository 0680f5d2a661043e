"""Breaking the write lock a killed writer left: the lock removed, and what killed writers left beside a
local file (a zip's working directories and half-packed copy, a lock's temporaries) cleaned up. It sits
above the locks (:mod:`..safety.locks`) because it reaches a file as opening does: an object store
opened from its URL and storage options (:mod:`..remote`), a zip's leftovers (:mod:`..zip`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from zarr.abc.store import Store

from ...errors import FileLockedError
from ..remote import remote_store
from ..safety import LockPlace, WriteLock, lock_place, locks
from ..stores import locations, store_location
from ..zip import zipped
from .opening_decisions import GIVEN_STORE, LOCAL_FILE, refuse_options


def break_lock(path: str | Path | Store, storage_options: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """Remove the write lock of the file at ``path``, whoever holds it, and return what it said.

    Use it after a writer crashed or was killed (its lock stays behind). Breaking the lock of a writer
    that is still running lets a second writer in: check first. The file itself may be incomplete
    (:class:`~hdmf_zarr3.IncompleteFileError` on reading); its content is not changed here. For a local
    ``.zip`` file or a local directory, the working directories (and half-packed zip) that killed writers
    left beside it are removed too (only while no live writer can be using them: before the lock goes, or under a lock
    taken for the purpose when there was none).

    Returns
    -------
    dict or None
        The holder (``host``, ``pid``, ``started``, ``writer``); ``{"corrupt": why}`` for a lock file
        that was not a JSON object (empty, truncated, binary, an empty directory); ``None`` if the file
        was not locked.

    Raises
    ------
    StoreError
        The lock's place holds a directory with files in it (nothing we made: it is left alone).
    """
    if isinstance(path, Store):
        refuse_options(storage_options, store_location(path) or repr(path), GIVEN_STORE)
    elif not locations.is_remote(os.fspath(path)):
        refuse_options(storage_options, os.fspath(path), LOCAL_FILE)
    place = lock_place(path, lambda url: remote_store(url, "a", storage_options))
    if place is None:
        return None
    local_location = _local_file(path)
    found = locks.read_holder(place)
    if found is None:
        if local_location is not None and (zipped.leftovers(local_location) or locks.temporaries(place)):
            _clean_unlocked(place, local_location)
        return None
    if local_location is not None:
        zipped.remove_leftovers(local_location)  # while the lock still keeps new writers out
        locks.remove_temporaries(place)  # (a writer killed while it stored or released the lock leaves one)
    locks.delete_lock(place)
    return found


def _local_file(path: str | Path | Store) -> str | None:
    """The resolved local path of a file opened by path (a zip or a directory: both leave working
    directories beside them when a writer is killed), else None."""
    if isinstance(path, Store) or locations.is_remote(os.fspath(path)):
        return None
    return os.path.realpath(locations.local_path(os.fspath(path)))


def _clean_unlocked(place: LockPlace, location: str) -> None:
    """Remove a file's leftovers when it is not locked, under a lock of our own (a writer starting
    meanwhile would otherwise lose its working directory)."""
    try:
        lock = WriteLock.acquire(place, location, "hdmf_zarr3 break_lock")
    except FileLockedError:  # a writer started meanwhile: what is there may be its own
        return
    try:
        zipped.remove_leftovers(location)
        locks.remove_temporaries(place)  # (a killed writer's: one starting now finds the lock taken by ours)
    finally:
        lock.release()
