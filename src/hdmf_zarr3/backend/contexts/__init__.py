"""What the io classes hand the rooms above this one: small frozen contexts, and the closed-file registry.

The bottom room of the backend: it imports no other room of it, so the writer, the reader and the lazy
datasets take what they need of the io that made them from here, never from the io classes' room.
"""

from . import closed_files
from .closed_files import handle_for
from .io_contexts import (
    DatasetContext,
    DatasetOwner,
    ForeignZarrFile,
    HeldReferences,
    HeldRows,
    ReadContext,
    WriteContext,
)

__all__ = [
    "DatasetContext",
    "DatasetOwner",
    "ForeignZarrFile",
    "HeldReferences",
    "HeldRows",
    "ReadContext",
    "WriteContext",
    "closed_files",
    "handle_for",
]
