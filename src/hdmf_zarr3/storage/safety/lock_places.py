"""Where the write lock of a file lives (:class:`LockPlace`): beside a local file or an object-store prefix,
or inside a store passed in; an S3/GCS/Azure store passed in with a prefix locks where its URL spelling does.
Moved out of :mod:`.locks` (which takes, checks and releases the lock) unchanged.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zarr.abc.store import Store
from zarr.storage import LocalStore, ObjectStore

from ...errors import StoreError
from ..paths import side_stem
from ..remote import BUCKETS, object_store_url
from ..stores import locations

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


def lock_place(path: str | Path | Store, storage_options: dict[str, Any] | None = None) -> LockPlace | None:
    """Where the write lock of the file at ``path`` lives (``None``: a store that is not locked)."""
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
    from ..remote import remote_store

    if not name or parent == location:  # a whole bucket: nothing beside it
        return LockPlace(remote_store(location, "a", storage_options), IN_STORE_KEY, f"{location}/{IN_STORE_KEY}")
    return LockPlace(remote_store(parent, "a", storage_options), name + SUFFIX, location + SUFFIX)


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
