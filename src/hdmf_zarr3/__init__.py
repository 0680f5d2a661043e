"""hdmf_zarr3: a Zarr format v3 storage backend for HDMF and PyNWB."""

from .conversion import convert
from .dataio import ZarrDataIO
from .errors import (
    CorruptStoreError,
    DialectError,
    FileLockedError,
    FormatError,
    FormatVersionError,
    HdmfZarrError,
    IncompleteFileError,
    InvalidNameError,
    LayoutWarning,
    ModeError,
    NotZarrError,
    ReservedNameError,
    StoreError,
    UnsafeCodecError,
    UnsafeDataError,
    UnsafeLinkError,
    UnsupportedCodecError,
    UnsupportedDataError,
)
from .format.names import FORMAT_VERSION
from .io import ZarrIO
from .nwb import NWBZarrIO, read_nwb
from .storage.locks import break_lock

__version__ = "0.1.0.dev0"

__all__ = [
    "FORMAT_VERSION",
    "CorruptStoreError",
    "DialectError",
    "FileLockedError",
    "FormatError",
    "FormatVersionError",
    "HdmfZarrError",
    "IncompleteFileError",
    "InvalidNameError",
    "LayoutWarning",
    "ModeError",
    "NotZarrError",
    "StoreError",
    "NWBZarrIO",
    "ReservedNameError",
    "UnsafeCodecError",
    "UnsafeDataError",
    "UnsafeLinkError",
    "UnsupportedCodecError",
    "UnsupportedDataError",
    "ZarrDataIO",
    "ZarrIO",
    "read_nwb",
    "__version__",
    "break_lock",
    "convert",
]
