"""The default layout of an array: chunk shape, shard shape and codecs, chosen without tuning.

Measured on 2 cores with int16 ephys (samples x 384 channels; see ``docs/performance.md``):

- **Codec.** ``blosc`` with ``lz4`` and bit-shuffle encodes ~1.2 GB/s at 1.79x; blosc-zstd level 1
  compresses 1.85x at half the speed, plain zstd level 3 (hdmf-zarr's default) 1.76x at ~0.2 GB/s,
  and gzip, the usual NWB HDF5 setting, ~0.05 GB/s. Delta filtering did not help (1.77x). Numbers
  and booleans therefore get blosc-lz4-bitshuffle; strings and JSON records get zstd level 3.
- **Chunks** hold about :data:`TARGET_CHUNK_BYTES` (4 MiB): large enough that a remote read pays
  for bytes rather than round trips, small enough to read a window cheaply. A 2-d array is a time
  series (time x channels): long, wide ones are split into blocks of :data:`CHANNEL_BLOCK` channels, so
  one channel across all time reads 1/6 of a 384-channel file instead of all of it, while a 1 s
  window across all channels still reads a few chunks. In shards such a series takes chunks of
  :data:`SHARDED_SERIES_CHUNK_BYTES` (1 MiB): more chunks cost no more objects there, neighbouring
  chunks are read by one request, and a 1 s window (30000 rows) decodes ~1.2x what it returns
  instead of ~2x with 4 MiB chunks (32768 rows). Arrays of 3 or more dimensions (frames of
  imaging data) keep whole frames in a chunk, halving the largest frame axes only when one frame
  alone exceeds the target.
- **Shards** group chunks into storage objects for arrays of at least :data:`SHARD_FROM_BYTES`, so a
  1 GiB dataset is about eight objects of ~:data:`TARGET_SHARD_BYTES` (far under S3's and DANDI's
  5 GiB object limit, and small enough that writing one whole shard at a time bounds memory). A shard
  spans the full trailing axes and whole chunks along the first, unless one row of chunks across the
  trailing axes alone exceeds the target: then the trailing axes are split too, so no default shard
  exceeds the target by more than one chunk. Smaller arrays are not sharded: reading one chunk of a
  sharded array costs an extra request for the shard index.
- **Chunk keys** are nested (``c/0/0``, Zarr v3's default and what zarr-python, TensorStore and
  zarrs write), so an array's directory lists only ``zarr.json`` and ``c``, unless the deepest key
  of the array would then be more than :data:`MAX_KEY_DEPTH` levels deep, the most DANDI accepts:
  then they are flat (``c.0.0``), one level below the array (:func:`chunk_key_separator`).

Everything here is pure: it computes shapes and codec documents, never touches a store.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..vocabulary import SHARDING_CODEC, VARIABLE_ITEM_BYTES, StorageType
from .stored_chunks import grid

__all__ = [
    "CHANNEL_BLOCK",
    "MAX_KEY_DEPTH",
    "SHARDED_SERIES_CHUNK_BYTES",
    "SHARD_FROM_BYTES",
    "TARGET_CHUNK_BYTES",
    "TARGET_SHARD_BYTES",
    "VARIABLE_ITEM_BYTES",
    "blosc_typesize",
    "chunk_key_separator",
    "chunk_shape",
    "default_codecs",
    "itemsize",
    "nested_key_depth",
    "one_object_keys",
    "retyped_codecs",
    "shard_shape",
    "sharded_by_default",
    "sharding_codec",
    "with_blosc_typesize",
]

#: Target size of one uncompressed chunk.
TARGET_CHUNK_BYTES = 4 * 2**20
#: Channels per chunk of a wide 2-d array (time x channels).
CHANNEL_BLOCK = 64
#: Target size of one uncompressed chunk of a long multi-channel time series stored in shards.
SHARDED_SERIES_CHUNK_BYTES = 2**20
#: Arrays at least this large (uncompressed) are sharded by default.
SHARD_FROM_BYTES = 256 * 2**20
#: Target size of one uncompressed shard.
TARGET_SHARD_BYTES = 128 * 2**20
#: The most levels deep a key may be in a DANDI Zarr asset (dandi-cli's ``MAX_ZARR_DEPTH``), counting
#: every name of the key, its last included (``a/b/zarr.json`` is 3 levels deep).
MAX_KEY_DEPTH = 7


def itemsize(storage: StorageType) -> int:
    """Bytes per element, or :data:`VARIABLE_ITEM_BYTES` for variable-length ones."""
    if storage.kind in ("numeric", "struct"):
        return storage.numpy_dtype.itemsize
    return VARIABLE_ITEM_BYTES


def chunk_shape(
    shape: Sequence[int], storage: StorageType, target_bytes: int | None = None, sharded: bool = False
) -> tuple[int, ...]:
    """The default chunk shape of an array of ``shape``: about ``target_bytes`` per chunk.

    ``sharded``: the array is stored in shards; a long multi-channel time series then takes chunks
    of :data:`SHARDED_SERIES_CHUNK_BYTES` (unless ``target_bytes`` is given).
    """
    if len(shape) == 0:
        return ()
    dims = [max(1, int(s)) for s in shape]
    size = itemsize(storage)
    row = [1] + dims[1:]
    series = len(dims) == 2 and dims[1] > 2 * CHANNEL_BLOCK
    if target_bytes is None:
        target_bytes = SHARDED_SERIES_CHUNK_BYTES if sharded and series else TARGET_CHUNK_BYTES
    if series and dims[0] * CHANNEL_BLOCK * size >= target_bytes:
        row[1] = CHANNEL_BLOCK  # a long time series: blocks of channels (a short, wide array keeps rows)
    while math.prod(row) * size > target_bytes and max(row[1:], default=1) > 1:
        i = 1 + max(range(len(row) - 1), key=lambda k: row[k + 1])
        row[i] = max(1, row[i] // 2)
    rows = max(1, target_bytes // (math.prod(row) * size))
    row[0] = min(rows, dims[0])
    return tuple(row)


def sharded_by_default(shape: Sequence[int], storage: StorageType) -> bool:
    """Whether :func:`shard_shape` shards an array of ``shape`` (by its size and kind)."""
    if storage.kind not in ("numeric", "struct") or len(shape) == 0:
        return False
    return math.prod(int(s) for s in shape) * itemsize(storage) >= SHARD_FROM_BYTES


def shard_shape(
    shape: Sequence[int],
    chunks: Sequence[int],
    storage: StorageType,
    from_bytes: int | None = None,
    target_bytes: int | None = None,
) -> tuple[int, ...] | None:
    """The default shard shape for ``shape`` chunked by ``chunks``, or ``None`` to leave it unsharded.

    Only fixed-size numeric data is sharded (variable-length chunks vary too much in size for a
    shard's size to mean anything).
    """
    from_bytes = SHARD_FROM_BYTES if from_bytes is None else from_bytes
    target_bytes = TARGET_SHARD_BYTES if target_bytes is None else target_bytes
    if storage.kind not in ("numeric", "struct") or len(shape) == 0 or len(chunks) != len(shape):
        return None
    size = itemsize(storage)
    if math.prod(int(s) for s in shape) * size < from_bytes:
        return None
    chunk_rows = int(chunks[0])
    chunk_bytes = chunk_rows * math.prod(int(c) for c in chunks[1:]) * size
    # chunks per shard along each trailing axis: all of them, halved while a row of chunks exceeds the target
    counts = [math.ceil(max(1, int(s)) / int(c)) for s, c in zip(shape[1:], chunks[1:])]
    while chunk_bytes * math.prod(counts) > target_bytes and max(counts, default=1) > 1:
        widest = max(range(len(counts)), key=lambda k: counts[k])
        counts[widest] = math.ceil(counts[widest] / 2)
    trailing = [n * int(c) for n, c in zip(counts, chunks[1:])]
    row_block = chunk_rows * math.prod(trailing) * size
    per_shard = max(1, target_bytes // max(1, row_block))
    rows = min(per_shard, math.ceil(max(1, int(shape[0])) / chunk_rows)) * chunk_rows
    shards = (rows, *trailing)
    return None if tuple(shards) == tuple(chunks) else shards


def default_codecs(storage: StorageType) -> list[dict[str, Any]]:
    """Serializer and compressors: blosc-lz4 with bit-shuffle for numbers, zstd for strings."""
    if storage.kind in ("string", "reference", "rows"):
        return [
            {"name": "vlen-utf8", "configuration": {}},
            {"name": "zstd", "configuration": {"level": 3, "checksum": False}},
        ]
    return [
        {"name": "bytes", "configuration": {"endian": "little"}},
        {
            "name": "blosc",
            "configuration": {
                "cname": "lz4",
                "clevel": 5,
                "shuffle": "bitshuffle",
                "typesize": blosc_typesize(storage),
                "blocksize": 0,
            },
        },
    ]


def retyped_codecs(codecs: list[dict[str, Any]], storage: StorageType) -> list[dict[str, Any]]:
    """``codecs`` of an array whose elements become ``storage``: every blosc ``typesize`` (those inside a
    shard's codecs too) made that of the new element; nothing else of a codec depends on the type."""
    out = []
    for codec in codecs:
        config = codec.get("configuration")
        if codec.get("name") == SHARDING_CODEC and isinstance(config, dict):
            codec = {**codec, "configuration": {**config, "codecs": retyped_codecs(config.get("codecs", []), storage)}}
        out.append(with_blosc_typesize(codec, storage))
    return out


def blosc_typesize(storage: StorageType) -> int:
    """The element size blosc shuffles by: the stored element's, or 1 for variable-length data.

    The blosc codec spec requires ``typesize`` whenever it shuffles, and readers such as TensorStore
    rely on it; 1 for variable-length data is also what zarr-python records.
    """
    return storage.numpy_dtype.itemsize if storage.kind in ("numeric", "struct") else 1


def with_blosc_typesize(codec: dict[str, Any], storage: StorageType) -> dict[str, Any]:
    """``codec`` with the ``typesize`` of ``storage`` if it is blosc; any other codec unchanged."""
    if codec.get("name") != "blosc":
        return codec
    return {**codec, "configuration": {**codec.get("configuration", {}), "typesize": blosc_typesize(storage)}}


def one_object_keys(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with flat chunk keys (``c.0.0``, ``"."`` separator) when its array is stored as one object (one
    chunk, or one shard): the key then sits beside the array's ``zarr.json`` instead of in a ``c/`` directory
    of its own, one directory fewer per such array (an eighth of the inodes of a file of many small arrays,
    issue #30). Arrays that grow later keep flat keys, which any Zarr v3 reader reads."""
    if not doc.get("shape") or any(n > 1 for n in grid(doc)):
        return doc
    return {**doc, "chunk_key_encoding": {"name": "default", "configuration": {"separator": "."}}}


def nested_key_depth(path: str, ndim: int) -> int:
    """How many levels deep the chunk keys of an ``ndim``-d array at ``path`` are with ``/`` separators.

    ``c/i/j`` adds one level for ``c`` and one per axis to the array's own depth; a 0-d array's one
    key ``c`` adds one (as a flat key does for an array of any rank).
    """
    names = [name for name in path.split("/") if name]
    return len(names) + 1 + ndim


def chunk_key_separator(path: str, ndim: int, requested: str | None = None) -> str:
    """The separator of the chunk keys of an ``ndim``-d array at ``path``: ``requested`` if given, else
    ``"/"`` unless nested keys would be more than :data:`MAX_KEY_DEPTH` levels deep, then ``"."``.

    Flat keys are one level below the array whatever its rank, so an array whose flat keys are still
    too deep is too deep for any separator (its depth is the group tree's, not the layout's).
    """
    if requested is not None:
        return requested
    return "/" if nested_key_depth(path, ndim) <= MAX_KEY_DEPTH else "."


def sharding_codec(chunks: Sequence[int], codecs: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``sharding_indexed`` codec holding chunks of ``chunks`` encoded with ``codecs``.

    The index (offset and size of every chunk) sits at the end of the shard, checksummed.
    """
    index = [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]
    return {
        "name": SHARDING_CODEC,
        "configuration": {
            "chunk_shape": [int(c) for c in chunks],
            "codecs": codecs,
            "index_codecs": index,
            "index_location": "end",
        },
    }
