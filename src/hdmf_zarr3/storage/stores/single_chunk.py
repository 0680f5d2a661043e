"""Encode arrays that fit in one chunk without zarr's per-array machinery.

A file of many small datasets (tables, thousands of TimeSeries) spends most of its write time in
zarr-python's per-array setup, not in encoding. An array whose shape equals its chunk shape is one
chunk object; for the codecs our layouts use (``bytes``, ``vlen-utf8``, ``blosc``, ``zstd``,
``gzip``, ``crc32c``) this module produces that object's bytes with the same numcodecs
implementations zarr-python uses, so any Zarr v3 reader decodes them. Anything else returns ``None``
and goes through zarr. Rows appended to an unsharded array rewrite single chunks the same way
(:mod:`.row_appends`).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numcodecs
import numpy as np
from numcodecs.vlen import VLenUTF8

from ...format.documents import chunk_key
from ...format.vocabulary import ArrayView
from .decoding import check_blosc_frame

_SHUFFLE = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}
_VLEN_UTF8 = VLenUTF8()


def bytes_to_bytes(codec: dict[str, Any]) -> Any:
    """The numcodecs implementation of the Zarr v3 bytes-to-bytes ``codec``, or ``None`` if it has none here."""
    name, config = codec["name"], codec.get("configuration", {})
    if name == "blosc":
        return numcodecs.Blosc(
            cname=config["cname"],
            clevel=config["clevel"],
            shuffle=_SHUFFLE[config["shuffle"]],
            blocksize=config.get("blocksize", 0),
            typesize=config.get("typesize"),
        )
    if name == "zstd":
        if config.get("checksum"):
            return None
        return numcodecs.Zstd(level=config.get("level", 0))
    if name == "gzip":
        return numcodecs.GZip(level=config.get("level", 5))
    if name == "crc32c":
        return numcodecs.CRC32C()
    return None


def encode_single_chunk(doc: dict[str, Any], values: np.ndarray) -> tuple[str, bytes] | None:
    """``(chunk key, bytes)`` of an array stored as exactly one chunk, or ``None`` to let zarr do it."""
    view = ArrayView.from_document(doc)
    shape, separator = view.shape, view.separator
    if shape != view.chunk_grid or values.shape != shape or 0 in shape or separator is None:
        return None
    raw = encode_chunk(doc, values)
    return None if raw is None else (chunk_key([0] * len(shape), separator), raw)


def encode_chunk(doc: dict[str, Any], values: np.ndarray) -> bytes | None:
    """The stored bytes of one chunk (``values``, of the chunk's shape) of the unsharded array ``doc``
    describes, or ``None`` when its codecs are not among those this module implements."""
    codecs = ArrayView.from_document(doc).codecs
    serializer, rest = codecs[0], codecs[1:]
    if serializer["name"] == "bytes":
        if values.dtype.kind not in "biuf" and values.dtype.names is None:
            return None
        raw = np.ascontiguousarray(values).astype(values.dtype.newbyteorder("<"), copy=False).tobytes()
    elif serializer["name"] == "vlen-utf8":
        if values.dtype != object:
            return None
        raw = bytes(_VLEN_UTF8.encode(np.ascontiguousarray(values).ravel()))
    else:
        return None
    for codec in rest:
        implementation = bytes_to_bytes(codec)
        if implementation is None:
            return None
        raw = bytes(implementation.encode(raw))
    return raw


def _zarr_dtype(data_type: Any) -> Any:
    """zarr's data type for a Zarr v3 ``data_type``; names (all but ``struct``) parsed once: zarr matches
    each against its whole registry, which costs more than decoding a tiny chunk."""
    from zarr.dtype import parse_dtype

    try:
        return _named_zarr_dtype(data_type) if isinstance(data_type, str) else parse_dtype(data_type, zarr_format=3)
    except (SyntaxError, LookupError) as exc:  # numpy's parser, under zarr's, on a hostile name ("01")
        raise ValueError(f"unknown data_type {str(data_type)[:80]!r} ({type(exc).__name__})") from None


@functools.lru_cache(maxsize=64)
def _named_zarr_dtype(data_type: str) -> Any:
    from zarr.dtype import parse_dtype

    return parse_dtype(data_type, zarr_format=3)


def decode_single_chunk(doc: dict[str, Any], raw: bytes | None) -> np.ndarray | None:
    """The values of an array stored as one chunk, or ``None`` to let zarr read it.

    The inverse of :func:`encode_single_chunk`, for the same codecs; a missing chunk reads as the
    fill value, as in zarr.
    """
    view = ArrayView.from_document(doc)
    if view.zarr_format == 2 or view.shape != view.chunk_grid or 0 in view.shape:
        return None
    return decode_chunk(doc, raw)


def decode_chunk(doc: dict[str, Any], raw: bytes | None) -> np.ndarray | None:
    """The values of one chunk (of the chunk's shape) of the unsharded Zarr v3 array ``doc`` describes, from
    its stored bytes (``None``: missing, so the fill value), or ``None`` when its codecs are not among
    those this module implements."""
    view = ArrayView.from_document(doc)
    shape, codecs = view.chunk_grid, view.codecs
    decoders = [bytes_to_bytes(c) for c in codecs[1:]]
    if any(d is None for d in decoders) or codecs[0]["name"] not in ("bytes", "vlen-utf8"):
        return None
    zdtype = _zarr_dtype(doc["data_type"])
    if raw is None:
        fill = zdtype.from_json_scalar(doc["fill_value"], zarr_format=3)
        return np.full(shape, fill, dtype=zdtype.to_native_dtype() if codecs[0]["name"] == "bytes" else object)
    native = zdtype.to_native_dtype()
    for i, decoder in reversed(list(enumerate(decoders))):
        if i == 0 and codecs[0]["name"] == "bytes" and isinstance(decoder, numcodecs.Blosc):
            check_blosc_frame(raw, math.prod(shape) * native.itemsize)  # before blosc allocates what it says
        raw = bytes(decoder.decode(raw))
    if codecs[0]["name"] == "vlen-utf8":
        return np.asarray(_VLEN_UTF8.decode(raw), dtype=object).reshape(shape)
    return np.frombuffer(raw, dtype=native.newbyteorder("<")).astype(native, copy=False).reshape(shape)
