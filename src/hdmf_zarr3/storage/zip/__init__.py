"""Single-file stores: a zip replaced atomically or changed in place."""

from typing import TYPE_CHECKING

from ..._doors import door

if TYPE_CHECKING:
    from . import zipped
    from .overlay import ZipOverlayStore

__all__ = [
    "ZipOverlayStore",
    "zipped",
]
__getattr__ = door(__name__, __file__)
