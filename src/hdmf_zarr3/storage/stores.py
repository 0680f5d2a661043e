"""The one place that turns what a user passes (a path, a Store) into an open zarr Store.

File modes mean what they mean for :class:`hdmf.backends.hdf5.HDF5IO` (and h5py):

=====  =========================================  ===================
mode   meaning                                     if it exists / not
=====  =========================================  ===================
r      read only                                   open / error
r-     read only, ignoring consolidated metadata   open / error
r+     read and write                              open / error
a      read and write                              open / create
w      create, replacing what is there            replace / create
w-, x  create                                      error / create
=====  =========================================  ===================
"""

from __future__ import annotations

import os
import shutil
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hdmf.backends.errors import UnsupportedOperation
from zarr.abc.store import Store
from zarr.core.sync import sync
from zarr.storage import LocalStore

from .._version import __version__
from ..errors import IncompleteFileError, ModeError
from ..format import completion, consolidated
from ..format.documents import group_document
from . import decoding, local_paths, locations, open_files, zipped
from .document_cache import DocumentCache
from .guarded import GuardedLocalStore, GuardedZipStore
from .locations import store_location
from .locks import WriteLock, lock_place, transactional
from .remote import read_root_bytes, ready_store, remote_store
from .replacing import LocalReplacement, replace_in_place, working_directory
from .rollback import Rollback

MODES = ("r", "r+", "a", "w", "w-", "x")
WRITE_MODES = frozenset({"r+", "a", "w", "w-", "x"})
CREATE_MODES = frozenset({"w", "w-", "x"})


@dataclass(eq=False)  # compared (and hashed) by identity: one handle per open
class StoreHandle:
    """An open store, the mode it was opened with and where it lives.

    It also carries the transaction of the changes made through it: :meth:`will_change` starts one
    (the root is stored marked incomplete; an append first journals what it will overwrite, see
    :mod:`.journal`), :meth:`commit` ends it, :meth:`rollback` undoes it.
    """

    store: Store
    mode: str
    location: str | None  # absolute local path, or None for stores without one
    cache: DocumentCache = field(default_factory=DocumentCache, repr=False)  # the node documents
    _changed: bool = field(default=False, repr=False)  # nodes changed since the last commit()
    _on_close: Callable[[], None] | None = field(default=None, repr=False)  # e.g. pack a zip
    owned: bool = field(default=True, repr=False)  # False: the caller's Store, left open
    _on_discard: Callable[[], None] | None = field(default=None, repr=False)  # close() without a commit
    lock: WriteLock | None = field(default=None, repr=False)  # held from open to close by writers
    allow_incomplete: bool = field(default=False, repr=False)  # read a file whose last write did not finish
    undo_log: Rollback = field(default_factory=Rollback, repr=False)  # what undoes the current session
    _replacement: LocalReplacement | None = field(default=None, repr=False)  # mode w beside an existing file
    _replace_later: Callable[[], None] | None = field(default=None, repr=False)  # mode w: clear on first change
    committed: bool = field(default=False, repr=False)  # a commit stored a complete root in this session
    failed: bool = field(default=False, repr=False)  # a write failed and could not be undone
    _on_abandon: Callable[[], None] | None = field(default=None, repr=False)  # a zip's working copy, never closed
    use_consolidated: bool = field(default=True, repr=False)  # False (mode r-): list the store instead
    consolidate: bool = field(default=True, repr=False)  # commit() inlines every node into the root

    def __post_init__(self) -> None:
        open_files.register(self, self.location, self.store)

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
        return self.cache.load(self.store, self.use_consolidated)

    def incomplete(self) -> dict[str, Any] | None:
        """The marker of a write that did not finish, if the stored root carries one."""
        return completion.incomplete(self.documents().get("/"))

    def check_complete(self) -> None:
        """Raise :class:`IncompleteFileError` for a file whose last write did not finish, unless the caller
        asked to read what is there (``allow_incomplete``, read-only). A file being created is not checked."""
        mark = None if self.mode in CREATE_MODES else self.incomplete()
        if mark is None:
            return
        where = self.location or "/"
        if self.writable:
            raise IncompleteFileError(
                f"{completion.describe(mark)}; it cannot be changed until it is recovered: "
                f"hdmf_zarr3.recover({where!r}) (or `hdmf-zarr3 recover`) puts back the last "
                "complete state",
                where,
            )
        if not self.allow_incomplete:
            raise IncompleteFileError(
                f"{completion.describe(mark)}; open it with allow_incomplete=True to read "
                f"what is there, or run hdmf_zarr3.recover({where!r}) to go back to the "
                "last complete state",
                where,
            )

    def will_change(self) -> None:
        """Call before changing nodes. The first change of a session stores the root marked incomplete
        (and without its consolidated metadata, which would go stale); :meth:`commit` removes the mark.
        An append first starts its journal, with the root as it was."""
        self._changed = True
        if self.undo_log.active:
            return
        from .nodes import put_documents

        if self._replace_later is not None:  # mode w over a file in a store that cannot be swapped
            replace, self._replace_later = self._replace_later, None
            replace()
        documents = self.documents()
        appending = "/" in documents
        marker = completion.marker("append" if appending else "write", _writer())
        if appending and self._on_discard is None:  # a zip's working copy is simply dropped instead
            self.undo_log.begin(documents, marker, self.store, side=_journal_side(self.store))
        else:
            self.undo_log.begin(documents, marker)
        root = consolidated.without_consolidated(documents.get("/") or group_document({}))
        put_documents(self.store, {"/": completion.marked(root, marker)})

    def touching(self, paths: list[str]) -> None:
        """Note nodes that zarr itself is about to create (so that an undo removes them)."""
        self.will_change()
        self.undo_log.creating(paths)

    def preserve(self, keys: list[str]) -> None:
        """Journal the stored bytes of ``keys`` (chunks, documents) an in-place change is about to
        overwrite, or their absence, so that an undo puts them back."""
        self.will_change()
        self.undo_log.keep(keys)

    def put_documents(self, documents: dict[str, dict[str, Any]]) -> None:
        """Store node documents (the root last, once the rest is in place, still marked incomplete) and
        remember them."""
        from .nodes import ZARR_JSON, put_documents

        self.will_change()
        current = self.documents()
        # a document stored as it already is needs no write (an append re-puts the groups it passes through)
        rest = {p: d for p, d in documents.items() if p != "/" and current.get(p) != d}
        self.undo_log.storing(list(rest), ZARR_JSON)
        put_documents(self.store, rest)
        if "/" in documents:
            put_documents(self.store, {"/": completion.marked(documents["/"], self.undo_log.marker)})
        self.documents().update(documents)

    def rollback(self) -> None:
        """Undo the changes of a write that failed: an append leaves the file as it was before, byte for
        byte; a new file stays marked incomplete (there is nothing to go back to) and is not committed on
        close; a working copy (a zip, or mode ``w`` beside an existing file) is discarded on close, so the
        old file is not replaced."""
        if not self.undo_log.active:
            return
        if not self.undo_log.journaled:
            self.failed = True
            return
        self.cache.replace(self.undo_log.undo())
        self._changed = False

    def changed(self, path: str, doc: dict[str, Any]) -> None:
        """Remember a document zarr itself stored (after :meth:`preserve` of its key)."""
        self._changed = True
        self.documents()[path] = doc

    def commit(self) -> None:
        """Store the root with every node inlined (consolidated metadata), if anything changed; a new
        file written beside an old one then takes its place."""
        documents = self.cache.loaded
        if self.failed or not self._changed or not self.writable or "/" not in (documents or {}):
            return
        from .nodes import put_documents

        root = (
            consolidated.consolidate(documents)
            if self.consolidate
            else consolidated.without_consolidated(documents["/"])
        )
        put_documents(self.store, {"/": root})  # unmarked: complete
        self.undo_log.finish()
        if self._replacement is not None:
            replacement, self._replacement = self._replacement, None
            self.store = replacement.swap()
            self._on_discard = None
        self._changed = False
        self.committed = True

    def close(self) -> None:
        """Release the store (after :meth:`commit`) and the write lock. A working copy (a zip's, or a new
        file written beside the one it replaces) takes the old file's place only if a write committed."""
        try:
            if self.owned:
                self.store.close()
            finish, discard = self._on_close, self._on_discard
            self._on_close = self._on_discard = None
            if self._replacement is not None:
                replacement, self._replacement = self._replacement, None
                replacement.discard()
            if finish is not None and self.writable and self.committed and not self.failed:
                finish()
            elif discard is not None:
                discard()
        finally:
            self._release()

    def abandon(self) -> None:
        """What becomes of a writer never closed, when its io is garbage collected or the interpreter
        exits (see :func:`.locks.guard`): nothing is committed; a zip's working copy replaces the zip only
        if it holds a finished write (else it is dropped); the lock is released. Needs no event loop
        (zarr's has stopped at exit). The handle then commits and packs nothing, should close() follow."""
        self.failed = True
        abandon, self._on_abandon, self._on_close, self._on_discard = self._on_abandon, None, None, None
        replacement, self._replacement = self._replacement, None
        try:
            if replacement is not None:  # mode w never committed: the old file stays
                replacement.discard()
            if abandon is not None:
                abandon()
        finally:
            self._release()

    def _release(self) -> None:
        """Forget the file as open in this process and release the write lock (once)."""
        open_files.unregister(self)
        if self.lock is not None:
            lock, self.lock = self.lock, None
            lock.release()


def _journal_side(store: Store) -> Store | None:
    """Where the journal of ``store`` is kept: in the store itself, except in transactional stores
    (icechunk), which refuse keys that are not Zarr's and show nothing before their commit anyway."""
    if not transactional(store):
        return None
    from zarr.storage import MemoryStore

    return MemoryStore()


def _writer() -> str:
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


def open_store(
    path: str | Path | Store | None,
    mode: str = "r",
    storage_options: dict[str, Any] | None = None,
    allow_incomplete: bool = False,
) -> StoreHandle:
    """Open ``path`` in ``mode``: a zarr ``Store`` (or an obstore store, an fsspec mapper), a local path, a
    ``.zip`` file or a URL. URLs (``s3://``, ``gs://``, ``az://``, ``https://``) are opened with obstore,
    configured by ``storage_options`` in fsspec's or obstore's convention (see :mod:`.options`). A ``.zip``
    file is read in place and written through a working directory beside it that replaces the zip, whole,
    when the file is closed after a finished write. Mode ``w`` replaces an existing file only once the new
    one is finished (see :mod:`.replacing`). Writers take the file's write lock (see :mod:`.locks`);
    ``allow_incomplete`` lets a reader (mode ``r``) open a file whose last write did not finish. Mode ``r-``
    (hdmf-zarr's) reads as ``r`` but lists the store instead of trusting the consolidated metadata of the root.
    """
    decoding.install()  # zarr's reads of this store check blosc frames too (see decoding.install)
    if mode == "r-":
        handle = open_store(path, "r", storage_options, allow_incomplete)
        handle.use_consolidated = False
        return handle
    if mode not in MODES:
        raise ModeError(f"invalid mode {mode!r}; use one of {', '.join(MODES)} (or r-)")
    if path is None:
        raise ValueError("a path, a URL or a zarr Store is required")
    path = ready_store(path, mode)
    if allow_incomplete and mode != "r":
        raise ModeError(
            f"allow_incomplete reads an incomplete file and applies to mode 'r' only, not {mode!r}; "
            "to change an incomplete file, first recover it: hdmf_zarr3.recover(path)"
        )
    if isinstance(path, Store):
        store, location = path, store_location(path)
        present = read_root_bytes(store, location or repr(store)) or _v2_present(store)
    else:
        text = os.fspath(path)
        if locations.is_remote(text):
            store, location = remote_store(text, mode, storage_options), locations.absolute(text)
            root = read_root_bytes(store, location)  # whether the file exists, and its metadata, in one request
            present = root if root is not None else _v2_present(store)
        else:
            location = locations.local_path(text)
            local_paths.check(location, mode)  # an HDF5 file, a mistyped path: refused before anything is created
            if mode in CREATE_MODES:
                open_files.check_replaceable(location, None, mode)
            if location.endswith(".zip"):
                return _open_zip(location, mode, allow_incomplete)
            _check_local(location, mode)
            store = GuardedLocalStore(location, read_only=(mode == "r"))  # reads: see .guarded
            present = exists(store) if os.path.isdir(location) else False
    if mode in ("r", "r+") and not present:
        raise UnsupportedOperation(f"Unable to open {location or store} in '{mode}' mode: no Zarr group found.")
    if mode in ("w-", "x") and present:
        raise UnsupportedOperation(f"Unable to open file {location or store} in '{mode}' mode. File already exists.")
    if getattr(store, "read_only", False) and mode != "r":
        raise ModeError(f"store is read-only; cannot open it in mode {mode!r}")
    if mode in CREATE_MODES:
        open_files.check_replaceable(location, store, mode)
    lock = _lock(path, store, location, mode, storage_options)
    replacement = None
    try:
        if lock is not None and location is not None and not locations.is_remote(location):
            zipped.remove_leftovers(os.path.realpath(location))  # of killed writers: none is alive now
        if mode == "w" and present and isinstance(store, LocalStore) and not isinstance(path, Store):
            replacement = LocalReplacement(location)  # the old file stays until the new one commits
            store = replacement.store()
    except BaseException:
        if lock is not None:
            lock.release()
        raise
    # (the root, when it was read to learn that the file exists, is kept)
    cache = (
        DocumentCache({})
        if mode in CREATE_MODES or (mode == "a" and not present)
        else DocumentCache(root_bytes=present if isinstance(present, bytes) else None)
    )
    # mode w in a store that cannot be swapped: the old file stays untouched until the first node is written
    replace_later = (
        (lambda: replace_in_place(store, location, _writer()))
        if mode == "w" and present and replacement is None
        else None
    )
    return StoreHandle(
        store,
        mode,
        location,
        cache=cache,
        owned=not isinstance(path, Store),
        lock=lock,
        allow_incomplete=allow_incomplete,
        _replacement=replacement,
        _replace_later=replace_later,
    )


def _lock(
    path: str | Path | Store, store: Store, location: str | None, mode: str, storage_options: dict[str, Any] | None
) -> WriteLock | None:
    if mode not in WRITE_MODES:
        return None
    place = lock_place(path, storage_options)
    return None if place is None else WriteLock.acquire(place, location or repr(store), _writer())


def _check_local(location: str, mode: str) -> None:
    # a file where a directory belongs was refused already (local_paths.check)
    if mode in ("r", "r+") and not os.path.exists(location):
        raise UnsupportedOperation(f"Unable to open file {location} in '{mode}' mode. File does not exist.")


def _open_zip(location: str, mode: str, allow_incomplete: bool) -> StoreHandle:
    """A zip file: read in place; written in a working directory that replaces the zip on close."""
    present = os.path.isfile(location)
    if mode in ("r", "r+") and not present:
        raise UnsupportedOperation(f"Unable to open file {location} in '{mode}' mode. File does not exist.")
    if mode in ("w-", "x") and present:
        raise UnsupportedOperation(f"Unable to open file {location} in '{mode}' mode. File already exists.")
    if mode == "r":
        store = GuardedZipStore(location, mode="r")  # reads: see .guarded
        if not exists(store):
            raise UnsupportedOperation(f"Unable to open {location} in 'r' mode: no Zarr group found.")
        return StoreHandle(store, mode, location, allow_incomplete=allow_incomplete)
    lock = _lock(location, None, location, mode, None)
    zipped.remove_leftovers(location)  # of killed writers: no live one now that we hold the lock
    work = working_directory(location)  # named as zipped.leftovers expects
    try:
        if present and mode in ("r+", "a"):
            with zipfile.ZipFile(location) as archive:
                zipped.extract_all(archive, work)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        if lock is not None:
            lock.release()
        raise
    ours = lock.ours if lock is not None else None
    handle = StoreHandle(
        GuardedLocalStore(work),
        mode,
        location,
        _on_close=lambda: zipped.replace_zip(work, location, ours),
        _on_discard=lambda: shutil.rmtree(work, ignore_errors=True),
        lock=lock,
        allow_incomplete=allow_incomplete,
        _on_abandon=lambda: zipped.abandon(work, location, ours),
        cache=DocumentCache({} if mode in CREATE_MODES or not present else None),
    )
    return handle
