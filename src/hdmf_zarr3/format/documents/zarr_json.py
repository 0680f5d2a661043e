"""The ``zarr.json`` documents of groups and arrays (Zarr v3 core metadata), with the layout defaults.

An HDMF group is a Zarr v3 group; an HDMF dataset is a Zarr v3 array (a scalar is a 0-d array, an
empty dataset keeps its dtype with a zero-length shape). Documents are plain dicts ready to be
serialized as JSON; nothing here touches a store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...errors import UnsupportedDataError
from ..layout import TARGET_CHUNK_BYTES, chunk_shape, default_codecs, itemsize, with_blosc_typesize
from ..vocabulary import SEPARATORS, VARIABLE_ITEM_BYTES, StorageType, key_separator

# The writer spells these ``zarr_json.<name>`` beside the documents they go into; each is defined once, in
# the vocabulary (separators, item sizes) or the layout policy (default chunks and codecs).
__all__ = [
    "SEPARATORS",
    "TARGET_CHUNK_BYTES",
    "VARIABLE_ITEM_BYTES",
    "default_codecs",
    "itemsize",
    "key_separator",
    "with_blosc_typesize",
]


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
