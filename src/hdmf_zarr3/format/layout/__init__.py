"""Every layout rule: chunks, shards and codecs, default, from HDF5, or refused."""

from typing import TYPE_CHECKING

from ..._doors import door

if TYPE_CHECKING:
    from . import chunkless, codec_rules, policy, stored_chunks, tensorstore_rules, virtual_codecs
    from .chunkless import chunkless_document, stored_value
    from .codec_rules import stored_bound
    from .hdf5 import HDF5Layout, hdf5_settings, zarr_layout
    from .policy import TARGET_CHUNK_BYTES, chunk_shape, itemsize, one_object_keys
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
    "chunk_shape",
    "chunkless",
    "chunkless_document",
    "codec_rules",
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
    "stored_bound",
    "stored_chunks",
    "stored_value",
    "tensorstore_rules",
    "virtual_codecs",
    "zarr_layout",
]
__getattr__ = door(__name__, __file__)
