"""ZarrDataIO: per-dataset storage settings, and what it takes from hdmf-zarr users."""

from typing import TYPE_CHECKING

from ..._doors import door

if TYPE_CHECKING:
    from . import bridge, sources
    from .dataio import ZarrDataIO, codec_json

__all__ = [
    "ZarrDataIO",
    "bridge",
    "codec_json",
    "sources",
]
__getattr__ = door(__name__, __file__)
