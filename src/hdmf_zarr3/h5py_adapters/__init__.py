"""h5py below the backend: region references, virtual chunks, destinations, a conversion's source, and h5py's
private names."""

from . import regions
from .destination import Written, refuse_nul_attributes, write_replacing
from .h5py_private import dataset_filters
from .source import source_error, source_errors
from .virtual_chunks import VirtualArray, describe, plan_virtual

__all__ = [
    "VirtualArray",
    "Written",
    "dataset_filters",
    "describe",
    "plan_virtual",
    "refuse_nul_attributes",
    "regions",
    "source_error",
    "source_errors",
    "write_replacing",
]
