"""Zarr format 2 stores, read only: their metadata, and the object arrays zarr-python 3 cannot decode.

hdmf-zarr ≤0.13 wrote Zarr v2. zarr-python 3 reads v2 numeric, string and structured arrays itself
(:func:`.nodes.open_array` accepts a v2 document); what it cannot read are object arrays encoded with
numcodecs' ``Pickle`` or ``JSON`` codecs, which held object references and compounds with reference or
string fields. Those are decoded here: the compressor through numcodecs (only the standard
compressors), then the object codec by :mod:`..format.data.safe_pickle` or a strict JSON reader. Nothing
is ever unpickled by ``pickle`` itself, and no environment variable or opt-in is needed.

A v2 node document, as returned by :func:`read_documents`, is the node's ``.zarray`` (arrays) plus
``zarr_format: 2``, ``node_type`` and ``attributes`` (its ``.zattrs``).
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

import numcodecs
import numpy as np
from zarr.abc.store import Store
from zarr.buffer import default_buffer_prototype

from ...errors import CorruptStoreError, UnsafeDataError
from ...format.data import safe_pickle
from ...format.dialects import OBJECT_CODECS, filter_ids, numpy_dtype
from ...format.documents import limits
from ...format.vocabulary import normalize
from .decoding import DECODE_ERRORS, decode_error
from .zarr_adapter import sync

ZGROUP, ZARRAY, ZATTRS, ZMETADATA = ".zgroup", ".zarray", ".zattrs", ".zmetadata"
#: Compressors decoded through numcodecs (all of them decompress only; none can run code).
COMPRESSORS = frozenset({"blosc", "zstd", "lz4", "zlib", "gzip", "bz2", "lzma"})
#: The variable-length codecs numcodecs decodes safely (object codecs: OBJECT_CODECS, decoded here).
VLEN_CODECS = frozenset({"vlen-utf8", "vlen-bytes"})


def is_object_array(doc: dict[str, Any]) -> bool:
    """True for a v2 array whose elements need :func:`read_object_arrays` (Pickle or JSON codec)."""
    return doc.get("zarr_format") == 2 and any(f in OBJECT_CODECS for f in filter_ids(doc))


def _load_json(raw: bytes, key: str, budget: limits.MetadataBudget | None = None) -> Any:
    return limits.load_json(raw, key, "/" + key, budget=budget)


def documents_from_metadata(metadata: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Node documents from v2 metadata keyed by store key (``a/b/.zarray``, ``.zattrs``, ...)."""
    docs: dict[str, dict[str, Any]] = {}
    for key, value in metadata.items():
        prefix, _, leaf = key.rpartition("/") if "/" in key else ("", "", key)
        if leaf not in (ZGROUP, ZARRAY, ZATTRS):
            continue
        path = normalize(prefix)
        if not isinstance(value, dict):
            raise CorruptStoreError(f"{leaf} is not a JSON object", path)
        doc = docs.setdefault(path, {"zarr_format": 2, "attributes": {}})
        if leaf == ZATTRS:
            doc["attributes"] = value
        elif leaf == ZGROUP:
            doc.setdefault("node_type", "group")
        else:
            doc.update({k: v for k, v in value.items() if k != "zarr_format"})
            doc["node_type"] = "array"
    return {p: d for p, d in docs.items() if "node_type" in d}  # .zattrs alone is no node


def read_documents(store: Store, budget: limits.MetadataBudget | None = None) -> dict[str, dict[str, Any]] | None:
    """Every node document of a v2 store (``None`` when the root is not Zarr v2), charged to the file's
    ``budget`` if given.

    Consolidated metadata (``.zmetadata``) is one request; otherwise the store is listed.
    """
    return sync(_read_documents(store, budget))


async def _read_documents(store: Store, budget: limits.MetadataBudget | None) -> dict[str, dict[str, Any]] | None:
    proto = default_buffer_prototype()
    try:
        consolidated = await store.get(ZMETADATA, prototype=proto)
        if consolidated is None and not (await store.exists(ZGROUP) or await store.exists(ZARRAY)):
            return None
    except Exception:  # stores that hold Zarr v3 only (icechunk) refuse v2 keys outright
        return None
    if consolidated is not None:
        meta = _load_json(consolidated.to_bytes(), ZMETADATA, budget)
        if isinstance(meta, dict) and isinstance(meta.get("metadata"), dict):
            return documents_from_metadata(meta["metadata"])
    keys = [k async for k in store.list() if k.rpartition("/")[2] in (ZGROUP, ZARRAY, ZATTRS)]

    async def fetch(key: str) -> list[tuple[str, Any]]:
        if budget is not None:
            budget.check("/" + key)  # once over it, no more requests (those in flight finish)
        buf = await store.get(key, prototype=proto)
        return [] if buf is None else [(key, _load_json(buf.to_bytes(), key, budget))]

    found = await asyncio.gather(*(fetch(k) for k in keys))
    return documents_from_metadata(dict(item for items in found for item in items))


# --- object arrays ------------------------------------------------------------------------------


def _chunk_keys(doc: dict[str, Any], path: str) -> list[tuple[str, tuple[slice, ...]]]:
    shape, chunks = doc.get("shape"), doc.get("chunks")
    if (
        not isinstance(shape, list)
        or not isinstance(chunks, list)
        or len(shape) != len(chunks)
        or not all(isinstance(n, int) and n >= 0 for n in shape)
        or not all(isinstance(c, int) and c > 0 for c in chunks)
    ):
        raise CorruptStoreError(f"invalid shape {shape!r} or chunks {chunks!r}", path)
    sep = doc.get("dimension_separator") or "."
    prefix = path.strip("/")
    grid = [range(math.ceil(n / c)) for n, c in zip(shape, chunks)]
    out = []
    for index in np.ndindex(*(len(g) for g in grid)) if shape else [()]:
        name = sep.join(str(i) for i in index) if index else "0"
        region = tuple(slice(i * c, min(n, (i + 1) * c)) for i, c, n in zip(index, chunks, shape))
        out.append((f"{prefix}/{name}" if prefix else name, region))
    return out


def decode_object_chunk(doc: dict[str, Any], raw: bytes, path: str) -> np.ndarray:
    """One chunk of an object array: decompressed, then its object codec decoded safely."""
    compressor = doc.get("compressor")
    data: Any = raw
    if compressor is not None:
        if not isinstance(compressor, dict) or compressor.get("id") not in COMPRESSORS:
            raise UnsafeDataError(f"unsupported compressor {str(compressor)[:80]}", path)
        data = numcodecs.get_codec(dict(compressor)).decode(raw)
    for spec in reversed(doc.get("filters") or []):
        codec = spec.get("id") if isinstance(spec, dict) else None
        if codec == "pickle":
            data = safe_pickle.loads(bytes(data), path)
        elif codec in ("json2", "json"):
            data = _decode_json_chunk(bytes(data), numpy_dtype(doc, path), path)
        elif codec in VLEN_CODECS:
            data = numcodecs.get_codec({"id": codec}).decode(data)
        else:
            raise UnsafeDataError(f"unsupported filter {str(spec)[:80]} on an object array", path)
    if not isinstance(data, np.ndarray):
        raise CorruptStoreError("object array chunk did not decode to an array", path)
    return data


def _decode_json_chunk(raw: bytes, dtype: np.dtype, path: str) -> np.ndarray:
    """numcodecs' JSON codec: ``[item, ..., dtype, shape]`` (items flattened, rows as lists), within the
    limits of one node document (:func:`.limits.load_json`)."""
    items = limits.load_json(raw, "JSON-encoded chunk", path)
    if not isinstance(items, list) or len(items) < 2 or not isinstance(items[-1], list):
        raise CorruptStoreError("JSON-encoded chunk is not [items..., dtype, shape]", path)
    shape, values = items[-1], items[:-2]
    if not all(isinstance(n, int) and n >= 0 for n in shape) or math.prod(shape) != len(values):
        raise CorruptStoreError(f"JSON-encoded chunk holds {len(values)} items for shape {shape}", path)
    out = np.empty(len(values), dtype=dtype if dtype.names else object)
    for i, value in enumerate(values):
        out[i] = tuple(value) if dtype.names and isinstance(value, list) else value
    return out.reshape(shape)


def read_object_arrays(store: Store, items: list[tuple[str, dict[str, Any]]]) -> list[np.ndarray]:
    """Whole object arrays (Pickle or JSON codec), all chunks fetched concurrently.

    Elements of chunks that are not stored are ``None`` (their fill value is itself a pickle, and
    never decoded).
    """
    return sync(_read_object_arrays(store, items))


async def _read_object_arrays(store: Store, items: list[tuple[str, dict[str, Any]]]) -> list[np.ndarray]:
    proto = default_buffer_prototype()
    plans = [(path, doc, _chunk_keys(doc, path)) for path, doc in items]
    keys = [key for _, _, chunks in plans for key, _ in chunks]
    bufs = iter(await asyncio.gather(*(store.get(k, prototype=proto) for k in keys)))
    out = []
    for path, doc, chunks in plans:
        dtype = numpy_dtype(doc, path)
        array = np.empty(tuple(doc["shape"]), dtype=dtype if dtype.names else object)
        if not dtype.names:
            array.fill(None)
        for key, region in chunks:
            buf = next(bufs)
            if buf is None:
                continue
            try:
                block = decode_object_chunk(doc, buf.to_bytes(), path)
            except DECODE_ERRORS as exc:
                name = key[len(path.strip("/")) + 1 :] if path != "/" else key
                raise decode_error(exc, path, f"chunk {name}") from exc
            want = tuple(s.stop - s.start for s in region)
            chunk_shape = tuple(doc["chunks"])
            if block.size == math.prod(chunk_shape):
                block = block.reshape(chunk_shape)[tuple(slice(0, n) for n in want)]
            if block.shape != want:
                raise CorruptStoreError(f"chunk holds shape {block.shape}, expected {want}", path)
            array[region] = block
        out.append(array)
    return out
