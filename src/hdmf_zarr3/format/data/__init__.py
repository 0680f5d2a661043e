"""Values: how HDMF values become JSON and stored elements, and back.

Attribute values and compound rows as JSON (:mod:`.values`), object references and links
(:mod:`.references`), a dataset's values as the array stored (:mod:`.array_encoding`), hdmf-zarr's
pickled chunks decoded without running them (:mod:`.safe_pickle`), selections grouped by chunk
(:mod:`.selection`) and text made safe for a terminal (:mod:`.terminal_text`). Above the vocabulary, the
layout and the documents; below the dialects.
"""

from . import references, safe_pickle, values
from .array_encoding import encode_values, is_lazy_source, source_shape
from .references import Link, Reference, decode_element, decode_links, encode_element, encode_links
from .selection import Picks, orthogonal_picks, touched_cells
from .terminal_text import printable
from .values import decode_row, encode_attribute, encode_row, encode_string

__all__ = [
    "Link",
    "Picks",
    "Reference",
    "decode_element",
    "decode_links",
    "decode_row",
    "encode_attribute",
    "encode_element",
    "encode_links",
    "encode_row",
    "encode_string",
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
