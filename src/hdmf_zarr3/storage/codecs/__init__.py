"""Chunks and shards encoded and decoded directly, without zarr's per-array machinery."""

from typing import TYPE_CHECKING

from ..._doors import door

if TYPE_CHECKING:
    from . import array_check, decoding, direct_write
    from .chunkwise import read_picked
    from .decoding import DECODE_ERRORS, checked_pipeline, decode_error
    from .direct_read import UnitDecoder, basic_selection, read_key
    from .direct_write import UnitEncoder
    from .missing_chunks import ChunkPromises
    from .single_chunk import bytes_to_bytes, decode_chunk, decode_single_chunk, encode_chunk, encode_single_chunk

__all__ = [
    "ChunkPromises",
    "DECODE_ERRORS",
    "UnitDecoder",
    "UnitEncoder",
    "array_check",
    "basic_selection",
    "bytes_to_bytes",
    "checked_pipeline",
    "decode_chunk",
    "decode_error",
    "decode_single_chunk",
    "decoding",
    "direct_write",
    "encode_chunk",
    "encode_single_chunk",
    "read_key",
    "read_picked",
]
__getattr__ = door(__name__, __file__)
