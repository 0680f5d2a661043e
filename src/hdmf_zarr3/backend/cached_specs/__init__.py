"""The cached specifications: read, written, and kept across an export or conversion."""

from . import cache, copying

__all__ = [
    "cache",
    "copying",
]
