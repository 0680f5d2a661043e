"""ZarrIO and NWBZarrIO: opening, reading, writing, hdmf-zarr's API, delegated to the rooms below."""

from .nwb import NWBZarrIO, read_nwb
from .zarr_io import ZarrIO

__all__ = [
    "NWBZarrIO",
    "ZarrIO",
    "read_nwb",
]
