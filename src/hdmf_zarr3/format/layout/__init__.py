"""Every layout rule: chunks, shards and codecs, default, from HDF5, or refused.

Above :mod:`..vocabulary` only; the documents, the data and the dialects use these rules.
"""

from . import chunkless, codec_rules, policy, stored_chunks, tensorstore_rules, virtual_codecs
from .chunkless import chunkless_document, stored_value
from .codec_rules import stored_bound
from .hdf5_filters import HDF5Layout, hdf5_settings, zarr_layout
from .policy import (
    TARGET_CHUNK_BYTES,
    blosc_typesize,
    chunk_shape,
    default_codecs,
    itemsize,
    one_object_keys,
    retyped_codecs,
    with_blosc_typesize,
)
from .relayout import AUTO, EVERY, Relayout, kept_layout
from .relayout_text import parse_codec, parse_shape
from .stored_chunks import all_chunks_stored, grid, marked, missing_chunks, missing_is_damage
from .types import ZarrLayout
from .virtual_codecs import Filter, NotVirtual

__all__ = [
    "AUTO",
    "EVERY",
    "Filter",
    "HDF5Layout",
    "NotVirtual",
    "Relayout",
    "TARGET_CHUNK_BYTES",
    "ZarrLayout",
    "all_chunks_stored",
    "blosc_typesize",
    "chunk_shape",
    "chunkless",
    "chunkless_document",
    "codec_rules",
    "default_codecs",
    "grid",
    "hdf5_settings",
    "itemsize",
    "kept_layout",
    "marked",
    "missing_chunks",
    "missing_is_damage",
    "one_object_keys",
    "parse_codec",
    "parse_shape",
    "policy",
    "retyped_codecs",
    "stored_bound",
    "stored_chunks",
    "stored_value",
    "tensorstore_rules",
    "virtual_codecs",
    "with_blosc_typesize",
    "zarr_layout",
]
