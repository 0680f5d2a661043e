"""Icechunk repositories whose chunks are read in place from HDF5 files."""

from . import repo, source_files
from .source_files import Source

__all__ = [
    "Source",
    "repo",
    "source_files",
]
