"""Reading a builder tree: one pass over the node documents, and the files it links into."""

from . import construct_errors, integrity
from .externals import ForeignFiles
from .reader import BuilderReader

__all__ = [
    "BuilderReader",
    "ForeignFiles",
    "construct_errors",
    "integrity",
]
