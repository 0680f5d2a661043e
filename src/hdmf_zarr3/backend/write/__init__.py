"""Writing a builder tree: one walk into a WritePlan, then the plan stored in batches."""

from .hdf5_in_place import MIN_VIRTUAL_BYTES, VirtualOptions
from .parallel import ParallelOptions
from .pending_references import PendingReferences, not_written_yet
from .reference_targets import ReferenceEncoder, builder_path
from .writer import BuilderWriter

__all__ = [
    "BuilderWriter",
    "MIN_VIRTUAL_BYTES",
    "ParallelOptions",
    "PendingReferences",
    "ReferenceEncoder",
    "VirtualOptions",
    "builder_path",
    "not_written_yet",
]
