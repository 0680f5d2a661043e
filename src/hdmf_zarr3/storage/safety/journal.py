"""The append journal: what an append is about to change, kept in the store before it is changed, so
that an append that fails or is killed can be undone byte for byte.

An append changes a complete file in place: it stores the root marked incomplete, writes new nodes,
rewrites chunks of existing arrays (rows appended to a table) and their documents (a new shape),
then stores the root with every node inlined and without the mark. Before each of those changes the
journal receives what it needs to undo it, and only once the journal entry is stored does the
change go ahead (write-ahead):

==================================================  =================================================
key (below ``__hdmf_zarr3_journal/``)               holds
==================================================  =================================================
``root``                                            the root ``zarr.json`` as it was, byte for byte
``saved/<name>``                                    the bytes of a key before it was overwritten
``absent/<name>``                                   nothing: the key did not exist (delete it)
``new/<n>``                                         JSON list of node paths about to be created
==================================================  =================================================

``<name>`` is the key with ``%`` and ``/`` percent-encoded (``c%2F0`` for ``c/0``): one flat directory
whatever the depth of the key, so keeping a chunk creates no directories (journals of earlier
versions, ``saved/<key>`` nested, are still applied). A name that decodes to anything but a key inside
the file is refused, never written to.

Zarr v3 reserves names that start with ``__`` for extensions, and readers skip them when they list a
group, so the journal never shows up as a node. It lives only while an append is under way: the
commit that removes the incomplete mark deletes it afterwards. :func:`undo` (run by a failed append
in-process, and by :func:`hdmf_zarr3.recover` after a crash) deletes the new nodes and new keys, puts
saved bytes back, restores the root last and then deletes the journal, so it can be interrupted and
run again. A journal found beside a complete root is left over from a crash between the commit and
the journal's deletion: it is stale and is deleted, never applied.

The journal orders store operations; it does not ``fsync`` them. It survives a killed process (the
operating system keeps every write that returned), not necessarily a power cut.

In a local directory the saved bytes are a hard link to the file being kept, not a copy (and the
entries are made in the writer's thread, without zarr's I/O threads): the store
replaces a file by writing a new one and renaming it over the old name (zarr's ``LocalStore`` writes
nothing in place), so the linked file keeps the old bytes, and keeping a 500 KB chunk costs one
``link`` instead of reading and writing it. Anything but a regular file, or a file system without
hard links, is kept through the store as elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

from zarr.abc.store import RangeByteRequest, Store
from zarr.buffer import default_buffer_prototype

from ...errors import CorruptStoreError, MetadataLimitError, StoreError, UnsafeDataError
from ...format.documents import MAX_DOCUMENT_BYTES, load_json
from ..paths import RootDirectory, kind_of
from ..stores import finish_cleanup, local_root, sync

PREFIX = "__hdmf_zarr3_journal"
ROOT = f"{PREFIX}/root"
SAVED = f"{PREFIX}/saved/"
ABSENT = f"{PREFIX}/absent/"
NEW = f"{PREFIX}/new/"
ROOT_KEY = "zarr.json"
#: A ``new/<n>`` entry lists node paths, fewer than a (consolidated) node document holds: it is read and
#: parsed within the limits of one (:func:`..format.documents.limits.load_json`).
MAX_NEW_ENTRY_BYTES = MAX_DOCUMENT_BYTES
#: Longest entry name kept flat (file systems allow 255 bytes); a longer key is kept nested, as ``<key>``.
FLAT_NAME_BYTES = 200


def entry_name(key: str) -> str:
    """The name of ``key`` below ``saved/`` or ``absent/``: flat (``/`` and ``%`` encoded) when short enough."""
    name = key.replace("%", "%25").replace("/", "%2F")
    return name if len(name.encode("utf-8")) <= FLAT_NAME_BYTES else key


def key_of(name: str, entry: str) -> str:
    """The key a journal entry name stands for (either form); a name that is not a key inside the file
    (``..``, an absolute path, a reserved ``__`` name) is a :class:`~hdmf_zarr3.errors.CorruptStoreError`."""
    key = name.replace("%2F", "/").replace("%2f", "/").replace("%25", "%") if "%" in name else name
    parts = key.split("/")
    if any(p in ("", ".", "..") or p.startswith("__") or "\\" in p or "\0" in p for p in parts):
        raise CorruptStoreError(f"journal entry names {key!r}, not a key inside the file; nothing was undone", entry)
    return key


def _buffer(raw: bytes) -> Any:
    return default_buffer_prototype().buffer.from_bytes(raw)


async def _get(store: Store, key: str, limit: int | None = None) -> bytes | None:
    """The bytes at ``key`` (the first ``limit`` of them, if given)."""
    byte_range = None if limit is None else RangeByteRequest(0, limit)
    buf = await store.get(key, prototype=default_buffer_prototype(), byte_range=byte_range)
    return None if buf is None else buf.to_bytes()


class Journal:
    """The journal of one append session on ``store`` (create it with :meth:`begin`).

    ``side``: a store to keep the entries in instead of ``store`` itself (an in-memory one for
    transactional stores, whose uncommitted changes no crash can expose).
    """

    def __init__(self, store: Store, side: Store | None = None):
        self.store = store
        self.entries = side if side is not None else store
        self._kept: set[str] = set()  # keys whose previous state is in the journal
        self._batches = 0

    @classmethod
    def begin(cls, store: Store, side: Store | None = None) -> Journal:
        """Start the journal of an append: drop a stale one, then keep the current root."""
        journal = cls(store, side)
        try:
            journal.start()
        except BaseException:
            # (a Ctrl-C may come as the root's copy lands: nothing was changed yet, so a journal begun is removed,
            # or stays stale beside the complete root, never applied, if the store refuses that too)
            finish_cleanup(journal.discard_begun)
            raise
        return journal

    def discard_begun(self) -> None:
        """Delete what a :meth:`start` cut short stored (errors of the store ignored: see :meth:`begin`)."""
        with contextlib.suppress(Exception):
            self.finish()

    def start(self) -> None:
        """Drop a stale journal, then keep the current root (see :meth:`begin`)."""
        self._clear()
        if self._link({ROOT_KEY: ROOT}) != [ROOT_KEY]:
            root = sync(_get(self.store, ROOT_KEY))
            if root is None:
                raise CorruptStoreError("the file has no root zarr.json to append to", "/")
            sync(self.entries.set(ROOT, _buffer(root)))
        self._kept.add(ROOT_KEY)

    def keep(self, keys: list[str]) -> None:
        """Store the current bytes (or the absence) of ``keys`` before they are overwritten."""
        todo = [k for k in dict.fromkeys(keys) if k not in self._kept]
        if todo:
            linked = set(self._link({k: SAVED + entry_name(k) for k in todo}))
            rest = [k for k in todo if k not in linked]
            if rest:
                sync(_keep(self.store, self.entries, rest))
            self._kept.update(todo)

    def creating(self, paths: list[str]) -> None:
        """Note node paths about to be created (their whole prefix is deleted on undo)."""
        if paths:
            self._batches += 1
            body = _buffer(json.dumps(sorted(paths)).encode("utf-8"))
            sync(self.entries.set(f"{NEW}{self._batches}", body))

    def undo(self) -> None:
        """Put the file back as it was when the journal began, then delete the journal."""
        sync(_undo(self.store, self.entries))
        self._kept.clear()

    def finish(self) -> None:
        """Delete the journal (after the complete root was stored)."""
        self._clear()
        self._kept.clear()

    def _local_root(self) -> Path | None:
        """The directory of the store, when the journal lives in it and it is a plain local directory."""
        root = local_root(self.store) if self.entries is self.store else None
        return None if root is None else Path(root)

    def _link(self, entries: dict[str, str]) -> list[str]:
        """Keep each key as a hard link at its journal entry (a missing key: an empty ``absent/`` entry);
        returns the keys kept so (the others are kept through the store: not a regular file, or no hard
        links here). No thread is needed, so a writer never closed can still do this at exit. Every name is
        reached through :class:`..paths.RootDirectory`: a symlink on the way is refused, never followed."""
        root = self._local_root()
        if root is None:
            return []
        kept = []
        with RootDirectory(root) as tree:
            for key, entry in entries.items():
                try:
                    found = tree.entry(key)
                    if found is None:
                        if not entry.startswith(SAVED):
                            continue
                        _mark_absent(tree, ABSENT + entry[len(SAVED) :])
                    elif stat.S_ISREG(found.st_mode):
                        tree.link(key, entry)
                    else:
                        continue
                except (FileNotFoundError, FileExistsError, StoreError):  # (kept through the store instead)
                    continue
                kept.append(key)
        return kept

    def _clear(self) -> None:
        root = self._local_root()
        if root is None:
            sync(_clear(self.entries))
            return
        with RootDirectory(root) as tree:
            if tree.entry(PREFIX) is None:
                return
            # (a symlink, file or FIFO planted in its place is refused by the listing, never followed)
            for name in sorted(tree.list_directory(PREFIX)):  # the root entry last, as in the store's own _clear
                if name != "root":
                    tree.remove(f"{PREFIX}/{name}")
            tree.remove(PREFIX)


def _mark_absent(tree: RootDirectory, entry: str) -> None:
    """An empty journal entry ``entry`` (kept if one is there already: a regular file, nothing else)."""
    try:
        os.close(tree.create_file(entry))
    except FileExistsError:
        found = tree.entry(entry)
        if found is None or not stat.S_ISREG(found.st_mode):
            raise


async def _keep(store: Store, entries: Store, keys: list[str]) -> None:
    found = await asyncio.gather(*(_get(store, k) for k in keys))
    await asyncio.gather(
        *(
            entries.set(ABSENT + entry_name(k), _buffer(b""))
            if raw is None
            else entries.set(SAVED + entry_name(k), _buffer(raw))
            for k, raw in zip(keys, found)
        )
    )


async def _clear(store: Store) -> None:
    # the root entry last: a journal cut short here still shows, and is known stale by its complete root
    keys = [k async for k in store.list_prefix(f"{PREFIX}/") if k != ROOT]
    await asyncio.gather(*(store.delete(k) for k in keys))
    await store.delete_dir(PREFIX)


async def _any(store: Store) -> bool:
    async for _ in store.list_prefix(f"{PREFIX}/"):
        return True
    return False


def exists(store: Store) -> bool:
    """Whether ``store`` holds a journal, or part of one (stale, or to apply)."""
    return sync(_any(store))


def undo(store: Store) -> bool:
    """Apply the journal kept in ``store``: the file goes back to what it was when the append began.

    Returns ``False`` (and changes nothing) when there is no journal to apply.
    """
    _check_place(store)
    return sync(_undo(store, store))


def _check_place(store: Store) -> None:
    """Refuse a local store whose journal's place holds something other than a directory (a symlink, a FIFO, a
    file): the journal there is not ours to apply, nor its absence to conclude from."""
    root = local_root(store)
    if root is None:
        return
    with RootDirectory(root) as tree:
        found = tree.entry(PREFIX)
        if found is None or stat.S_ISDIR(found.st_mode):
            return
        tree.list_directory(PREFIX)  # (a symlink or a FIFO: refused, naming it)
        raise CorruptStoreError(
            f"is {kind_of(found.st_mode)} where the append journal's directory belongs; nothing was undone",
            tree.path_of(PREFIX),
        )


def discard(store: Store) -> None:
    """Delete a stale journal (one left beside a complete root)."""
    sync(_clear(store))


async def _undo(store: Store, entries: Store) -> bool:
    root = await _get(entries, ROOT)
    if root is None:
        return False
    new: list[str] = []
    saved: dict[str, str] = {}  # key -> its entry
    absent: list[str] = []
    async for entry in entries.list_prefix(f"{PREFIX}/"):
        if entry.startswith(NEW):  # (at most one byte more than an entry may take is read)
            new.extend(_paths(await _get(entries, entry, MAX_NEW_ENTRY_BYTES + 1), entry))
        elif entry.startswith(SAVED):
            saved[key_of(entry[len(SAVED) :], entry)] = entry
        elif entry.startswith(ABSENT):
            absent.append(key_of(entry[len(ABSENT) :], entry))
    for prefix in _tops(new):
        await _delete_ours(store.delete_dir(prefix))
    await asyncio.gather(*(_delete_ours(store.delete(k)) for k in absent))
    local = local_root(store) if entries is store else None
    for key, entry in saved.items():
        if local is not None and _move_back(local, entry, key):
            continue
        raw = await _get(entries, entry)
        if raw is not None:
            await store.set(key, _buffer(raw))
    # the root last: until here, the file reads as incomplete
    if local is None or not _move_back(local, ROOT, ROOT_KEY):
        await store.set(ROOT_KEY, _buffer(root))
    await _clear(entries)
    return True


async def _delete_ours(deletion: Awaitable[None]) -> None:
    """Run ``deletion`` (of a node or key the append made); one refused because a name on its way is a symlink or
    not a directory is skipped: a write never goes through those, so nothing the append made is below them (and
    what they lead to is not the file's to delete)."""
    try:
        await deletion
    except (UnsafeDataError, CorruptStoreError):  # (the refusals of ..paths: a symlink, a FIFO, a file on the way)
        pass


def _move_back(root: str, entry: str, key: str) -> bool:
    """Put a kept file of a local directory back by renaming its entry over ``key``: no new byte is written,
    so an undo works on a full disk (and is whole: a rename). ``False`` when the entry is no regular file
    (the caller then copies it through the store). Both names are reached without following a symlink."""
    with RootDirectory(root) as tree:
        found = tree.entry(entry)
        if found is None or not stat.S_ISREG(found.st_mode):
            return False
        tree.replace(entry, key)
    return True


def _paths(raw: bytes | None, key: str) -> list[str]:
    # each entry is stored whole (atomically): one that does not parse, or is larger than a node document
    # may be, was not written by us (the paths of one append are far fewer than a consolidated root holds)
    if raw is not None and len(raw) > MAX_NEW_ENTRY_BYTES:
        raise CorruptStoreError(f"journal entry is larger than {MAX_NEW_ENTRY_BYTES} bytes; nothing was undone", key)
    try:
        paths = load_json(raw or b"[]", "journal entry", key)
    except MetadataLimitError as exc:
        raise MetadataLimitError(f"{str(exc).removeprefix(key + ': ')}; nothing was undone", key) from None
    except CorruptStoreError as exc:  # not UTF-8, not JSON (the cause), nested too deeply to parse (none)
        why = str(exc.__cause__ or "nested too deeply to parse")[:200]
        raise CorruptStoreError(f"journal entry is not JSON ({why}); nothing was undone", key) from None
    if not isinstance(paths, list) or not all(isinstance(p, str) and _node_path(p) for p in paths):
        raise CorruptStoreError("journal entry is not a list of node paths inside the file", key)
    return paths


def _node_path(path: str) -> bool:
    """A path that names a node inside the file (a hostile journal must not delete anything else)."""
    parts = path.strip("/").split("/")
    return bool(path.strip("/")) and not any(
        p in ("", ".", "..") or p.startswith("__") or "\\" in p or "\0" in p for p in parts
    )


def _tops(paths: list[str]) -> list[str]:
    """The store prefixes of ``paths``, without those inside another one (deleted with it)."""
    prefixes = sorted({p.strip("/") for p in paths if p.strip("/")})
    tops: list[str] = []
    for prefix in prefixes:
        if not any(prefix.startswith(t + "/") for t in tops):
            tops.append(prefix)
    return tops
