"""Where the write lock of a file lives (:class:`LockPlace`): beside a local file or an object-store prefix,
or inside a store passed in; an S3/GCS/Azure store passed in with a prefix locks where its URL spelling does.
Moved out of :mod:`.locks` (which takes, checks and releases the lock), with how a local lock file is read,
made and removed: never through a name that exists, never following a symlink or waiting on a FIFO.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zarr.abc.store import Store
from zarr.storage import LocalStore, ObjectStore

from ...errors import CorruptStoreError, StoreError, UnsafeDataError
from ..paths import (
    create_side_file,
    kind_of,
    link_side_file,
    open_side_file,
    remove_side_file,
    side_stem,
    write_all,
)
from ..stores import BUCKETS, locations, object_store_url
from . import store_failures

#: Key of the lock inside a Store the caller opened.
IN_STORE_KEY = "hdmf_zarr3.lock"
SUFFIX = ".lock"


@dataclass
class LockPlace:
    """Where the lock of one file is kept: a store and a key in it."""

    store: Store
    key: str
    description: str  # a path or URL, for messages


def transactional(store: Store) -> bool:
    """Whether ``store`` is an icechunk session store: its changes are seen only once committed, and
    conflicting writers are detected on commit."""
    return type(store).__module__.split(".")[0] == "icechunk"


def lock_place(path: str | Path | Store, object_store_at: Callable[[str], Store] | None = None) -> LockPlace | None:
    """Where the write lock of the file at ``path`` lives (``None``: a store that is not locked).

    ``object_store_at(url)``, for a URL: the object store at ``url`` (a writable one, its storage options
    already translated by whoever opened the file), so that the lock is reached as the file is."""
    if isinstance(path, LocalStore):  # the directory's own lock, as a writer given its path takes (one per file)
        path = str(path.root)
    if isinstance(path, Store):
        if transactional(path):
            return None
        beside = _beside_object_store(path)
        if beside is not None:
            return beside
        return LockPlace(path, IN_STORE_KEY, f"{locations.store_location(path) or repr(path)} (key {IN_STORE_KEY})")
    text = os.fspath(path)
    # a local file's lock is keyed on the file itself, symlinks resolved: every spelling of one directory or zip
    # (a symlink to it, a chain of them, a symlinked parent, ``./``, ``file://``) meets the same lock
    location = locations.absolute(text) if locations.is_remote(text) else os.path.realpath(locations.local_path(text))
    name, parent = locations.basename(location), locations.parent(location)
    if not locations.is_remote(location):
        lock = side_stem(location) + SUFFIX  # (a name that fits, however long the file's own)
        return LockPlace(LocalStore(parent), os.path.basename(lock), lock)
    if object_store_at is None:
        raise ValueError(f"the write lock of {location} is on an object store: object_store_at is required")
    if not name or parent == location:  # a whole bucket: nothing beside it
        return LockPlace(object_store_at(location), IN_STORE_KEY, f"{location}/{IN_STORE_KEY}")
    return LockPlace(object_store_at(parent), name + SUFFIX, location + SUFFIX)


def _beside_object_store(store: Store) -> LockPlace | None:
    """The lock of an obstore S3/GCS/Azure store with a prefix, passed in: where the same file opened by its URL
    keeps it (``<prefix>.lock`` beside the prefix), so that both spellings exclude each other. ``None`` for
    other stores and for a bucket's root (whose URL spelling locks inside it too: :data:`IN_STORE_KEY`)."""
    backend: Any = store.store if isinstance(store, ObjectStore) else None
    url = object_store_url(backend)
    if url is None or not (backend.prefix or "").strip("/"):
        return None
    kind = BUCKETS[type(backend).__name__]
    prefix, bucket = backend.prefix.strip("/"), backend.config[kind[1]]
    parent, _, name = prefix.rpartition("/")
    try:  # the same bucket, credentials and client settings, one level up
        outer = type(backend)(
            prefix=parent or None,
            config=backend.config,
            client_options=backend.client_options,
            retry_config=backend.retry_config,
            credential_provider=backend.credential_provider,
        )
    except Exception as exc:  # obstore's own error types
        raise StoreError(f"cannot reach the write lock beside {kind[0]}://{bucket}/{prefix}: {exc}") from exc
    return LockPlace(ObjectStore(outer), name + SUFFIX, f"{kind[0]}://{bucket}/{prefix}{SUFFIX}")


# --- a local lock: a file beside the file, touched one safe way (storage/paths) ------------------------------
class NotALockFile(Exception):
    """Where a local lock belongs is no regular file (a directory, a symlink, a FIFO, a device): the
    message says what it is."""


def read_local(path: str, size: int) -> bytes | None:
    """A local lock's first ``size`` bytes, read only from a regular file: a symlink is never followed, a FIFO
    never waited on, a device never opened (:class:`NotALockFile` saying what is there)."""
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise store_failures.typed(exc, path, "cannot examine the write lock") from exc
    if not stat.S_ISREG(found.st_mode):
        what = kind_of(found.st_mode)
        if stat.S_ISLNK(found.st_mode):
            with contextlib.suppress(OSError):
                what += f" to {os.readlink(path)}"
        raise NotALockFile(f"{what}, not a lock file")
    try:
        fd = open_side_file(path)  # (refuses again what was swapped in since)
    except (UnsafeDataError, CorruptStoreError) as exc:
        raise NotALockFile(f"not a lock file: {exc}") from exc
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as f:
        return f.read(size)


def delete_local(path: str, description: str) -> None:
    """Remove the local lock ``path``: a file, a symlink or a FIFO is unlinked as a name (never followed); an empty
    directory is removed; a directory with files in it is left alone (:class:`StoreError` with the errno)."""
    if stat.S_ISDIR(_mode(path)):
        try:
            os.rmdir(path)  # only an empty one: we never delete content we did not write
        except OSError as exc:
            error = StoreError(
                "where the write lock belongs is a directory with files in it, not a lock file; "
                "remove it yourself if it holds nothing you need",
                description,
            )
            error.errno = exc.errno
            raise error from exc
        return
    remove_side_file(path)


def _mode(path: str) -> int:
    try:
        return os.lstat(path).st_mode
    except FileNotFoundError:
        return 0


def create_local(path: str, body: bytes) -> None:
    """Create the local lock ``path`` holding ``body``, whole at once and only if nothing is there: written
    into a fresh temporary file beside it (created exclusively, never through a symlink), then hard-linked to
    the lock's name, which fails when anything is there (a lock held by another writer: nothing to do here)."""
    temporary = f"{os.path.splitext(path)[0]}.{secrets.token_hex(16)}.partial"  # (as locks.remove_temporaries knows)
    os.makedirs(os.path.dirname(path), exist_ok=True)  # (a new file's missing directories: creating modes make them)
    fd = create_side_file(temporary, 0o644)
    try:
        try:
            write_all(fd, body)
        finally:
            os.close(fd)
        with contextlib.suppress(FileExistsError, UnsafeDataError, CorruptStoreError):  # (reading it says what)
            link_side_file(temporary, path)
    finally:
        remove_side_file(temporary)
