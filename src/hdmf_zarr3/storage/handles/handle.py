"""An open store and the write session carried through it (:class:`StoreHandle`); opened by
:func:`.stores.open_store`."""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from zarr.abc.store import Store

from ..._version import __version__
from ...errors import IncompleteFileError
from ...format.documents import completion, consolidated, dimension_names, group_document, within_document_limits
from ..safety import LocalReplacement, Rollback, WriteLock, open_files, store_failures, transactional
from ..stores import ZARR_JSON, DocumentCache, dump_document, locations, put_documents, put_keys, wrapped_store

MODES = ("r", "r+", "a", "w", "w-", "x")
WRITE_MODES = frozenset({"r+", "a", "w", "w-", "x"})
CREATE_MODES = frozenset({"w", "w-", "x"})


@dataclass(frozen=True)
class HandleEnding:
    """What ends an open store beyond releasing its lock, as its opening decided: packing a zip (``on_close``),
    dropping a working copy (``on_discard``, ``on_abandon``), dropping a zip's changes (``on_undo``), moving a
    mode-``w`` replacement into place (``replacement``) or clearing the old file at the first change
    (``replace_later``, in a store that cannot swap files)."""

    on_close: Callable[[], None] | None = None
    on_discard: Callable[[], None] | None = None
    on_abandon: Callable[[], None] | None = None
    on_undo: Callable[[], None] | None = None
    replacement: LocalReplacement | None = None
    replace_later: Callable[[], None] | None = None


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
    _on_undo: Callable[[], None] | None = field(default=None, repr=False)  # a zip's changes dropped (rollback)
    use_consolidated: bool = field(default=True, repr=False)  # False (mode r-): list the store instead
    life: open_files.Lifetime = field(init=False, repr=False)  # ended by close(): lazy objects refuse to read
    _resized_groups: set[str] = field(default_factory=set, repr=False)  # groups of arrays zarr stored (changed())

    def __post_init__(self) -> None:
        self.life = open_files.Lifetime(self.location or repr(self.store))
        open_files.register(self, self.location, self.store)

    @classmethod
    def opened(
        cls,
        store: Store,
        mode: str,
        location: str | None,
        *,
        ending: HandleEnding | None = None,
        **settings: Any,
    ) -> StoreHandle:
        """The handle of a store just opened, with what its closing does (``ending``) and its public settings
        (``cache``, ``owned``, ``lock``, ``allow_incomplete``, ``use_consolidated``): how opening builds one,
        every field set here, none changed after."""
        ending = ending or HandleEnding()
        return cls(
            store,
            mode,
            location,
            _on_close=ending.on_close,
            _on_discard=ending.on_discard,
            _on_abandon=ending.on_abandon,
            _on_undo=ending.on_undo,
            _replacement=ending.replacement,
            _replace_later=ending.replace_later,
            **settings,
        )

    @property
    def writable(self) -> bool:
        return self.mode in WRITE_MODES

    @property
    def nested_keys_only(self) -> bool:
        """Whether the store takes only "/"-separated chunk keys (icechunk refuses "c.0.0")."""
        store: Any = self.store
        while store is not None:
            if type(store).__module__.split(".")[0] == "icechunk":
                return True
            store = wrapped_store(store)
        return False

    @property
    def directory(self) -> str | None:
        """Directory (or URL prefix) that relative link and reference sources are resolved against."""
        return locations.parent(self.location) if self.location else None

    def documents(self) -> dict[str, dict[str, Any]]:
        """Every node document of the store (read once, then kept current by our own writes).

        A consolidated root holds them all (one request); otherwise the store is listed. A Zarr v2
        store gives its v2 documents (see :mod:`.v2`), read as they are.
        """
        return self.cache.load(self.store, self.use_consolidated, self.location or repr(self.store))

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

    def will_change(self, root: dict[str, Any] | None = None) -> None:
        """Call before changing nodes. The first change of a session stores the root marked incomplete
        (and without its consolidated metadata, which would go stale); :meth:`commit` removes the mark.
        ``root``: the root document the change will leave (a new file's attributes), stored with the mark
        at once, so that a writer killed part-way leaves a file ``allow_incomplete=True`` can build a
        container from; later, it only replaces the remembered root. An append first starts its
        journal, with the root as it was."""
        self._changed = True
        if self.undo_log.active:
            if root is not None:
                self.documents()["/"] = root
            return
        if self._replace_later is not None:  # mode w over a file in a store that cannot be swapped
            replace, self._replace_later = self._replace_later, None
            replace()
        documents = self.documents()
        appending = "/" in documents
        marker = completion.marker("append" if appending else "write", writer_name())
        if appending and self._on_discard is None:  # a zip's working copy is simply dropped instead
            self.undo_log.begin(documents, marker, self.store, side=_journal_side(self.store))
        else:
            self.undo_log.begin(documents, marker)
        root = consolidated.without_consolidated(root or documents.get("/") or group_document({}))
        put_documents(self.store, {"/": completion.marked(root, marker)})
        documents["/"] = root

    def touching(self, paths: list[str]) -> None:
        """Note nodes that zarr itself is about to create (so that an undo removes them)."""
        self.will_change()
        self.undo_log.creating(paths)

    def preserve(self, keys: list[str]) -> None:
        """Journal the stored bytes of ``keys`` (chunks, documents) an in-place change is about to
        overwrite, or their absence, so that an undo puts them back."""
        self.will_change()
        self.undo_log.keep(keys)

    def put_documents(self, documents: dict[str, dict[str, Any]], names_dimensions: bool = False) -> None:
        """Store node documents and remember them. The root is only remembered: :meth:`will_change`
        stored it marked incomplete, and :meth:`commit` stores it once, complete. ``names_dimensions`` (files
        of our convention): the arrays get dimension names by the rule of
        ``format/documents/dimension_names.py``, their groups' other arrays renamed where a length changed."""
        self.will_change()
        current = self.documents()
        if names_dimensions:
            documents = {**documents, **self._renamed({**current, **documents}, documents)}
        # a document stored as it already is needs no write (an append re-puts the groups it passes through)
        rest = {p: d for p, d in documents.items() if p != "/" and current.get(p) != d}
        self.undo_log.storing(list(rest), ZARR_JSON)
        put_documents(self.store, rest)
        self.documents().update(documents)

    def rollback(self) -> None:
        """Undo the changes of a write that failed: an append leaves the file as it was before, byte for
        byte; a zip changed in place whose session committed nothing yet drops its changes at once (it reads as
        the zip again, and changes made after are kept); a new file stays marked incomplete (there is nothing
        to go back to) and is not committed on close; another working copy (a zip after a commit, mode ``w``
        beside an existing file) is discarded on close, so the old file is not replaced. An undo the store
        refuses (a file system turned read-only) raises our :class:`~hdmf_zarr3.errors.StoreError` with its
        ``errno``, saying so: the file stays marked incomplete with its journal, for
        :func:`~hdmf_zarr3.recover`, and is not committed on close."""
        if not self.undo_log.active:
            return
        if not self.undo_log.journaled:
            if self._on_undo is not None and not self.committed:  # a zip changed in place, nothing committed yet:
                self._on_undo()  # its working copy dropped, the zip reads as it is, later changes are kept
                self.cache.replace(self.undo_log.drop())
                self._changed = False
                self._resized_groups.clear()
                return
            self.failed = True
            return
        try:
            documents = self.undo_log.undo()
        except BaseException as exc:  # (the store refused the undo: the journal stays in the file, for recover)
            self.failed = True  # never committed, never undone again
            self.undo_log.clear()
            error = store_failures.undo_failed(exc, self.location)
            if error is exc:
                raise
            raise error from exc
        self.cache.replace(documents)
        self._changed = False
        self._resized_groups.clear()

    def changed(self, path: str, doc: dict[str, Any]) -> None:
        """Remember a document zarr itself stored (after :meth:`preserve` of its key)."""
        self._changed = True
        self.documents()[path] = doc
        self._resized_groups.add(posixpath.dirname(path))

    @staticmethod
    def _renamed(current: dict[str, dict[str, Any]], stored: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """The array documents (of ``current``) to store renamed so that the groups of the arrays in ``stored``
        keep the dimension-name rule."""
        groups = {posixpath.dirname(p) for p, d in stored.items() if p != "/" and d.get("node_type") == "array"}
        return dimension_names.renamed_documents(current, groups) if groups else {}

    def commit(self, consolidate: bool = True, names_dimensions: bool = False) -> None:
        """Store the root with every node inlined (consolidated metadata; ``consolidate=False``: not), if
        anything changed; a new file written beside an old one then takes its place. ``names_dimensions``: as
        for :meth:`put_documents`, for the groups of arrays zarr resized."""
        documents = self.cache.loaded
        if documents is None or self.failed or not self._changed or not self.writable or "/" not in documents:
            return
        if self._resized_groups:  # arrays whose length changed (appends): their groups named again
            groups, self._resized_groups = self._resized_groups, set()
            renamed = dimension_names.renamed_documents(documents, groups) if names_dimensions else {}
            if renamed:
                self.put_documents(renamed, names_dimensions)
        bare = consolidated.without_consolidated(documents["/"])
        raw = dump_document(consolidated.consolidate(documents)) if consolidate else None
        if raw is None or not within_document_limits(raw):
            raw = dump_document(bare)  # a root readers would refuse: the file is read node by node instead
        put_keys(self.store, {ZARR_JSON: raw})  # unmarked: complete
        self._changed = False  # (whatever happens next: committed, never stored again, nor undone)
        self.committed = True
        self.undo_log.finish()
        if self._replacement is not None:
            replacement, self._replacement = self._replacement, None
            self.store = replacement.swap()
            self._on_discard = None
            replacement.remove_old()

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
        """Forget the file as open in this process, end the life of what reads it lazily and release the
        write lock (once)."""
        self.life.end()
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


def writer_name() -> str:
    return f"hdmf_zarr3 {__version__}"
