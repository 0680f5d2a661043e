"""The words every rule of the format is written in: data types, reserved names, what an array document says.

The bottom room of the format: it imports nothing else of the package but :mod:`hdmf_zarr3.errors`.

- :mod:`.dtypes` -- HDMF dtypes and the Zarr v3 data types they are stored as (:class:`StorageType`);
  :mod:`.stored_dtypes` reads a stored array's type back and checks it.
- :mod:`.names` -- reserved attribute names, the format version, node names and paths.
- :mod:`.array_view` -- the facts of one array document, read once (:class:`ArrayView`), and the one
  spelling of the sharding codec.
"""

from . import dtypes, names
from .array_view import (
    ARRAY_TO_BYTES,
    SEPARATORS,
    SHARDING_CODEC,
    VARIABLE_ITEM_BYTES,
    ArrayView,
    first_chunk_key,
    fixed_itemsize,
    key_separator,
    split_sharding,
    v2_fixed_itemsize,
)
from .dtypes import FIXED_SIZE_TYPES, StorageType
from .names import (
    ALL_CHUNKS_ATTR,
    CHUNKLESS_ATTR,
    COMPOUND_COPY_FORMAT_VERSION,
    DTYPE_ATTR,
    FORMAT_ATTR,
    FORMAT_VERSION,
    INCOMPLETE_ATTR,
    LINK_ATTR,
    READABLE_MAJOR_VERSIONS,
    SAME_FILE,
    SPECLOC_ATTR,
    VIRTUAL_ATTR,
    VIRTUAL_SOURCES_ATTR,
    check_node_path,
    normalize,
    parse_version,
    store_key,
)
from .stored_dtypes import from_attribute

__all__ = [
    "ALL_CHUNKS_ATTR",
    "ARRAY_TO_BYTES",
    "ArrayView",
    "CHUNKLESS_ATTR",
    "COMPOUND_COPY_FORMAT_VERSION",
    "DTYPE_ATTR",
    "FIXED_SIZE_TYPES",
    "FORMAT_ATTR",
    "FORMAT_VERSION",
    "INCOMPLETE_ATTR",
    "LINK_ATTR",
    "READABLE_MAJOR_VERSIONS",
    "SAME_FILE",
    "SEPARATORS",
    "SHARDING_CODEC",
    "SPECLOC_ATTR",
    "StorageType",
    "VARIABLE_ITEM_BYTES",
    "VIRTUAL_ATTR",
    "VIRTUAL_SOURCES_ATTR",
    "check_node_path",
    "dtypes",
    "first_chunk_key",
    "fixed_itemsize",
    "from_attribute",
    "key_separator",
    "names",
    "normalize",
    "parse_version",
    "split_sharding",
    "store_key",
    "v2_fixed_itemsize",
]
