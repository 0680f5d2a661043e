"""Chunks and shards encoded and decoded directly, without zarr's per-array machinery."""

from . import array_check, direct_write
from .chunkwise import read_picked
from .direct_read import UnitDecoder, basic_selection, read_key
from .direct_write import UnitEncoder

__all__ = [
    "UnitDecoder",
    "UnitEncoder",
    "array_check",
    "basic_selection",
    "direct_write",
    "read_key",
    "read_picked",
]
