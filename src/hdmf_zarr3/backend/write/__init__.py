"""Writing a builder tree: one walk into a WritePlan, then the plan stored in batches."""

from typing import TYPE_CHECKING

from ..._doors import door

if TYPE_CHECKING:
    from .layout_choice import AUTO, POLICY, checked, from_h5py, from_zarr_settings
    from .parallel import ParallelOptions
    from .pending_references import PendingReferences, not_written_yet
    from .reference_targets import ReferenceEncoder, builder_path
    from .virtual import MIN_VIRTUAL_BYTES, VirtualOptions
    from .writer import BuilderWriter

__all__ = [
    "AUTO",
    "BuilderWriter",
    "MIN_VIRTUAL_BYTES",
    "POLICY",
    "ParallelOptions",
    "PendingReferences",
    "ReferenceEncoder",
    "VirtualOptions",
    "builder_path",
    "checked",
    "from_h5py",
    "from_zarr_settings",
    "not_written_yet",
]
__getattr__ = door(__name__, __file__)
