"""Data types and values: how HDMF values become stored arrays and JSON."""

from typing import TYPE_CHECKING

from ..._doors import door

if TYPE_CHECKING:
    from . import dtypes, references, safe_pickle, values
    from .array_encoding import encode_values, is_lazy_source, source_shape
    from .dtypes import FIXED_SIZE_TYPES, StorageType
    from .references import Link, Reference, decode_element, decode_links, encode_element, encode_links
    from .selection import Picks, orthogonal_picks, touched_cells
    from .terminal_text import printable

__all__ = [
    "FIXED_SIZE_TYPES",
    "Link",
    "Picks",
    "Reference",
    "StorageType",
    "decode_element",
    "decode_links",
    "dtypes",
    "encode_element",
    "encode_links",
    "encode_values",
    "is_lazy_source",
    "orthogonal_picks",
    "printable",
    "references",
    "safe_pickle",
    "source_shape",
    "touched_cells",
    "values",
]
__getattr__ = door(__name__, __file__)
