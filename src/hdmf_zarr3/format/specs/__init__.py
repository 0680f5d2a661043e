"""Cached specifications as stored, and checked before HDMF sees them."""

from typing import TYPE_CHECKING

from ..._doors import door

if TYPE_CHECKING:
    from . import check, dtypes, layout

__all__ = [
    "check",
    "dtypes",
    "layout",
]
__getattr__ = door(__name__, __file__)
