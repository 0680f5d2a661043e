"""The zarr.json documents: group and array documents, what a node may declare, what a file's tree says.

Above :mod:`..vocabulary` and :mod:`..layout` (an array document takes its default chunks and codecs from
the layout policy; a document is checked against the codec rules); below :mod:`..data` and the dialects.
"""

from . import completion, consolidated, dimension_names, limits, orphans, struct_spelling, zarr_json
from .limits import MAX_DOCUMENT_BYTES, MetadataBudget, data_type_itemsize, load_json, within_document_limits
from .zarr_json import chunk_key, group_document

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "MetadataBudget",
    "chunk_key",
    "completion",
    "consolidated",
    "data_type_itemsize",
    "dimension_names",
    "group_document",
    "limits",
    "load_json",
    "orphans",
    "struct_spelling",
    "within_document_limits",
    "zarr_json",
]
