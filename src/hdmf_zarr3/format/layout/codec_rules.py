"""What a codec chain may declare, and how many stored bytes one chunk or shard may take.

Zarr checks an array's codecs and fill value when the array is first opened, with its own error types
and after work that costs hundreds of microseconds per array. Here the same document is checked
cheaply, for every array when a file is opened, so that a damaged file says which node is wrong and
what is wrong with it (:class:`CorruptStoreError`):

- a codec chain is array→array codecs, exactly one array→bytes codec, then bytes→bytes codecs (for
  chains of the codecs named below; others are left to zarr);
- the configuration of the core codecs (``bytes``, ``transpose``, ``blosc``, ``zstd``, ``gzip``,
  ``crc32c``, ``sharding_indexed``) has the values the Zarr v3 specification allows;
- a numeric fill value is a number of the array's type, in its range.

:func:`stored_bound` is the most bytes one storage object (a chunk, or a shard) of an array may hold,
derived from the decoded size of a chunk and the worst-case expansion of its codecs; a reader never
reads more than that for one object (see :mod:`hdmf_zarr3.storage.safety.guarded`).
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from ...errors import CorruptStoreError
from ..vocabulary import ARRAY_TO_BYTES, SHARDING_CODEC, fixed_itemsize, v2_fixed_itemsize

ARRAY_TO_ARRAY = frozenset({"transpose"})
#: General-purpose compressors: at worst they add a little to their input (stored blocks, headers).
COMPRESSORS = frozenset(
    {
        "blosc",
        "zstd",
        "gzip",
        "numcodecs.blosc",
        "numcodecs.zstd",
        "numcodecs.gzip",
        "numcodecs.zlib",
        "numcodecs.lz4",
        "numcodecs.bz2",
        "numcodecs.lzma",
    }
)
#: Checksums append a few bytes.
CHECKSUMS = frozenset(
    {
        "crc32c",
        "numcodecs.crc32",
        "numcodecs.crc32c",
        "numcodecs.adler32",
        "numcodecs.fletcher32",
        "numcodecs.jenkins_lookup3",
    }
)
BYTES_TO_BYTES = COMPRESSORS | CHECKSUMS

BLOSC_CNAMES = ("lz4", "lz4hc", "blosclz", "zstd", "snappy", "zlib")
BLOSC_SHUFFLES = ("noshuffle", "shuffle", "bitshuffle")

#: Bytes of one stored object of variable-length elements (strings, references): nothing in the
#: metadata bounds them, so this fixed ceiling does (1 GiB; NWB strings are far shorter).
MAX_VARIABLE_OBJECT_BYTES = 2**30
#: What a compressor may add to its input: 1/64 of it (zstd, lz4 and deflate add under 0.5 %, bzip2
#: 1 %) plus 4 KiB of headers.
COMPRESSOR_SLACK = (64, 4096)
#: What a codec this module does not know (a third-party filter or compressor) may make of its input:
#: up to 16 times as many bytes (a filter widening uint8 to complex128), plus 64 KiB.
UNKNOWN_EXPANSION = (16, 2**16)
_VARIABLE = frozenset({"string", "bytes", "vlen-utf8", "vlen-bytes"})
_FLOAT_TOKENS = frozenset({"NaN", "Infinity", "-Infinity"})


def _int(value: Any) -> bool:
    return type(value) is int


def _config(codec: dict[str, Any]) -> dict[str, Any]:
    config = codec.get("configuration", {})
    return config if isinstance(config, dict) else {}


def check_codec_config(codec: dict[str, Any], ndim: int, path: str) -> None:
    """The configuration of one core codec, as the Zarr v3 specification allows it."""
    name, config = codec["name"], _config(codec)

    def bad(what: str) -> CorruptStoreError:
        return CorruptStoreError(f"codec {name!r}: {what}, got {str(config)[:120]}", path)

    if name == "bytes" and config.get("endian", "little") not in ("little", "big"):
        raise bad("endian must be 'little' or 'big'")
    if name == "blosc":
        if config.get("cname") not in BLOSC_CNAMES:
            raise bad(f"cname must be one of {', '.join(BLOSC_CNAMES)}")
        if not _int(config.get("clevel")) or not 0 <= config["clevel"] <= 9:
            raise bad("clevel must be an integer from 0 to 9")
        if config.get("shuffle") not in BLOSC_SHUFFLES:
            raise bad(f"shuffle must be one of {', '.join(BLOSC_SHUFFLES)}")
        if "typesize" in config and (not _int(config["typesize"]) or not 1 <= config["typesize"] <= 255):
            raise bad("typesize must be an integer from 1 to 255")
        if "blocksize" in config and (not _int(config["blocksize"]) or config["blocksize"] < 0):
            raise bad("blocksize must be a non-negative integer")
    if name == "zstd":
        if "level" in config and (not _int(config["level"]) or not -131072 <= config["level"] <= 22):
            raise bad("level must be an integer from -131072 to 22")
        if not isinstance(config.get("checksum", False), bool):
            raise bad("checksum must be true or false")
    if name == "gzip" and (not _int(config.get("level")) or not 0 <= config["level"] <= 9):
        raise bad("level must be an integer from 0 to 9")
    if name == "transpose":
        order = config.get("order")
        if not isinstance(order, list) or sorted(o if _int(o) else -1 for o in order) != list(range(ndim)):
            raise bad(f"order must be a permutation of 0..{ndim - 1}")
    if name == SHARDING_CODEC and config.get("index_location", "end") not in ("start", "end"):
        raise bad("index_location must be 'start' or 'end'")


def check_chain(codecs: list[dict[str, Any]], path: str, what: str = "codecs") -> None:
    """Array→array codecs, then exactly one array→bytes codec, then bytes→bytes codecs (when every
    codec of the chain is one this module knows)."""
    names = [c["name"] for c in codecs]
    if not all(n in ARRAY_TO_ARRAY | ARRAY_TO_BYTES | BYTES_TO_BYTES for n in names):
        return  # zarr knows the others; its own error is translated when the array is opened
    serializers = [i for i, n in enumerate(names) if n in ARRAY_TO_BYTES]
    if len(serializers) != 1:
        raise CorruptStoreError(
            f"{what} {names} must hold exactly one array-to-bytes codec (bytes, vlen-utf8, "
            f"vlen-bytes or {SHARDING_CODEC}), not {len(serializers)}",
            path,
        )
    at = serializers[0]
    if any(n not in ARRAY_TO_ARRAY for n in names[:at]) or any(n not in BYTES_TO_BYTES for n in names[at + 1 :]):
        raise CorruptStoreError(
            f"{what} {names} are out of order: array-to-array codecs, then one array-to-bytes "
            "codec, then bytes-to-bytes codecs",
            path,
        )


def check_fill_value(data_type: Any, fill_value: Any, path: str) -> None:
    """A numeric fill value must be a number of the array's type (as zarr reads it), in its range."""
    if not isinstance(data_type, str) or not data_type.startswith(("int", "uint", "float")):
        return
    if fill_value is None:
        raise CorruptStoreError(f"fill_value is missing or null ({data_type})", path)
    try:
        dtype = np.dtype(data_type)
    except Exception:  # noqa: BLE001 - numpy's parser raises TypeError, ValueError, SyntaxError... on hostile names
        return
    if dtype.kind in "iu":
        value = fill_value
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        elif isinstance(value, str) and re.fullmatch(r"-?\d{1,40}", value):
            value = int(value)
        if not isinstance(value, int):
            raise CorruptStoreError(f"fill_value {str(fill_value)[:40]!r} is not an integer ({data_type})", path)
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise CorruptStoreError(f"fill_value {value} is out of range for {data_type}", path)
    elif dtype.kind == "f":
        ok = (isinstance(fill_value, (int, float)) and not isinstance(fill_value, bool)) or (
            isinstance(fill_value, str)
            and (fill_value in _FLOAT_TOKENS or bool(re.fullmatch(r"0x[0-9a-fA-F]+", fill_value)))
        )
        if not ok:
            raise CorruptStoreError(f"fill_value {str(fill_value)[:40]!r} is not a number ({data_type})", path)


# --- how many stored bytes a chunk or shard may take ------------------------------------------------
def _expanded(nbytes: int, codec: dict[str, Any]) -> int:
    """The most bytes ``codec`` makes of ``nbytes`` bytes (a bytes→bytes or array→array codec)."""
    name = codec.get("name")
    if name in ARRAY_TO_ARRAY:
        return nbytes
    if name in CHECKSUMS:
        return nbytes + 16
    if name in COMPRESSORS:
        ratio, extra = COMPRESSOR_SLACK
        return nbytes + nbytes // ratio + extra
    factor, extra = UNKNOWN_EXPANSION
    return nbytes * factor + extra


def chain_bound(codecs: list[Any], shape: list[int], itemsize: int | None) -> int:
    """The most bytes ``codecs`` store for one chunk of ``shape`` (``itemsize`` ``None``: variable)."""
    if itemsize is None:
        return MAX_VARIABLE_OBJECT_BYTES
    nbytes = math.prod(shape) * itemsize
    codecs = [c for c in codecs if isinstance(c, dict)]
    serializer = next((i for i, c in enumerate(codecs) if c.get("name") in ARRAY_TO_BYTES), None)
    if serializer is None:  # no codec we know serializes: every codec counts as unknown
        return min(MAX_VARIABLE_OBJECT_BYTES, _bound_through(nbytes, codecs))
    for codec in codecs[:serializer]:
        nbytes = _expanded(nbytes, codec)
    codec = codecs[serializer]
    if codec["name"] in ("vlen-utf8", "vlen-bytes"):
        return MAX_VARIABLE_OBJECT_BYTES
    if codec["name"] == SHARDING_CODEC:
        config = _config(codec)
        inner = [int(c) for c in config.get("chunk_shape", shape)]
        count = math.prod(-(-s // c) for s, c in zip(shape, inner))
        per_chunk = chain_bound(config.get("codecs", []), inner, nbytes // max(1, math.prod(shape)))
        index = chain_bound(config.get("index_codecs", []), [count, 2], 8)
        nbytes = count * per_chunk + index
    return _bound_through(nbytes, codecs[serializer + 1 :])


def _bound_through(nbytes: int, codecs: list[dict[str, Any]]) -> int:
    for codec in codecs:
        nbytes = _expanded(nbytes, codec)
    return nbytes


def stored_bound(doc: dict[str, Any]) -> int:
    """The most bytes one storage object (chunk or shard) of the array ``doc`` may take.

    Uncompressed fixed-size elements: exactly a chunk's size (``bytes``), plus a shard's index. Each
    compressor adds at most :data:`COMPRESSOR_SLACK`, each checksum 16 bytes, each unknown codec
    :data:`UNKNOWN_EXPANSION`. Variable-length (or unknown) element types:
    :data:`MAX_VARIABLE_OBJECT_BYTES`.
    """
    if doc.get("zarr_format") == 2:
        filters = [{"name": f"numcodecs.{f.get('id')}"} for f in (doc.get("filters") or []) if isinstance(f, dict)]
        compressor = doc.get("compressor")
        compressors = [{"name": f"numcodecs.{compressor.get('id')}"}] if isinstance(compressor, dict) else []
        return chain_bound(
            [*filters, {"name": "bytes"}, *compressors],
            list(doc.get("chunks") or []),
            v2_fixed_itemsize(doc.get("dtype")),
        )
    shape = doc["chunk_grid"]["configuration"]["chunk_shape"]
    return chain_bound(doc.get("codecs", []), list(shape), fixed_itemsize(doc.get("data_type")))
