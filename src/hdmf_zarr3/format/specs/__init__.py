"""Cached specifications as stored, and checked before HDMF sees them.

Above :mod:`..vocabulary` only; nothing else of the format uses it.

- :mod:`.cache_layout` -- where a file keeps its cached specifications, and which a conversion adds.
- :mod:`.check` -- a cached specification checked before HDMF reads it.
- :mod:`.attribute_types` -- attribute numbers of older files given the numpy type their spec declares.
"""

from . import attribute_types, cache_layout, check

__all__ = [
    "attribute_types",
    "cache_layout",
    "check",
]
