"""Icechunk repositories whose chunks are read in place from HDF5 files."""

from typing import TYPE_CHECKING

from ..._doors import door

if TYPE_CHECKING:
    from . import repo, sources
    from .sources import Source

__all__ = [
    "Source",
    "repo",
    "sources",
]
__getattr__ = door(__name__, __file__)
