"""Lazy, h5py-like datasets handed to HDMF on read, and what changes them in place."""

from .appended_rows import AppendedRows, RowTally
from .changes import DatasetChanges
from .lazy import RegionSelection, ZarrDataset
from .resolving import ResolvingDataset, wrap

__all__ = [
    "AppendedRows",
    "DatasetChanges",
    "RegionSelection",
    "ResolvingDataset",
    "RowTally",
    "ZarrDataset",
    "wrap",
]
