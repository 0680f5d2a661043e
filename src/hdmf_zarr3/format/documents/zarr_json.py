"""The ``zarr.json`` documents of groups and arrays (Zarr v3 core metadata), with layout defaults.

An HDMF group is a Zarr v3 group; an HDMF dataset is a Zarr v3 array (a scalar is a 0-d array, an
empty dataset keeps its dtype with a zero-length shape). Documents are plain dicts ready to be
serialized as JSON; nothing here touches a store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...errors import UnsupportedDataError
from ..data import StorageType
from ..layout import TARGET_CHUNK_BYTES, chunk_shape, itemsize
from .array_view import SEPARATORS, SHARDING_CODEC, VARIABLE_ITEM_BYTES, key_separator

__all__ = ["SEPARATORS", "TARGET_CHUNK_BYTES", "VARIABLE_ITEM_BYTES", "itemsize", "key_separator"]


def chunk_key_encoding(separator: str = "/") -> dict[str, Any]:
    """The ``chunk_key_encoding`` of an array whose chunk keys are joined with ``separator``."""
    if separator not in SEPARATORS:
        raise UnsupportedDataError(f"chunk key separator must be one of {SEPARATORS}, got {separator!r}")
    return {"name": "default", "configuration": {"separator": separator}}


def group_document(attributes: dict[str, Any]) -> dict[str, Any]:
    return {"zarr_format": 3, "node_type": "group", "attributes": attributes}


def default_chunks(shape: Sequence[int], storage: StorageType, target_bytes: int | None = None) -> tuple[int, ...]:
    """The default chunk shape (see :mod:`.layout_policy`)."""
    return chunk_shape(shape, storage, target_bytes)


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


def array_document(
    shape: Sequence[int],
    storage: StorageType,
    attributes: dict[str, Any],
    chunks: Sequence[int] | None = None,
    codecs: list[dict[str, Any]] | None = None,
    dimension_names: Sequence[str | None] | None = None,
    fill_value: Any = None,
    separator: str = "/",
) -> dict[str, Any]:
    """The ``zarr.json`` of an array holding a dataset of the given storage type."""
    shape = [int(s) for s in shape]
    chunks = list(default_chunks(shape, storage) if chunks is None else chunks)
    if len(chunks) != len(shape) or any(c < 1 for c in chunks):
        raise UnsupportedDataError(f"chunk shape {chunks} does not fit array shape {shape}")
    doc: dict[str, Any] = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": shape,
        "data_type": storage.data_type,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
        "chunk_key_encoding": chunk_key_encoding(separator),
        "fill_value": storage.fill_value if fill_value is None else fill_value,
        "codecs": default_codecs(storage) if codecs is None else codecs,
        "attributes": attributes,
    }
    if dimension_names is not None:
        if len(dimension_names) != len(shape):
            raise UnsupportedDataError(f"{len(dimension_names)} dimension names for {len(shape)} dimensions")
        doc["dimension_names"] = list(dimension_names)
    return doc


def chunk_key(coords: Sequence[int], separator: str = "/") -> str:
    """Key of a chunk relative to its array (``default`` encoding; ``c`` for 0-d)."""
    return separator.join(["c", *map(str, coords)])
