"""hdmf_zarr3: a Zarr format v3 storage backend for HDMF and PyNWB."""

from ._version import __version__
from .backend.settings.dataio import ZarrDataIO
from .backend.zarrio.nwb import NWBZarrIO, read_nwb
from .backend.zarrio.zarr_io import ZarrIO
from .dandi import DandiFinding, DandiReport, check_dandi
from .errors import (
    ClosedFileError,
    CorruptStoreError,
    DialectError,
    FileLockedError,
    FileReplacedError,
    FormatError,
    FormatVersionError,
    HdmfZarrError,
    IncompleteFileError,
    IncompleteFileWarning,
    InvalidNameError,
    LayoutWarning,
    ModeError,
    NotZarrError,
    ParallelWriteError,
    ParallelWriteWarning,
    RemoteStoreError,
    ReservedNameError,
    SelfOverwriteError,
    SourceChangedError,
    SpecificationError,
    StoreError,
    UnknownTypeError,
    UnsafeCodecError,
    UnsafeDataError,
    UnsafeLinkError,
    UnsupportedCodecError,
    UnsupportedDataError,
)
from .format.documents.names import FORMAT_VERSION
from .hdf5.conversion import convert
from .storage.safety.locks import break_lock
from .storage.safety.recovery import recover

__all__ = [
    "FORMAT_VERSION",
    "CorruptStoreError",
    "SpecificationError",
    "ClosedFileError",
    "DandiFinding",
    "DandiReport",
    "DialectError",
    "FileLockedError",
    "FileReplacedError",
    "FormatError",
    "FormatVersionError",
    "HdmfZarrError",
    "IncompleteFileError",
    "IncompleteFileWarning",
    "InvalidNameError",
    "LayoutWarning",
    "ModeError",
    "NotZarrError",
    "ParallelWriteError",
    "ParallelWriteWarning",
    "SourceChangedError",
    "RemoteStoreError",
    "StoreError",
    "NWBZarrIO",
    "ReservedNameError",
    "SelfOverwriteError",
    "UnsafeCodecError",
    "UnsafeDataError",
    "UnknownTypeError",
    "UnsafeLinkError",
    "UnsupportedCodecError",
    "UnsupportedDataError",
    "ZarrDataIO",
    "ZarrIO",
    "read_nwb",
    "recover",
    "__version__",
    "break_lock",
    "check_dandi",
    "convert",
]
