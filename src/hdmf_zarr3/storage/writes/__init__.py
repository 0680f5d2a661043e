"""Many keys stored at once: appended rows, whole write units."""

from . import row_appends
from .row_appends import RowAppend
from .unit_writer import UnitWriter

__all__ = [
    "RowAppend",
    "UnitWriter",
    "row_appends",
]
