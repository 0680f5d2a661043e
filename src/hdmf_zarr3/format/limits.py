"""What a node document may declare: types, sizes and nesting a reader accepts before using it.

A ``zarr.json`` comes from whoever wrote the file. Before anything is allocated, opened or decoded
for a node, its document is checked here, so that a hostile or damaged file fails with a
:class:`CorruptStoreError` (or a codec error) naming the node, instead of a numpy or zarr error,
an allocation of petabytes, a recursion overflow, or code run by a pickle codec.

=========================  =====================================================================
limit                      why
=========================  =====================================================================
array size ≤ 2**50 bytes   1 PiB, far above any NWB dataset; larger shapes only make numpy fail
chunk count ≤ 2**40        per-chunk bookkeeping (keys, grids) must stay enumerable
attribute nesting ≤ 32     HDMF attributes are at most 2-D arrays inside a typed envelope (depth 5)
document nesting ≤ 64      codec chains (sharding within sharding) stay shallow
=========================  =====================================================================

Codecs named ``pickle`` (``numcodecs.pickle``) are refused in every slot: array→array, array→bytes,
bytes→bytes, and the inner and index codecs of sharding.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import CorruptStoreError, UnsafeCodecError
from . import codec_rules
from .array_view import SHARDING_CODEC

MAX_ARRAY_BYTES = 2**50
MAX_CHUNKS = 2**40
MAX_ATTRIBUTE_DEPTH = 32
MAX_DOCUMENT_DEPTH = 64
MAX_DIMENSION = 2**63 - 1
UNSAFE_CODECS = frozenset({"pickle", "numcodecs.pickle"})


def depth_exceeds(value: Any, limit: int) -> bool:
    """Whether JSON ``value`` nests lists/objects deeper than ``limit`` (iterative: no recursion).

    Only lists and objects are visited (a node's metadata is mostly strings and numbers: read once per
    node, this is on the path of every open)."""
    if not isinstance(value, (list, dict)):
        return False
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, (list, dict)):
                stack.append((child, depth + 1))
    return False


def check_node(doc: dict[str, Any], path: str) -> None:
    """Check a Zarr v3 node document (already known to be an object with ``zarr_format`` 3)."""
    attrs = doc.get("attributes", {})
    for key, value in attrs.items() if isinstance(attrs, dict) else ():
        if depth_exceeds(value, MAX_ATTRIBUTE_DEPTH):
            raise CorruptStoreError(f"attribute {key!r} nests deeper than {MAX_ATTRIBUTE_DEPTH} levels", path)
    # the attributes (two levels below the document, at most MAX_ATTRIBUTE_DEPTH deep) are within its bound
    rest = {k: v for k, v in doc.items() if k != "attributes" or not isinstance(attrs, dict)}
    if depth_exceeds(rest, MAX_DOCUMENT_DEPTH):
        raise CorruptStoreError(f"zarr.json nests deeper than {MAX_DOCUMENT_DEPTH} levels", path)
    if doc.get("node_type") == "array":
        check_array(doc, path)


def _dimensions(value: Any, what: str, path: str, minimum: int) -> list[int]:
    if not isinstance(value, list) or not all(type(v) is int for v in value):
        raise CorruptStoreError(f"{what} must be a list of integers, got {str(value)[:80]}", path)
    if any(v < minimum or v > MAX_DIMENSION for v in value):
        raise CorruptStoreError(f"{what} {value} has a value below {minimum} or above 2**63 - 1", path)
    return value


def check_array(doc: dict[str, Any], path: str) -> None:
    """Types and sizes of an array document: shape, chunk grid, data type, codecs."""
    shape = _dimensions(doc.get("shape"), "shape", path, 0)
    grid = doc.get("chunk_grid")
    if not isinstance(grid, dict) or not isinstance(grid.get("configuration"), dict):
        raise CorruptStoreError(f"chunk_grid must be an object with a configuration, got {str(grid)[:80]}", path)
    if grid.get("name") != "regular":
        raise CorruptStoreError(f"unsupported chunk grid {grid.get('name')!r} (only 'regular')", path)
    chunks = _dimensions(grid["configuration"].get("chunk_shape"), "chunk_shape", path, 1)
    if len(chunks) != len(shape):
        raise CorruptStoreError(f"chunk_shape {chunks} does not have the {len(shape)} dimensions of shape", path)
    data_type = doc.get("data_type")
    if not isinstance(data_type, str) and not (isinstance(data_type, dict) and isinstance(data_type.get("name"), str)):
        raise CorruptStoreError(f"data_type must be a name or an object with a name, got {str(data_type)[:80]}", path)
    size = math.prod(shape) * data_type_itemsize(data_type)
    if size > MAX_ARRAY_BYTES:
        raise CorruptStoreError(f"shape {shape} declares {size} bytes, more than this reader accepts (2**50)", path)
    codecs = doc.get("codecs")
    if not isinstance(codecs, list) or not codecs:
        raise CorruptStoreError(f"codecs must be a non-empty list, got {str(codecs)[:80]}", path)
    count = math.prod(-(-s // c) for s, c in zip(shape, chunks)) * check_codecs(codecs, path, chunks)
    codec_rules.check_fill_value(data_type, doc.get("fill_value"), path)
    if count > MAX_CHUNKS:
        raise CorruptStoreError(
            f"shape {shape} with chunks {chunks} makes {count} chunks, more than this reader accepts (2**40)", path
        )


def check_codecs(codecs: list[Any], path: str, chunks: list[int], what: str = "codecs") -> int:
    """Refuse malformed codec entries, chains and configurations (:mod:`.codec_rules`) and pickle in any
    slot; return the number of chunks stored per chunk of ``chunks`` (inner chunks per shard when
    sharded, else 1)."""
    inner = 1
    for codec in codecs:
        if not isinstance(codec, dict) or not isinstance(codec.get("name"), str):
            raise CorruptStoreError(f"codec entry must be an object with a name, got {str(codec)[:80]}", path)
        name = codec["name"]
        if name in UNSAFE_CODECS or name.rsplit(".", 1)[-1] == "pickle":
            raise UnsafeCodecError(f"codec {name!r} would run code from the file on read; it is never used", path)
        config = codec.get("configuration", {})
        if not isinstance(config, dict):
            raise CorruptStoreError(f"configuration of codec {name!r} must be an object", path)
        codec_rules.check_codec_config(codec, len(chunks), path)
        if name == SHARDING_CODEC:
            for key in ("codecs", "index_codecs"):
                if not isinstance(config.get(key, []), list):
                    raise CorruptStoreError(f"sharding {key} must be a list", path)
            sub = _dimensions(config.get("chunk_shape"), "sharding chunk_shape", path, 1)
            if len(sub) != len(chunks):
                raise CorruptStoreError(f"sharding chunk_shape {sub} does not have {len(chunks)} dimensions", path)
            if any(c % s for c, s in zip(chunks, sub)):
                raise CorruptStoreError(f"shard shape {chunks} is not a whole multiple of its chunk_shape {sub}", path)
            inner = math.prod(-(-c // s) for c, s in zip(chunks, sub))
            check_codecs(config.get("index_codecs", []), path, [1] * len(chunks), "sharding index_codecs")
            inner *= check_codecs(config.get("codecs", []), path, sub, "sharding codecs")
    codec_rules.check_chain(codecs, path, what)
    return inner


def provisional_shape(bounds: list[int | None], chunks: list[int], data_type: str | dict[str, Any]) -> list[int]:
    """The largest shape a reader accepts, for a stream whose length along ``None`` axes is unknown yet:
    what a writer stores until the stream ends, so that a crashed stream still reads (as fill values)."""
    shape = [b if b is not None else c for b, c in zip(bounds, chunks)]
    for axis, bound in enumerate(bounds):
        if bound is None:
            others = math.prod(s for i, s in enumerate(shape) if i != axis) or 1
            other_chunks = math.prod(-(-s // c) for i, (s, c) in enumerate(zip(shape, chunks)) if i != axis)
            by_size = MAX_ARRAY_BYTES // (others * data_type_itemsize(data_type))
            by_count = MAX_CHUNKS // max(1, other_chunks) * chunks[axis]
            shape[axis] = max(chunks[axis], min(by_size, by_count) // chunks[axis] * chunks[axis])
    return shape


def data_type_itemsize(data_type: str | dict[str, Any]) -> int:
    """Bytes per element, at least 1 (variable-length and unknown types count one byte)."""
    if isinstance(data_type, dict):
        fields = (
            data_type.get("configuration", {}).get("fields")
            if isinstance(data_type.get("configuration"), dict)
            else None
        )
        if isinstance(fields, list):
            return max(1, sum(data_type_itemsize(f.get("data_type", "")) if isinstance(f, dict) else 1 for f in fields))
        return 1
    try:
        return max(1, np.dtype(data_type).itemsize)
    except (TypeError, ValueError):
        return 1
