"""hdmf_zarr3: a Zarr format v3 storage backend for HDMF and PyNWB."""

from .conversion import convert
from .dataio import ZarrDataIO
from .errors import (
    FormatError,
    FormatVersionError,
    HdmfZarrError,
    InvalidNameError,
    LayoutWarning,
    ModeError,
    ReservedNameError,
    StoreError,
    UnsupportedDataError,
)
from .format.names import FORMAT_VERSION
from .io import ZarrIO
from .nwb import NWBZarrIO, read_nwb

__version__ = "0.1.0.dev0"

__all__ = [
    "FORMAT_VERSION",
    "FormatError",
    "FormatVersionError",
    "HdmfZarrError",
    "InvalidNameError",
    "LayoutWarning",
    "ModeError",
    "StoreError",
    "NWBZarrIO",
    "ReservedNameError",
    "UnsupportedDataError",
    "ZarrDataIO",
    "ZarrIO",
    "read_nwb",
    "__version__",
    "convert",
]
