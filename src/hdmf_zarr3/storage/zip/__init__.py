"""Single-file stores: a zip replaced atomically or changed in place."""

from . import zipped
from .overlay import ZipOverlayStore

__all__ = [
    "ZipOverlayStore",
    "zipped",
]
