"""The one place that turns what a user passes (a path, a Store) into an open zarr Store.

File modes mean what they mean for :class:`hdmf.backends.hdf5.HDF5IO` (and h5py):

=====  =========================================  ===================
mode   meaning                                     if it exists / not
=====  =========================================  ===================
r      read only                                   open / error
r+     read and write                              open / error
a      read and write                              open / create
w      create, replacing what is there            replace / create
w-, x  create                                      error / create
=====  =========================================  ===================
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hdmf.backends.errors import UnsupportedOperation
from zarr.abc.store import Store
from zarr.core.sync import sync
from zarr.storage import LocalStore, MemoryStore

from ..errors import ModeError
from ..format import consolidated

MODES = ("r", "r+", "a", "w", "w-", "x")
WRITE_MODES = frozenset({"r+", "a", "w", "w-", "x"})
CREATE_MODES = frozenset({"w", "w-", "x"})


@dataclass
class StoreHandle:
    """An open store, the mode it was opened with and where it lives."""

    store: Store
    mode: str
    location: str | None  # absolute local path, or None for stores without one
    _documents: dict[str, dict[str, Any]] | None = field(default=None, repr=False)
    _consolidated_on_disk: bool = field(default=False, repr=False)  # the stored root inlines every node
    _changed: bool = field(default=False, repr=False)  # nodes changed since the last commit()

    @property
    def writable(self) -> bool:
        return self.mode in WRITE_MODES

    @property
    def directory(self) -> str | None:
        """Directory that relative link and reference sources are resolved against."""
        return os.path.dirname(self.location) if self.location else None

    def documents(self) -> dict[str, dict[str, Any]]:
        """Every node document of the store (read once, then kept current by our own writes).

        A consolidated root holds them all (one request); otherwise the store is listed.
        """
        if self._documents is None:
            from .nodes import check_document, read_documents, read_root

            root = read_root(self.store)
            expanded = consolidated.expand(root, check_document) if root is not None else None
            self._consolidated_on_disk = expanded is not None
            self._documents = expanded if expanded is not None else read_documents(self.store)
        return self._documents

    def will_change(self) -> None:
        """Call before changing nodes: a stored consolidated root would go stale, so it is dropped first."""
        self._changed = True
        if self._consolidated_on_disk:
            from .nodes import put_documents

            put_documents(self.store, {"/": consolidated.without_consolidated(self.documents()["/"])})
            self._consolidated_on_disk = False

    def put_documents(self, documents: dict[str, dict[str, Any]]) -> None:
        """Store node documents (the root last, once the rest is in place) and remember them."""
        from .nodes import put_documents

        self.will_change()
        rest = {p: d for p, d in documents.items() if p != "/"}
        put_documents(self.store, rest)
        if "/" in documents:
            put_documents(self.store, {"/": documents["/"]})
        self.documents().update(documents)

    def changed(self, path: str, doc: dict[str, Any]) -> None:
        """Remember a document zarr itself stored (after :meth:`will_change`)."""
        self._changed = True
        self.documents()[path] = doc

    def commit(self) -> None:
        """Store the root with every node inlined (consolidated metadata), if anything changed."""
        if not self._changed or not self.writable or "/" not in (self._documents or {}):
            return
        from .nodes import put_documents

        put_documents(self.store, {"/": consolidated.consolidate(self._documents)})
        self._consolidated_on_disk = True
        self._changed = False

    def close(self) -> None:
        self.store.close()


def exists(store: Store) -> bool:
    """True if ``store`` holds a Zarr node at its root."""
    return bool(sync(store.exists("zarr.json")))


def open_store(path: str | Path | Store | None, mode: str = "r") -> StoreHandle:
    """Open ``path`` (a local path or a zarr ``Store``) in ``mode``."""
    if mode not in MODES:
        raise ModeError(f"invalid mode {mode!r}; use one of {', '.join(MODES)}")
    if isinstance(path, Store):
        store, location = path, None
    elif path is None:
        raise ValueError("a path or a zarr Store is required")
    else:
        location = os.path.abspath(os.fspath(path))
        if mode in ("r", "r+") and not os.path.exists(location):
            raise UnsupportedOperation(f"Unable to open file {location} in '{mode}' mode. File does not exist.")
        if os.path.isfile(location):
            raise UnsupportedOperation(f"Unable to open {location} as a Zarr store: it is a file, not a directory.")
        store = LocalStore(location, read_only=(mode == "r"))
    present = exists(store) if (location is None or os.path.isdir(location)) else False
    if mode in ("r", "r+") and not present:
        raise UnsupportedOperation(f"Unable to open {location or store} in '{mode}' mode: no Zarr group found.")
    if mode in ("w-", "x") and present:
        raise UnsupportedOperation(f"Unable to open file {location or store} in '{mode}' mode. File already exists.")
    if mode == "w" and present:
        sync(store.clear()) if not isinstance(store, LocalStore) else _clear_local(location)
    if isinstance(store, (LocalStore, MemoryStore)) and store.read_only and mode != "r":
        raise ModeError(f"store is read-only; cannot open it in mode {mode!r}")
    handle = StoreHandle(store, mode, location)
    if mode in CREATE_MODES or (mode == "a" and not present):
        handle._documents = {}
    return handle


def _clear_local(location: str | None) -> None:
    import shutil

    if location and os.path.isdir(location):
        for entry in os.scandir(location):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.remove(entry.path)
