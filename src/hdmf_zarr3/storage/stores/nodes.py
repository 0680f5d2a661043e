"""Low-level node access: read and write ``zarr.json`` documents and arrays through the Store API.

zarr-python pays one or more store round trips per node it opens or creates. A file with thousands
of small groups and arrays is therefore read here by listing the store once and fetching every
document concurrently, and written by putting every document concurrently. Array chunks are encoded
by zarr's own codec pipeline (``AsyncArray`` built from the document, without re-reading it).
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, cast

import zarr
from zarr import AsyncArray
from zarr.abc.store import Store, SupportsGetSync, SupportsSetSync
from zarr.buffer import default_buffer_prototype
from zarr.errors import UnknownCodecError
from zarr.storage import StorePath

from ...errors import CorruptStoreError, UnsupportedCodecError
from ...format.documents import chunk_key, limits, struct_spelling
from ...format.layout import all_chunks_stored, stored_value
from ...format.vocabulary import key_separator, names, normalize, store_key
from .decoding import DECODE_ERRORS, checked_pipeline, decode_error
from .local import local_root, put_files
from .zarr_adapter import store_supports_sync_io, sync

ZARR_JSON = "zarr.json"
#: Concurrent store operations in flight at once.
CONCURRENCY = 256


async def bounded(jobs: Iterable[Callable[[], Awaitable[Any]]], limit: int = CONCURRENCY) -> list[Any]:
    """Run ``jobs`` concurrently, at most ``limit`` at a time; their results in order."""
    sem = asyncio.Semaphore(limit)

    async def run(job: Callable[[], Awaitable[Any]]) -> Any:
        async with sem:
            return await job()

    return await asyncio.gather(*(run(j) for j in jobs))


def parse_document(raw: bytes, path: str, budget: limits.MetadataBudget | None = None) -> dict[str, Any]:
    """Parse one ``zarr.json`` within the size and value limits (:func:`.limits.load_json`), charged to the
    file's ``budget`` if given; anything but a JSON object with ``zarr_format`` 3 is a FormatError."""
    return check_document(limits.load_json(raw, "zarr.json", path, budget=budget), path)


def check_document(doc: Any, path: str, depth_checked: bool = False) -> dict[str, Any]:
    """``doc`` if it is a Zarr v3 node document, else a FormatError naming ``path`` (``depth_checked``: see
    :func:`.limits.check_node`)."""
    if not isinstance(doc, dict):
        raise CorruptStoreError("zarr.json is not a JSON object", path)
    if doc.get("zarr_format") != 3:
        raise CorruptStoreError(f"not Zarr format 3 metadata (zarr_format={doc.get('zarr_format')!r})", path)
    if doc.get("node_type") not in ("group", "array"):
        raise CorruptStoreError(f"unknown node_type {doc.get('node_type')!r}", path)
    attrs = doc.get("attributes", {})
    if not isinstance(attrs, dict):
        raise CorruptStoreError("attributes must be a JSON object", path)
    doc.setdefault("attributes", {})
    doc = struct_spelling.canonical_spelling(doc, path)  # (a consolidated copy's compounds: see there)
    limits.check_node(doc, path, depth_checked)
    return doc


def dump_document(doc: dict[str, Any]) -> bytes:
    # Our own format never holds bare NaN/Infinity (see format.data.values); the hdmf-zarr convention
    # does, as hdmf-zarr and zarr-python write them.
    return json.dumps(doc, separators=(",", ":")).encode("utf-8")


async def _read_documents(store: Store, budget: limits.MetadataBudget | None) -> dict[str, dict[str, Any]]:
    keys = await _list_documents(store)
    proto = default_buffer_prototype()

    async def fetch(key: str) -> tuple[str, dict[str, Any] | None]:
        path = normalize(key[: -len(ZARR_JSON)])
        names.check_node_path(path)  # (a zip member may be named anything)
        if budget is not None:
            budget.check(path)  # once over it, no more requests (those in flight finish)
        buf = await store.get(key, prototype=proto)
        return path, None if buf is None else parse_document(buf.to_bytes(), path, budget)

    return {path: doc for path, doc in await bounded([functools.partial(fetch, k) for k in keys]) if doc is not None}


def reserved_key(key: str) -> bool:
    """A key below a name starting with ``__``: Zarr v3 reserves those for extensions (our append
    journal); they are never nodes nor chunks."""
    return any(part.startswith("__") for part in key.split("/"))


#: zarr's LocalStore writes each key to ``<name>.<32 hex digits>.partial`` and renames it into place: a
#: killed writer leaves such files, which never became keys.
INTERRUPTED_WRITE = re.compile(r"\.[0-9a-f]{32}\.partial$")


async def _list_documents(store: Store) -> list[str]:
    return [k async for k in store.list() if (k == ZARR_JSON or k.endswith("/" + ZARR_JSON)) and not reserved_key(k)]


def local_io(store: Store) -> bool:
    """Whether the store reads synchronously from local storage (a round trip costs microseconds)."""
    return store_supports_sync_io(store)


def read_root(store: Store) -> dict[str, Any] | None:
    """The root ``zarr.json`` (one request), or ``None`` if there is none."""
    buf = sync(store.get(ZARR_JSON, prototype=default_buffer_prototype()))
    return None if buf is None else parse_document(buf.to_bytes(), "/")


def read_documents(store: Store, budget: limits.MetadataBudget | None = None) -> dict[str, dict[str, Any]]:
    """Every node document in ``store``, keyed by absolute node path (``"/"`` is the root), all of them
    charged to the file's ``budget`` if given (each parsed as it arrives: no more than the budget is kept).

    Stores with synchronous I/O (local files) are read in this thread, which is several times faster
    than a thread hop per small file; others are fetched concurrently.
    """
    if not store_supports_sync_io(store):
        return sync(_read_documents(store, budget))
    proto = default_buffer_prototype()
    docs = {}
    for key in sync(_list_documents(store)):
        buf = cast(SupportsGetSync, store).get_sync(key, prototype=proto)  # (checked above)
        if buf is not None:
            path = normalize(key[: -len(ZARR_JSON)])
            names.check_node_path(path)
            docs[path] = parse_document(buf.to_bytes(), path, budget)
    return docs


def put_documents(store: Store, docs: dict[str, dict[str, Any]]) -> None:
    """Write the given node documents (see :func:`put_keys`)."""
    put_keys(store, {store_key(path, ZARR_JSON): dump_document(doc) for path, doc in docs.items()})


def put_keys(store: Store, items: dict[str, bytes]) -> None:
    """Store ``key: bytes`` pairs: into a local directory in this thread (:mod:`.local_writes`), into
    another store with synchronous I/O one after another, else concurrently."""
    if not items:
        return
    root = local_root(store)
    if root is not None:
        put_files(root, items)
        return
    buffer = default_buffer_prototype().buffer
    if store_supports_sync_io(store):
        for key, raw in items.items():
            cast(SupportsSetSync, store).set_sync(key, buffer.from_bytes(raw))
        return

    async def put(key: str, raw: bytes) -> None:
        await store.set(key, buffer.from_bytes(raw))

    sync(bounded([functools.partial(put, k, v) for k, v in items.items()]))


def get_keys(store: Store, keys: list[str]) -> list[bytes | None]:
    """The bytes stored at ``keys`` (``None`` where missing): in this thread from a store with synchronous
    I/O, else concurrently."""
    if not keys:
        return []
    if store_supports_sync_io(store):
        proto = default_buffer_prototype()
        found = [cast(SupportsGetSync, store).get_sync(k, prototype=proto) for k in keys]
        return [None if buf is None else buf.to_bytes() for buf in found]
    return sync(_get_all(store, keys))


def async_array(store: Store, path: str, doc: dict[str, Any]) -> AsyncArray:
    """zarr's ``AsyncArray`` for a node whose document we already hold (no store access)."""
    try:
        # An array that promises every chunk is stored keeps the promise when zarr writes it (a region set to
        # the fill value in r+, a block written through zarr): zarr would otherwise delete such a chunk.
        config = {"write_empty_chunks": True} if all_chunks_stored(doc) else None
        array = AsyncArray(cast(Any, doc), StorePath(store, path.strip("/")), config=cast(Any, config))  # v3 or v2
    except UnknownCodecError as exc:
        raise UnsupportedCodecError(
            f"no codec installed for one of {_codec_names(doc.get('codecs', []))} (install "
            "the package that provides it)",
            path,
        ) from exc
    except (TypeError, ValueError, KeyError, AttributeError, OverflowError, NotImplementedError, SyntaxError) as exc:
        # what zarr refuses in metadata this package's own checks let through (third-party codecs, v2)
        raise CorruptStoreError(f"zarr cannot open this array ({type(exc).__name__}: {str(exc)[:300]})", path) from exc
    return checked_pipeline(array, path)


def _codec_names(codecs: Any) -> list[Any]:
    """The names of a codec chain, those nested in sharding included."""
    names = []
    for codec in codecs if isinstance(codecs, list) else []:
        if isinstance(codec, dict):
            names.append(codec.get("name"))
            config = codec.get("configuration")
            if isinstance(config, dict):
                names += _codec_names(config.get("codecs")) + _codec_names(config.get("index_codecs"))
    return list(dict.fromkeys(names))


def open_array(store: Store, path: str, doc: dict[str, Any]) -> zarr.Array:
    return zarr.Array(async_array(store, path, doc))


async def _read_arrays(store: Store, items: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async def get(path: str, doc: dict[str, Any]) -> Any:  # an array, or a numpy scalar for a 0-d array
        return await async_array(store, path, doc).getitem(())

    return await bounded([functools.partial(get, p, d) for p, d in items])


def read_arrays(store: Store, items: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Read whole (small) arrays, e.g. every scalar dataset of a file at once.

    Chunkless 0-d arrays (:mod:`..format.layout.chunkless`) are read from their documents, with no request.
    Object arrays of Zarr v2 files (Pickle or JSON codec) are decoded safely by :mod:`.v2`.
    Single-chunk arrays on stores with synchronous I/O are read and decoded in this thread; the rest
    are read concurrently through zarr.
    """
    if not items:
        return []
    out: list[Any] = [stored_value(doc) for _, doc in items]
    if all(value is not None for value in out):
        return out
    items_left = [i for i, value in enumerate(out) if value is None]
    for i, value in zip(items_left, _read_stored_arrays(store, [items[i] for i in items_left])):
        out[i] = value
    return out


def _read_stored_arrays(store: Store, items: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """:func:`read_arrays` of arrays whose values are in chunks."""
    from . import v2
    from .single_chunk import decode_single_chunk

    out: list[Any] = [None] * len(items)
    objects = [i for i, (_, doc) in enumerate(items) if v2.is_object_array(doc)]
    for i, value in zip(objects, v2.read_object_arrays(store, [items[i] for i in objects]) if objects else []):
        out[i] = value
    todo = [i for i in range(len(items)) if not v2.is_object_array(items[i][1])]
    rest: list[int] = []

    def decode(i: int, raw: bytes | None) -> None:
        path, doc = items[i]
        try:
            out[i] = decode_single_chunk(doc, raw)
        except DECODE_ERRORS as exc:
            separator = key_separator(doc) or "/"  # (only arrays with default chunk keys get here)
            raise decode_error(exc, path, f"chunk {chunk_key([0] * len(doc['shape']), separator)}") from exc
        if out[i] is None:
            rest.append(i)

    # One batch of gets, decoded here: building zarr's AsyncArray for each of many tiny arrays costs more
    # than their requests (those left to zarr below are multi-chunk arrays).
    keyed = {i: chunk for i in todo if (chunk := _single_chunk_key(*items[i])) is not None}
    rest = [i for i in todo if i not in keyed]
    for i, raw in zip(keyed, get_keys(store, list(keyed.values()))):
        decode(i, raw)
    for i, value in zip(rest, sync(_read_arrays(store, [items[i] for i in rest])) if rest else []):
        out[i] = value
    return out


def _single_chunk_key(path: str, doc: dict[str, Any]) -> str | None:
    """The key of the one chunk of a non-empty Zarr v3 array stored as a single chunk, else ``None``."""
    if doc.get("zarr_format") == 2:
        return None
    separator = key_separator(doc)
    grid = doc.get("chunk_grid", {}).get("configuration", {}).get("chunk_shape")
    shape = doc.get("shape")
    if separator is None or not isinstance(shape, list) or grid != shape or 0 in shape:
        return None
    return store_key(path, chunk_key([0] * len(shape), separator))


async def _get_all(store: Store, keys: list[str]) -> list[bytes | None]:
    proto = default_buffer_prototype()

    async def get(key: str) -> bytes | None:
        buf = await store.get(key, prototype=proto)
        return None if buf is None else buf.to_bytes()

    return await bounded([functools.partial(get, k) for k in keys])


WriteJob = Callable[[], Awaitable[None]]


def run_jobs(jobs: list[WriteJob], limit: int = CONCURRENCY) -> None:
    """Run async write jobs concurrently on zarr's event loop."""
    if jobs:
        sync(bounded(jobs, limit))
