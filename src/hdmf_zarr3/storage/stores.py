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
import shutil
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hdmf.backends.errors import UnsupportedOperation
from zarr.abc.store import Store
from zarr.core.sync import sync
from zarr.storage import LocalStore

from ..errors import IncompleteFileError, ModeError, StoreError
from ..format import completion, consolidated
from ..format.documents import group_document
from . import local_paths, locations, zipped
from .locks import WriteLock, lock_place, transactional

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
    _on_close: Callable[[], None] | None = field(default=None, repr=False)  # e.g. pack a zip
    owned: bool = field(default=True, repr=False)  # False: the caller's Store, left open
    _root_bytes: bytes | None = field(default=None, repr=False)  # the root zarr.json, when already read
    _on_discard: Callable[[], None] | None = field(default=None, repr=False)  # close() after a failed write
    lock: WriteLock | None = field(default=None, repr=False)  # held from open to close by writers
    allow_incomplete: bool = field(default=False, repr=False)  # read a file whose last write did not finish
    _marker: dict[str, Any] | None = field(default=None, repr=False)  # set while the stored root says incomplete
    _snapshot: dict[str, dict[str, Any]] | None = field(default=None, repr=False)  # documents before the changes
    _touched: set[str] = field(default_factory=set, repr=False)  # nodes written outside put_documents
    _originals: dict[str, bytes | None] = field(default_factory=dict, repr=False)  # keys overwritten in place
    failed: bool = field(default=False, repr=False)  # a write failed and could not be undone

    @property
    def writable(self) -> bool:
        return self.mode in WRITE_MODES

    @property
    def directory(self) -> str | None:
        """Directory (or URL prefix) that relative link and reference sources are resolved against."""
        return locations.parent(self.location) if self.location else None

    def documents(self) -> dict[str, dict[str, Any]]:
        """Every node document of the store (read once, then kept current by our own writes).

        A consolidated root holds them all (one request); otherwise the store is listed. A Zarr v2
        store gives its v2 documents (see :mod:`.v2`), read as they are.
        """
        if self._documents is None:
            from . import v2
            from .nodes import check_document, parse_document, read_documents, read_root

            raw, self._root_bytes = self._root_bytes, None
            root = parse_document(raw, "/") if raw is not None else read_root(self.store)
            expanded = consolidated.expand(root, check_document) if root is not None else None
            self._consolidated_on_disk = expanded is not None
            if expanded is not None:
                self._documents = expanded
            elif root is not None:
                self._documents = read_documents(self.store)
            else:  # no Zarr v3 root: a Zarr v2 store (hdmf-zarr <= 0.13), or nothing
                self._documents = v2.read_documents(self.store) or {}
        return self._documents

    def incomplete(self) -> dict[str, Any] | None:
        """The marker of a write that did not finish, if the stored root carries one."""
        return completion.incomplete(self.documents().get("/"))

    def check_complete(self) -> None:
        """Raise :class:`IncompleteFileError` for a file whose last write did not finish, unless the caller
        asked to read what is there (``allow_incomplete``). A file being created is not checked."""
        mark = None if self.mode in CREATE_MODES else self.incomplete()
        if mark is not None and not self.allow_incomplete:
            raise IncompleteFileError(f"{completion.describe(mark)}; open it with allow_incomplete=True to read "
                                      "what is there", self.location or "/")

    def will_change(self) -> None:
        """Call before changing nodes. The first change of a session stores the root marked incomplete
        (and without its consolidated metadata, which would go stale); :meth:`commit` removes the mark."""
        self._changed = True
        if self._marker is not None:
            return
        from .nodes import put_documents

        self._snapshot = dict(self.documents())
        self._marker = completion.marker("append" if "/" in self._snapshot else "write", _writer())
        root = consolidated.without_consolidated(self._snapshot.get("/") or group_document({}))
        put_documents(self.store, {"/": completion.marked(root, self._marker)})
        self._consolidated_on_disk = False

    def touching(self, paths: list[str]) -> None:
        """Note nodes that zarr itself is about to write (so that :meth:`rollback` can remove them)."""
        self._touched.update(paths)

    def preserve(self, keys: list[str]) -> None:
        """Keep the stored bytes of chunk ``keys`` an in-place change is about to overwrite (or their
        absence), once per change session, so that :meth:`rollback` puts them back."""
        self.will_change()
        todo = [k for k in dict.fromkeys(keys) if k not in self._originals]
        if todo:
            self._originals.update(zip(todo, sync(_get_all(self.store, todo))))

    def put_documents(self, documents: dict[str, dict[str, Any]]) -> None:
        """Store node documents (the root last, once the rest is in place, still marked incomplete) and
        remember them."""
        from .nodes import put_documents

        self.will_change()
        rest = {p: d for p, d in documents.items() if p != "/"}
        put_documents(self.store, rest)
        if "/" in documents:
            put_documents(self.store, {"/": completion.marked(documents["/"], self._marker)})
        self.documents().update(documents)

    def rollback(self) -> None:
        """Undo the changes of a write that failed: an append leaves the file as it was before; a new file
        stays marked incomplete (there is nothing to go back to) and is not committed on close; a zip's
        working copy is discarded on close, so the zip is not replaced."""
        if self._marker is None:
            return
        snapshot = self._snapshot or {}
        if "/" not in snapshot or self._on_discard is not None:  # a zip: its working copy is dropped on close
            self.failed = True
            return
        from .nodes import put_documents

        current = self.documents()
        new = sorted(({p for p in current if p not in snapshot} | self._touched) - set(snapshot))
        tops = [p for p in new if not any(p.startswith(q + "/") for q in new if q != p)]
        sync(_delete_nodes(self.store, tops))
        sync(_restore(self.store, self._originals))
        put_documents(self.store, {p: d for p, d in snapshot.items() if p != "/" and current.get(p) is not d})
        self._documents = dict(snapshot)
        self._touched.clear()
        self._changed = True
        self.commit()

    def changed(self, path: str, doc: dict[str, Any]) -> None:
        """Remember a document zarr itself stored (after :meth:`will_change`)."""
        self._changed = True
        self.documents()[path] = doc

    def commit(self) -> None:
        """Store the root with every node inlined (consolidated metadata), if anything changed."""
        if self.failed or not self._changed or not self.writable or "/" not in (self._documents or {}):
            return
        from .nodes import put_documents

        put_documents(self.store, {"/": consolidated.consolidate(self._documents)})  # unmarked: complete
        self._consolidated_on_disk = True
        self._changed = False
        self._marker = self._snapshot = None
        self._touched.clear()
        self._originals.clear()

    def close(self) -> None:
        """Release the store (after :meth:`commit`) and the write lock; a zip written through a working
        directory is packed, unless a write failed (the previous zip then stays as it was)."""
        try:
            if self.owned:
                self.store.close()
            finish, discard = self._on_close, self._on_discard
            self._on_close = self._on_discard = None
            if finish is not None and self.writable and not self.failed:
                finish()
            elif discard is not None:
                discard()
        finally:
            if self.lock is not None:
                lock, self.lock = self.lock, None
                lock.release()


async def _get_all(store: Store, keys: list[str]) -> list[bytes | None]:
    import asyncio

    from zarr.core.buffer import default_buffer_prototype

    found = await asyncio.gather(*(store.get(k, prototype=default_buffer_prototype()) for k in keys))
    return [None if b is None else b.to_bytes() for b in found]


async def _restore(store: Store, originals: dict[str, bytes | None]) -> None:
    from zarr.core.buffer import default_buffer_prototype

    for key, raw in originals.items():
        if raw is None:
            await store.delete(key)
        else:
            await store.set(key, default_buffer_prototype().buffer.from_bytes(raw))


async def _delete_nodes(store: Store, paths: list[str]) -> None:
    for path in paths:
        prefix = path.strip("/")
        await store.delete_dir(prefix)
        await store.delete(f"{prefix}/zarr.json")


def _writer() -> str:
    from .. import __version__

    return f"hdmf_zarr3 {__version__}"


def exists(store: Store) -> bool:
    """True if ``store`` holds a Zarr node at its root (format 3, or format 2 as older writers made)."""
    return bool(sync(store.exists("zarr.json"))) or _v2_present(store)


def _v2_present(store: Store) -> bool:
    from .v2 import ZARRAY, ZGROUP, ZMETADATA

    try:
        return any(sync(store.exists(key)) for key in (ZGROUP, ZMETADATA, ZARRAY))
    except Exception:  # stores that hold Zarr v3 only (icechunk) refuse v2 keys outright
        return False


def open_store(path: str | Path | Store | None, mode: str = "r", storage_options: dict[str, Any] | None = None,
               allow_incomplete: bool = False) -> StoreHandle:
    """Open ``path`` in ``mode``: a zarr ``Store``, a local path, a ``.zip`` file or a URL.

    URLs (``s3://``, ``gs://``, ``az://``, ``https://``) are opened with obstore, configured by
    ``storage_options`` (obstore's names: ``endpoint``, ``region``, ``access_key_id``,
    ``skip_signature``, ``client_options``, ...; fsspec's ``anon=True`` means ``skip_signature``).
    A ``.zip`` file is read in place and written through a working directory beside it that
    replaces the zip, whole, when the file is closed. Writers take the file's write lock (see
    :mod:`.locks`); ``allow_incomplete`` lets a reader open a file whose last write did not finish.
    """
    if mode not in MODES:
        raise ModeError(f"invalid mode {mode!r}; use one of {', '.join(MODES)}")
    if path is None:
        raise ValueError("a path, a URL or a zarr Store is required")
    if isinstance(path, Store):
        store, location = path, store_location(path)
        present = _read_root(store, location or repr(store)) or _v2_present(store)
    else:
        text = os.fspath(path)
        if locations.is_remote(text):
            store, location = remote_store(text, mode, storage_options), locations.absolute(text)
            root = _read_root(store, location)  # whether the file exists, and its metadata, in one request
            present = root if root is not None else _v2_present(store)
        else:
            location = locations.local_path(text)
            local_paths.check(location, mode)  # an HDF5 file, a mistyped path: refused before anything is created
            if location.endswith(".zip"):
                return _open_zip(location, mode, allow_incomplete)
            _check_local(location, mode)
            store = LocalStore(location, read_only=(mode == "r"))
            present = exists(store) if os.path.isdir(location) else False
    if mode in ("r", "r+") and not present:
        raise UnsupportedOperation(f"Unable to open {location or store} in '{mode}' mode: no Zarr group found.")
    if mode in ("w-", "x") and present:
        raise UnsupportedOperation(f"Unable to open file {location or store} in '{mode}' mode. File already exists.")
    if getattr(store, "read_only", False) and mode != "r":
        raise ModeError(f"store is read-only; cannot open it in mode {mode!r}")
    lock = _lock(path, store, location, mode, storage_options)
    try:
        if mode == "w" and present:
            _replace(store, location)
    except BaseException:
        if lock is not None:
            lock.release()
        raise
    handle = StoreHandle(store, mode, location, owned=not isinstance(path, Store), lock=lock,
                         allow_incomplete=allow_incomplete)
    if mode in CREATE_MODES or (mode == "a" and not present):
        handle._documents = {}
    elif isinstance(present, bytes):  # the root was read to learn that the file exists: keep it
        handle._root_bytes = present
    return handle


def _lock(path: str | Path | Store, store: Store, location: str | None, mode: str,
          storage_options: dict[str, Any] | None) -> WriteLock | None:
    if mode not in WRITE_MODES:
        return None
    place = lock_place(path, storage_options)
    return None if place is None else WriteLock.acquire(place, location or repr(store), _writer())


def _replace(store: Store, location: str | None) -> None:
    """Empty a store for mode ``w``. The root is first stored marked incomplete, so a writer killed while
    it deletes the old file leaves a file that reads as incomplete, never a valid-looking remnant."""
    from .nodes import put_documents

    if transactional(store):  # nothing is seen before commit
        sync(store.clear())
        return
    put_documents(store, {"/": completion.marked(group_document({}), completion.marker("write", _writer()))})
    if isinstance(store, LocalStore) and location is not None:
        _clear_local(location, keep="zarr.json")
    else:
        sync(_clear_except(store, "zarr.json"))


async def _clear_except(store: Store, keep: str) -> None:
    entries = [e async for e in store.list_dir("")]
    for entry in entries:
        if entry != keep:
            await store.delete_dir(entry)
            await store.delete(entry)


def store_location(store: Store) -> str | None:
    """Where a store the caller opened lives, when it says (local directories)."""
    root = getattr(store, "root", None)
    return os.path.abspath(root) if isinstance(store, LocalStore) and root is not None else None


def _check_local(location: str, mode: str) -> None:
    if mode in ("r", "r+") and not os.path.exists(location):
        raise UnsupportedOperation(f"Unable to open file {location} in '{mode}' mode. File does not exist.")
    if os.path.isfile(location):
        raise UnsupportedOperation(f"Unable to open {location} as a Zarr store: it is a file, not a directory.")


def remote_store(url: str, mode: str, options: dict[str, Any] | None) -> Store:
    try:
        import obstore.store
        from zarr.storage import ObjectStore
    except ImportError as exc:  # an optional dependency
        raise ImportError(f"opening {url} needs obstore: pip install 'hdmf_zarr3[remote]'") from exc
    options = dict(options or {})
    if options.pop("anon", False):
        options["skip_signature"] = True
    try:
        backend = obstore.store.from_url(url.rstrip("/"), **options)
    except Exception as exc:  # obstore raises its own error types for bad URLs and options
        raise StoreError(f"cannot open {url}: {exc}") from exc
    return ObjectStore(backend, read_only=(mode == "r"))


def _read_root(store: Store, location: str) -> bytes | None:
    """The root ``zarr.json`` (``None`` if absent); a bucket that is missing or refuses us is a StoreError."""
    from zarr.core.buffer import default_buffer_prototype

    try:
        buf = sync(store.get("zarr.json", prototype=default_buffer_prototype()))
        if buf is None:
            sync(_probe(store))
        return None if buf is None else buf.to_bytes()
    except Exception as exc:  # missing bucket, wrong credentials, unreachable endpoint
        raise StoreError(f"cannot access {location}: {exc}") from exc


async def _probe(store: Store) -> bool:
    """List at most one key: object stores answer a missing key with 404 but a missing bucket with an error."""
    async for _ in store.list_dir(""):
        break
    return False


def _open_zip(location: str, mode: str, allow_incomplete: bool) -> StoreHandle:
    """A zip file: read in place; written in a working directory that replaces the zip on close."""
    from zarr.storage import ZipStore

    present = os.path.isfile(location)
    if mode in ("r", "r+") and not present:
        raise UnsupportedOperation(f"Unable to open file {location} in '{mode}' mode. File does not exist.")
    if mode in ("w-", "x") and present:
        raise UnsupportedOperation(f"Unable to open file {location} in '{mode}' mode. File already exists.")
    if mode == "r":
        store = ZipStore(location, mode="r")
        if not exists(store):
            raise UnsupportedOperation(f"Unable to open {location} in 'r' mode: no Zarr group found.")
        return StoreHandle(store, mode, location, allow_incomplete=allow_incomplete)
    lock = _lock(location, None, location, mode, None)
    work = tempfile.mkdtemp(prefix=os.path.basename(location) + ".", suffix=".partial",
                            dir=os.path.dirname(location))
    try:
        if present and mode in ("r+", "a"):
            with zipfile.ZipFile(location) as archive:
                zipped.extract_all(archive, work)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        if lock is not None:
            lock.release()
        raise
    handle = StoreHandle(LocalStore(work), mode, location, _on_close=lambda: zipped.replace_zip(work, location),
                         _on_discard=lambda: shutil.rmtree(work, ignore_errors=True), lock=lock,
                         allow_incomplete=allow_incomplete)
    if mode in CREATE_MODES or not present:
        handle._documents = {}
    return handle


def _clear_local(location: str | None, keep: str | None = None) -> None:
    if location and os.path.isdir(location):
        for entry in os.scandir(location):
            if entry.name == keep:
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.remove(entry.path)
