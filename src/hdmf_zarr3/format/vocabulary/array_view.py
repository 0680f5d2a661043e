"""What an array's metadata document says, read once: a typed, read-only view of ``zarr.json``.

Whether an array is sharded, the shape of its storage objects and of its read unit, its codecs and
the size of one element used to be worked out from the raw dict wherever they were needed; every
module now asks :class:`ArrayView` instead, so each fact has one definition. Pure: no I/O.

A Zarr v2 ``.zarray`` document is read too (chunk shape, ``dtype`` and separator; it has no
sharding and no v3 codecs).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Self

import numpy as np

from .dtypes import FIXED_SIZE_TYPES

#: Name of the Zarr v3 sharding codec (the only place the package spells it).
SHARDING_CODEC = "sharding_indexed"
#: Array-to-bytes codecs (serializers) known to the package.
ARRAY_TO_BYTES = frozenset({"bytes", "vlen-utf8", "vlen-bytes", SHARDING_CODEC})
#: Assumed bytes of one variable-length element (a string, a JSON row) wherever a size is estimated:
#: sizing chunks, blocks of a copy, buffers of a conversion and "small enough to cache" checks all
#: aim at a byte budget, and one estimate keeps them agreeing.
VARIABLE_ITEM_BYTES = 64
#: Separators of Zarr v3's ``default`` chunk key encoding. ``/`` (the default) nests a directory per
#: axis; ``.`` keeps every chunk of an array in one directory, two levels deep whatever the rank,
#: which archives that limit key depth (DANDI) need for arrays deep in an NWB file.
SEPARATORS = ("/", ".")


def is_sharding(codec: Any) -> bool:
    """Whether ``codec`` (one entry of a ``codecs`` list) is the sharding codec."""
    return isinstance(codec, dict) and codec.get("name") == SHARDING_CODEC


def split_sharding(
    chunk_grid: tuple[int, ...], codecs: tuple[dict[str, Any], ...]
) -> tuple[tuple[int, ...], tuple[dict[str, Any], ...], tuple[int, ...] | None]:
    """``(read chunks, their codecs, shards or None)`` of an array stored in ``chunk_grid`` with ``codecs``.

    A sharded array reads its inner chunks with the sharding codec's ``codecs``; any other reads
    whole storage objects with ``codecs`` themselves.
    """
    if codecs and is_sharding(codecs[0]):
        config = codecs[0].get("configuration") or {}
        return (
            tuple(int(c) for c in config.get("chunk_shape", chunk_grid)),
            tuple(config.get("codecs") or ()),
            chunk_grid,
        )
    return chunk_grid, codecs, None


def key_separator(doc: dict[str, Any]) -> str | None:
    """The separator of a v3 array's ``default`` chunk keys, or ``None`` for any other encoding."""
    encoding = doc.get("chunk_key_encoding")
    if not isinstance(encoding, dict) or encoding.get("name") != "default":
        return None
    separator = (encoding.get("configuration") or {}).get("separator", "/")
    return separator if separator in SEPARATORS else None


def first_chunk_key(doc: dict[str, Any]) -> str | None:
    """The key (relative to its array) of the chunk or shard holding an array's first element: Zarr v2, or
    v3 with ``default`` or ``v2`` chunk keys; ``None`` for any other encoding."""
    ndim = len(doc.get("shape") or [])
    if doc.get("zarr_format") == 2:
        return (doc.get("dimension_separator") or ".").join("0" * ndim) or "0"
    encoding = doc.get("chunk_key_encoding")
    if isinstance(encoding, dict) and encoding.get("name") == "v2":
        separator = (encoding.get("configuration") or {}).get("separator", ".")
        return separator.join("0" * ndim) or "0" if separator in SEPARATORS else None
    separator = key_separator(doc)
    return None if separator is None else separator.join(["c", *"0" * ndim])


def fixed_itemsize(data_type: Any) -> int | None:
    """Bytes per element of a Zarr v3 ``data_type``; ``None`` for variable-length or unknown types."""
    if isinstance(data_type, str):
        if data_type in FIXED_SIZE_TYPES:
            return np.dtype(data_type).itemsize
        raw = re.fullmatch(r"r(\d{1,6})", data_type)
        return int(raw.group(1)) // 8 or 1 if raw else None
    if isinstance(data_type, dict) and data_type.get("name") == "struct":
        config = data_type.get("configuration")
        fields = config.get("fields") if isinstance(config, dict) else None
        if isinstance(fields, list) and fields:
            sizes = [fixed_itemsize(f.get("data_type")) if isinstance(f, dict) else None for f in fields]
            return None if None in sizes else sum(sizes)  # type: ignore[arg-type]
    return None


def v2_fixed_itemsize(dtype: Any) -> int | None:
    """Bytes per element of a Zarr v2 ``dtype``; ``None`` for object or unreadable dtypes."""
    try:
        parsed = np.dtype([tuple(f) for f in dtype] if isinstance(dtype, list) else dtype)
    except Exception:  # noqa: BLE001 - numpy raises TypeError, ValueError or others for hostile dtype strings
        return None
    return None if parsed.hasobject else max(1, parsed.itemsize)


@dataclass(frozen=True)
class ArrayView:
    """The facts of one array document. Codec entries are the document's own dicts: read, never change them.

    Attributes
    ----------
    zarr_format : int
        2 or 3.
    shape : tuple of int
        The array's shape.
    data_type : str or dict
        The v3 ``data_type`` (the v2 ``dtype`` for a v2 document).
    chunk_grid : tuple of int
        The shape of one storage object: the shard shape when sharded, else the chunk shape.
    read_chunks : tuple of int
        The read unit: the inner chunk shape when sharded, else the chunk shape.
    shards : tuple of int or None
        The shard shape, ``None`` when not sharded.
    codecs : tuple of dict
        The outer codecs (just the sharding codec when sharded).
    inner_codecs : tuple of dict
        The codecs of one chunk: the sharding codec's ``codecs`` when sharded, else :attr:`codecs`.
    fill_value : Any
        The stored fill value, as in the document.
    fixed_itemsize : int or None
        Bytes per element, ``None`` for variable-length (or unknown) element types.
    dimension_names : tuple or None
        The dimension names, if the document has them.
    separator : str or None
        The separator of ``default`` chunk keys, ``None`` for any other encoding and for Zarr v2.
    """

    zarr_format: int
    shape: tuple[int, ...]
    data_type: Any
    chunk_grid: tuple[int, ...]
    read_chunks: tuple[int, ...]
    shards: tuple[int, ...] | None
    codecs: tuple[dict[str, Any], ...]
    inner_codecs: tuple[dict[str, Any], ...]
    fill_value: Any
    fixed_itemsize: int | None
    dimension_names: tuple[str | None, ...] | None
    separator: str | None

    @classmethod
    def from_document(cls, doc: dict[str, Any]) -> Self:
        """The view of ``doc``, a Zarr v3 ``zarr.json`` (or v2 ``.zarray``) array document."""
        shape = tuple(int(s) for s in doc.get("shape") or ())
        names = doc.get("dimension_names")
        names = tuple(names) if isinstance(names, list) else None
        if doc.get("zarr_format") == 2:
            grid = tuple(int(c) for c in doc.get("chunks") or ())
            return cls(
                2,
                shape,
                doc.get("dtype"),
                grid,
                grid,
                None,
                (),
                (),
                doc.get("fill_value"),
                v2_fixed_itemsize(doc.get("dtype")),
                names,
                None,
            )
        grid = tuple(int(c) for c in doc["chunk_grid"]["configuration"]["chunk_shape"])
        codecs = tuple(doc.get("codecs") or ())
        read_chunks, inner, shards = split_sharding(grid, codecs)
        data_type = doc.get("data_type")
        return cls(
            3,
            shape,
            data_type,
            grid,
            read_chunks,
            shards,
            codecs,
            inner,
            doc.get("fill_value"),
            fixed_itemsize(data_type),
            names,
            key_separator(doc),
        )

    @property
    def sharded(self) -> bool:
        """Whether the chunks are grouped into shards."""
        return self.shards is not None

    @property
    def sharding(self) -> dict[str, Any]:
        """The sharding codec's configuration (``index_location``, ``index_codecs``, ...); empty when unsharded."""
        return (self.codecs[0].get("configuration") or {}) if self.sharded else {}

    @property
    def itemsize(self) -> int:
        """Bytes per element: the fixed size, or :data:`VARIABLE_ITEM_BYTES` for variable-length elements."""
        return VARIABLE_ITEM_BYTES if self.fixed_itemsize is None else self.fixed_itemsize

    @property
    def _serializer_at(self) -> int | None:
        return next((i for i, c in enumerate(self.inner_codecs) if c.get("name") in ARRAY_TO_BYTES), None)

    @property
    def serializer(self) -> dict[str, Any] | None:
        """The array-to-bytes codec of one chunk, ``None`` if there is none the package knows."""
        at = self._serializer_at
        return None if at is None else self.inner_codecs[at]

    @property
    def filters(self) -> tuple[dict[str, Any], ...]:
        """The array-to-array codecs of one chunk (before the serializer)."""
        at = self._serializer_at
        return () if at is None else self.inner_codecs[:at]

    @property
    def compressors(self) -> tuple[dict[str, Any], ...]:
        """The bytes-to-bytes codecs of one chunk (after the serializer)."""
        at = self._serializer_at
        return () if at is None else self.inner_codecs[at + 1 :]
