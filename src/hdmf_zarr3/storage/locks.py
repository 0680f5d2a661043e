"""The write lock: at most one writer per file.

A file opened for writing (modes ``r+``, ``a``, ``w``, ``w-``, ``x``) is locked from ``open`` to
``close``. The lock is a small JSON object that is created only if it does not exist yet, with the
store's conditional write (zarr's ``Store.set_if_not_exists``): an exclusive hard link on local disks,
``If-None-Match: *`` on object stores. A second writer finds it and gets :class:`FileLockedError`
naming the holder; readers never look at it.

Where the lock lives: beside a file opened by path or URL (``session.nwb.zarr.lock`` next to
``session.nwb.zarr`` or ``session.nwb.zarr.zip``), so it never becomes part of the file (zarr lists
any stray key in a group as a foreign object). In a Store the caller passes, whose surroundings we
do not know, it is the key ``hdmf_zarr3.lock`` inside the store. icechunk stores are not locked:
their sessions detect conflicting writers on commit.

A writer that crashes leaves its lock behind. It is never broken silently (the holder may be alive
on another machine); :func:`break_lock` removes it, and the error says so.
"""

from __future__ import annotations

import atexit
import datetime
import json
import os
import socket
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zarr.abc.store import Store
from zarr.core.buffer import default_buffer_prototype
from zarr.core.sync import sync
from zarr.storage import LocalStore

from ..errors import FileLockedError, StoreError
from . import locations

#: Key of the lock inside a Store the caller opened.
IN_STORE_KEY = "hdmf_zarr3.lock"
SUFFIX = ".lock"


@dataclass
class LockPlace:
    """Where the lock of one file is kept: a store and a key in it."""

    store: Store
    key: str
    description: str  # a path or URL, for messages


def _holder(writer: str) -> dict[str, Any]:
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"host": socket.gethostname(), "pid": os.getpid(), "started": now, "writer": writer,
            "token": uuid.uuid4().hex}


def _read(place: LockPlace) -> dict[str, Any] | None:
    buf = sync(place.store.get(place.key, prototype=default_buffer_prototype()))
    if buf is None:
        return None
    try:
        found = json.loads(buf.to_bytes().decode("utf-8"))
    except ValueError:
        found = None
    return found if isinstance(found, dict) else {"token": None}  # unreadable: still a lock


class WriteLock:
    """A lock held by this process (release it with :meth:`release`)."""

    def __init__(self, place: LockPlace, holder: dict[str, Any]):
        self.place = place
        self.holder = holder
        self._held = True
        atexit.register(self.release)  # an io never closed must not leave a stale lock behind

    @classmethod
    def acquire(cls, place: LockPlace, location: str, writer: str) -> WriteLock:
        """Take the lock, or raise :class:`FileLockedError` naming who holds it."""
        holder = _holder(writer)
        body = default_buffer_prototype().buffer.from_bytes(json.dumps(holder).encode("utf-8"))
        try:
            sync(place.store.set_if_not_exists(place.key, body))
            found = _read(place)
        except Exception as exc:  # e.g. a directory we may not write in
            raise StoreError(f"cannot create the write lock {place.description}: {exc}") from exc
        if found is None or found.get("token") != holder["token"]:
            raise FileLockedError(_locked_message(found or {}, location), location)
        return cls(place, holder)

    def release(self) -> None:
        """Remove the lock if it is still ours (someone may have broken it meanwhile)."""
        if not self._held:
            return
        self._held = False
        atexit.unregister(self.release)
        try:
            found = _read(self.place)
            if found is not None and found.get("token") == self.holder["token"]:
                sync(self.place.store.delete(self.place.key))
        except Exception:  # the store is gone (e.g. a temporary directory removed): nothing to release
            pass


def transactional(store: Store) -> bool:
    """Whether ``store`` is an icechunk session store: its changes are seen only once committed, and
    conflicting writers are detected on commit."""
    return type(store).__module__.split(".")[0] == "icechunk"


def lock_place(path: str | Path | Store, storage_options: dict[str, Any] | None = None) -> LockPlace | None:
    """Where the write lock of the file at ``path`` lives (``None``: a store that is not locked)."""
    if isinstance(path, Store):
        if transactional(path):
            return None
        from .stores import store_location

        return LockPlace(path, IN_STORE_KEY, f"{store_location(path) or repr(path)} (key {IN_STORE_KEY})")
    text = os.fspath(path)
    location = locations.absolute(text) if locations.is_remote(text) else locations.local_path(text)
    name, parent = locations.basename(location), locations.parent(location)
    if not locations.is_remote(location):
        return LockPlace(LocalStore(parent), name + SUFFIX, location + SUFFIX)
    from .stores import remote_store

    if not name or parent == location:  # a whole bucket: nothing beside it
        return LockPlace(remote_store(location, "a", storage_options), IN_STORE_KEY, f"{location}/{IN_STORE_KEY}")
    return LockPlace(remote_store(parent, "a", storage_options), name + SUFFIX, location + SUFFIX)


def break_lock(path: str | Path | Store, storage_options: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """Remove the write lock of the file at ``path``, whoever holds it, and return what it said (who
    held it since when; ``None`` if the file was not locked).

    Use it after a writer crashed or was killed (its lock stays behind). Breaking the lock of a writer
    that is still running lets a second writer in: check first. The file itself may be incomplete
    (:class:`~hdmf_zarr3.IncompleteFileError` on reading); its content is not changed here.
    """
    place = lock_place(path, storage_options)
    if place is None:
        return None
    found = _read(place)
    if found is not None:
        sync(place.store.delete(place.key))
    return found


def _locked_message(found: dict[str, Any], location: str) -> str:
    who = f"process {found.get('pid', '?')} on host {found.get('host', '?')}"
    since = f" since {found['started']}" if isinstance(found.get("started"), str) else ""
    stale = ""
    if found.get("host") == socket.gethostname() and isinstance(found.get("pid"), int) \
            and not _alive(found["pid"]):
        stale = " That process is no longer running: the lock is stale, left by a writer that crashed."
    return (f"the file is open for writing by {who}{since}.{stale} If no writer is using it, break the lock "
            f"with hdmf_zarr3.break_lock({location!r}) and check the file (it may be incomplete).")


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True
