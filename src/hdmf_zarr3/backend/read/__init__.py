"""Reading a builder tree: one pass over the node documents, and the files it links into."""

from typing import TYPE_CHECKING

from ..._doors import door

if TYPE_CHECKING:
    from . import construct_errors, integrity
    from .externals import ForeignFiles
    from .reader import BuilderReader

__all__ = [
    "BuilderReader",
    "ForeignFiles",
    "construct_errors",
    "integrity",
]
__getattr__ = door(__name__, __file__)
