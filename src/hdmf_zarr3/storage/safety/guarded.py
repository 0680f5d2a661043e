"""Local stores that read only regular files inside the file, and never more bytes than its metadata allows.

zarr's ``LocalStore`` opens whatever a key names: a named pipe (the read waits forever for a writer),
``/dev/zero`` behind a symlink (the read never ends and memory grows without bound), a symlink to
``/etc/passwd``, a directory (read as a missing chunk). :class:`GuardedLocalStore` reads a key only if it
is a regular file whose real location is inside the store's directory, and only if it is no larger than
the most one storage object of its array may take (:func:`..format.layout.codec_rules.stored_bound`); node
documents (``zarr.json``, and the Zarr v2 ones) and keys of no known array may take
:data:`MAX_DOCUMENT_BYTES`. :class:`GuardedZipStore` applies the same size limits to zip members
(their declared uncompressed size), reads only stored or deflated members, and turns the errors of a
damaged archive into :class:`CorruptStoreError`.

The bounds come from the node documents the reader uses, attached with :func:`limit_reads` once they
are read (before that only node documents are read).
"""

from __future__ import annotations

import asyncio
import os
import zipfile
import zlib
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any, Literal

from zarr.abc.buffer import Buffer, BufferPrototype
from zarr.abc.store import ByteRequest
from zarr.buffer import default_buffer_prototype
from zarr.storage import LocalStore, ZipStore

from ...errors import CorruptStoreError, FileReplacedError, StoreError, UnsafeDataError, UnsupportedCodecError
from ...format.documents import MAX_DOCUMENT_BYTES as MAX_NODE_DOCUMENT_BYTES
from ...format.layout import stored_bound
from ...format.vocabulary import normalize
from ..stores import ChunkPromises
from .guarded_writes import ConfinedWrites
from .local_reads import ObjectFile, byte_span, locate, open_object, read_file, too_large

#: Bytes a node document (or a key no array owns) may take: 256 MiB, far above the consolidated
#: metadata of the largest NWB files (about 1 KiB per node).
MAX_DOCUMENT_BYTES = 2**28
DOCUMENT_NAMES = frozenset({"zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata"})


class ReadBounds:
    """Which node a key belongs to, and how many bytes it may take (shared by the local, zip and object stores)."""

    _documents: Mapping[str, dict[str, Any]] | None = None
    _bounds: dict[str, tuple[Any, int]]
    promises: ChunkPromises

    def _init_bounds(self) -> None:
        self._documents = None
        self._bounds = {}
        self.promises = ChunkPromises()

    @property
    def limited_by(self) -> Mapping[str, dict[str, Any]] | None:
        """The node documents reads are bounded by (``None``: only node documents are read yet)."""
        return self._documents

    def limit(self, documents: Mapping[str, dict[str, Any]], promised: bool = True) -> None:
        """Bound reads by ``documents`` (the node documents the reader uses, kept current by it); ``promised``:
        a missing chunk of an array that stores every chunk is an error (not in an incomplete file)."""
        self._documents = documents
        self._bounds = {}
        self.promises = ChunkPromises(documents if promised else None)

    def _absent(self, key: str, reader: bool) -> None:
        """What a reader gets for ``key`` the store does not hold: ``None``, unless it is a chunk that must be
        there (:mod:`.missing_chunks`)."""
        if reader:
            self.promises.check(key)

    def owner(self, key: str) -> tuple[str, str, int]:
        """``(node path, what the key is, most bytes it may take)`` for a store key."""
        head, _, leaf = key.rpartition("/")
        if leaf in DOCUMENT_NAMES:  # parsed within format.documents.limits' bounds: a larger one is refused unread
            return normalize(head), leaf, MAX_NODE_DOCUMENT_BYTES
        parts = key.split("/")
        for i in range(len(parts) - 1, 0, -1):
            path = "/" + "/".join(parts[:i])
            doc = self._documents.get(path) if self._documents is not None else None
            cached = self._bounds.get(path)
            if cached is not None and (self._documents is None or cached[0] is doc):
                return path, f"chunk {'/'.join(parts[i:])}", cached[1]
            if isinstance(doc, dict) and doc.get("node_type") == "array":
                try:
                    bound = stored_bound(doc)
                except (KeyError, TypeError, ValueError, AttributeError):  # a document zarr will refuse anyway
                    bound = MAX_DOCUMENT_BYTES
                self._bounds[path] = (doc, bound)
                return path, f"chunk {'/'.join(parts[i:])}", bound
        return normalize(head), f"key {leaf}", MAX_DOCUMENT_BYTES

    def _state_bounds(self) -> dict[str, tuple[None, int]]:
        """Every array's bound, computed, for a copy of the store sent to another process (dask)."""
        out: dict[str, tuple[None, int]] = {p: (None, b) for p, (_, b) in self._bounds.items()}
        for path, doc in (self._documents or {}).items():
            if path not in out and isinstance(doc, dict) and doc.get("node_type") == "array":
                try:
                    out[path] = (None, stored_bound(doc))
                except (KeyError, TypeError, ValueError, AttributeError):
                    out[path] = (None, MAX_DOCUMENT_BYTES)
        return out


class GuardedLocalStore(ReadBounds, ConfinedWrites, LocalStore):
    """A ``LocalStore`` that reads only regular files inside its directory, within their bounds, and writes
    only below its real root, never through a symlink (:mod:`.guarded_writes`)."""

    def __init__(self, root: Any, *, read_only: bool = False, opened: int | None = None) -> None:
        super().__init__(root, read_only=read_only)
        self._init_bounds()
        self._real_root = os.path.realpath(self.root)
        # A reader remembers which directory it opened (``opened``: the inode a reader it derives from saw):
        # mode w in another process swaps a new one in at the same path, and the reader's metadata must never
        # be served with the new file's chunks.
        self._identity = (opened or _inode(self._real_root)) if read_only else None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_bounds"], state["_documents"] = self._state_bounds(), None
        state["promises"] = self.promises.portable()
        return state

    def with_read_only(self, read_only: bool = False) -> GuardedLocalStore:
        store = type(self)(self.root, read_only=read_only, opened=self._identity)
        store._documents, store._bounds, store.promises = self._documents, self._bounds, self.promises
        return store

    def _read(self, key: str, prototype: BufferPrototype, byte_range: ByteRequest | None) -> Buffer | None:
        node, what, bound = self.owner(key)
        found = read_file(self._real_root, key, node, what, bound, prototype, byte_range)
        self._check_same_directory()  # after the read: bytes opened after a swap are never returned
        if found is None:
            self._absent(key, self._identity is not None)
        return found

    def _check_same_directory(self) -> None:
        """Raise :class:`FileReplacedError` when the directory this reader opened is no longer at its path."""
        if self._identity is not None and _inode(self._real_root) != self._identity:
            raise FileReplacedError(
                "the file was replaced since it was opened (mode 'w' in another process); what this reader "
                "knows of it no longer describes what is stored there: reopen it",
                os.fspath(self.root),
            )

    def get_sync(
        self, key: str, *, prototype: BufferPrototype | None = None, byte_range: ByteRequest | None = None
    ) -> Buffer | None:
        self._ensure_open_sync()
        return self._read(key, prototype or default_buffer_prototype(), byte_range)

    async def get(
        self, key: str, prototype: BufferPrototype | None = None, byte_range: ByteRequest | None = None
    ) -> Buffer | None:
        await self._ensure_open()
        return await asyncio.to_thread(self._read, key, prototype or default_buffer_prototype(), byte_range)

    def open_object(self, key: str) -> ObjectFile | None:
        """``key``'s object opened once for several reads one after another (``None`` if absent), with the
        checks of :meth:`get` (each read then checks that the directory was not replaced)."""
        self._ensure_open_sync()
        node, what, bound = self.owner(key)
        found = open_object(self._real_root, key, node, what, bound, self._check_same_directory)
        if found is None:
            self._check_same_directory()
            self._absent(key, self._identity is not None)
        return found

    async def get_partial_values(
        self, prototype: BufferPrototype, key_ranges: Iterable[tuple[str, ByteRequest | None]]
    ) -> list[Buffer | None]:
        return list(await asyncio.gather(*(self.get(k, prototype, r) for k, r in key_ranges)))

    async def exists(self, key: str) -> bool:
        await self._ensure_open()
        node, what, _ = self.owner(key)
        return await asyncio.to_thread(locate, self._real_root, key, node, what) is not None

    async def list(self) -> AsyncIterator[str]:
        await self._ensure_open()
        keys = await asyncio.to_thread(_list_keys, self._real_root)
        self._check_same_directory()
        for key in keys:
            yield key


def _inode(path: str) -> int | None:
    """The inode number of ``path`` (the same on every client of a network file system), None if absent."""
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


def _list_keys(root: str) -> list[str]:
    """Every key of regular files under ``root`` (symlinked directories are not entered, as LocalStore);
    a node document that is not a regular file is an error, not a node silently missing, and so is a
    directory that is a symlink leading out of the file (its nodes would be left out without a word)."""
    keys = []
    real_root = os.path.realpath(root)
    for base, dirs, files in os.walk(root):
        rel = os.path.relpath(base, root).replace(os.sep, "/")
        for name in dirs:
            target = os.path.realpath(os.path.join(base, name))
            if os.path.islink(os.path.join(base, name)) and os.path.commonpath([target, real_root]) != real_root:
                node = normalize(name if rel == "." else f"{rel}/{name}")
                raise UnsafeDataError(f"its directory is a symlink to {target}, outside the file; it is not read", node)
        for name in files + [d for d in dirs if d in DOCUMENT_NAMES]:
            key = name if rel == "." else f"{rel}/{name}"
            if name in DOCUMENT_NAMES:
                if locate(root, key, normalize(rel if rel != "." else ""), name) is not None:
                    keys.append(key)
            elif os.path.isfile(os.path.join(base, name)):
                keys.append(key)
    return keys


#: Zip members this reader decompresses: decompressing them reads at most the requested bytes.
_ZIP_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}


class GuardedZipStore(ReadBounds, ZipStore):
    """A read-only ``ZipStore`` whose members are read within their bounds, with typed errors."""

    def __init__(self, path: Any, *, mode: Literal["r", "w", "a", "x"] = "r", **kwargs: Any) -> None:
        super().__init__(path, mode=mode, **kwargs)
        self._init_bounds()

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["_bounds"], state["_documents"] = self._state_bounds(), None
        state["promises"] = self.promises.portable()
        return state

    def _sync_open(self) -> None:
        try:
            super()._sync_open()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, OSError) as exc:
            if isinstance(exc, OSError) and not isinstance(exc, EOFError) and exc.errno is not None:
                raise StoreError(f"cannot open the zip file: {exc}", "/") from exc
            raise CorruptStoreError(f"not a readable zip file ({exc})", "/") from exc
        twice = duplicate_member(self._zipfile())
        if twice is not None:
            self.close()  # (opened again, and refused again, by the next read)
            raise CorruptStoreError(
                f"the zip holds two members named {twice!r}: zipfile and zarr read the last one, so the other "
                "is a hidden copy; a Zarr file has one object per key (a zip opened to be changed is refused too, "
                "so that an append never carries the hidden copy forward)",
                "/",
            )

    async def getsize(self, key: str) -> int:
        # (zarr's Store reads a member whole to count its bytes; the zip's directory holds the count)
        with self._lock:
            try:
                return int(self._zipfile().getinfo(key).file_size)
            except KeyError:
                raise FileNotFoundError(key) from None

    def _get(self, key: str, prototype: BufferPrototype, byte_range: ByteRequest | None = None) -> Buffer | None:
        archive = self._zipfile()
        try:
            info = archive.getinfo(key)
        except KeyError:
            self._absent(key, self.read_only)
            return None
        node, what, bound = self.owner(key)
        if info.is_dir():
            raise CorruptStoreError(f"{what} is a directory entry of the zip, not a file", node)
        if info.compress_type not in _ZIP_METHODS:
            raise UnsupportedCodecError(
                f"{what} is compressed with zip method {info.compress_type}; only stored and deflated members are read",
                node,
            )
        if info.file_size > bound:
            raise too_large(node, what, info.file_size, bound)
        start, stop = byte_span(byte_range, info.file_size)
        try:
            with archive.open(info) as member:
                if start:
                    member.seek(start)
                data = member.read(stop - start)  # reads (and inflates) at most this many bytes
        except (zipfile.BadZipFile, RuntimeError, NotImplementedError, EOFError, ValueError, zlib.error) as exc:
            raise CorruptStoreError(f"{what} cannot be read from the zip ({exc})", node) from exc
        except OSError as exc:
            raise StoreError(f"cannot read {what}: {exc}", node) from exc
        return prototype.buffer.from_bytes(data)


def duplicate_member(archive: zipfile.ZipFile) -> str | None:
    """The first name two members of ``archive`` share, or ``None`` (``zipfile`` keeps only the last of them
    in its name index, so only its list of members shows them)."""
    seen: set[str] = set()
    for info in archive.infolist():
        if info.filename in seen:
            return info.filename
        seen.add(info.filename)
    return None


def limit_reads(store: Any, documents: Mapping[str, dict[str, Any]], promised: bool = True) -> None:
    """Bound the reads of a guarded ``store`` by the node documents of its file (any other store: nothing);
    ``promised``: refuse missing chunks of arrays that store every chunk (:mod:`.missing_chunks`)."""
    if isinstance(store, ReadBounds):
        store.limit(documents, promised)
    elif callable(getattr(store, "limit_reads", None)):  # a zip being changed, an object store
        store.limit_reads(documents, promised)
