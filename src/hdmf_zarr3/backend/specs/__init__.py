"""The cached specifications: read, written, and kept across an export or conversion."""

from typing import TYPE_CHECKING

from ..._doors import door

if TYPE_CHECKING:
    from . import cache, copying

__all__ = [
    "cache",
    "copying",
]
__getattr__ = door(__name__, __file__)
