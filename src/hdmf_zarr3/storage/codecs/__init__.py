"""Chunks and shards encoded and decoded directly, without zarr's per-array machinery."""

from . import array_check, direct_write
from .chunkwise import read_picked
from .direct_read import UnitDecoder, read_key
from .direct_write import UnitEncoder
from .read_plans import basic_selection

__all__ = [
    "UnitDecoder",
    "UnitEncoder",
    "array_check",
    "basic_selection",
    "direct_write",
    "read_key",
    "read_picked",
]
