"""The zarr.json documents: what a node may declare and what a file's tree says."""

from typing import TYPE_CHECKING

from ..._doors import door

if TYPE_CHECKING:
    from . import completion, consolidated, dimension_names, limits, names, orphans, zarr_json
    from .array_view import (
        ARRAY_TO_BYTES,
        SHARDING_CODEC,
        VARIABLE_ITEM_BYTES,
        ArrayView,
        first_chunk_key,
        fixed_itemsize,
        key_separator,
        split_sharding,
        v2_fixed_itemsize,
    )
    from .limits import MAX_DOCUMENT_BYTES, MetadataBudget, data_type_itemsize, load_json, within_document_limits
    from .names import (
        ALL_CHUNKS_ATTR,
        CHUNKLESS_ATTR,
        DTYPE_ATTR,
        FORMAT_ATTR,
        FORMAT_VERSION,
        LINK_ATTR,
        SAME_FILE,
        SPECLOC_ATTR,
        VIRTUAL_ATTR,
        VIRTUAL_SOURCES_ATTR,
        normalize,
        store_key,
    )
    from .zarr_json import (
        blosc_typesize,
        chunk_key,
        default_codecs,
        group_document,
        retyped_codecs,
        with_blosc_typesize,
    )

__all__ = [
    "ALL_CHUNKS_ATTR",
    "ARRAY_TO_BYTES",
    "ArrayView",
    "CHUNKLESS_ATTR",
    "DTYPE_ATTR",
    "FORMAT_ATTR",
    "FORMAT_VERSION",
    "LINK_ATTR",
    "MAX_DOCUMENT_BYTES",
    "MetadataBudget",
    "SAME_FILE",
    "SHARDING_CODEC",
    "SPECLOC_ATTR",
    "VARIABLE_ITEM_BYTES",
    "VIRTUAL_ATTR",
    "VIRTUAL_SOURCES_ATTR",
    "blosc_typesize",
    "chunk_key",
    "completion",
    "consolidated",
    "data_type_itemsize",
    "default_codecs",
    "dimension_names",
    "first_chunk_key",
    "fixed_itemsize",
    "group_document",
    "key_separator",
    "limits",
    "load_json",
    "names",
    "normalize",
    "orphans",
    "retyped_codecs",
    "split_sharding",
    "store_key",
    "v2_fixed_itemsize",
    "with_blosc_typesize",
    "within_document_limits",
    "zarr_json",
]
__getattr__ = door(__name__, __file__)
