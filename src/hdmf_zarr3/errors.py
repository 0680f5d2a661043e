"""Typed exceptions raised by hdmf_zarr3.

Every error names the path inside the file (when there is one) and what is wrong.
"""

from __future__ import annotations


class HdmfZarrError(Exception):
    """Base class of every error raised by hdmf_zarr3."""

    def __init__(self, message: str, path: str | None = None):
        self.path = path
        super().__init__(f"{path}: {message}" if path else message)


class FormatError(HdmfZarrError, ValueError):
    """The store holds something this format does not allow (corrupt or foreign metadata)."""


class UnsafeDataError(FormatError):
    """The store asks for something that could run code or escape the file (e.g. a pickle naming an
    arbitrary callable); it is refused, never executed."""


class DialectError(FormatError):
    """The store is Zarr, but not an HDMF file in any convention this package reads."""


class UnsupportedDataError(HdmfZarrError, TypeError):
    """A value handed to the writer has a type or dtype the format cannot store."""


class ReservedNameError(HdmfZarrError, ValueError):
    """An HDMF attribute uses a name the format reserves for itself."""


class ReferenceError_(HdmfZarrError, ValueError):
    """A reference or link cannot be encoded or resolved."""


class ModeError(HdmfZarrError, ValueError):
    """The requested operation is not allowed in the mode the file was opened with."""


class FormatVersionError(FormatError):
    """The file was written by a newer, incompatible version of the format."""


class InvalidNameError(HdmfZarrError, ValueError):
    """A group, dataset, link or attribute name is not a valid Zarr v3 node name."""


class LayoutWarning(UserWarning):
    """A storage setting (e.g. an HDF5 filter) could not be carried over; the data itself is intact."""


class StoreError(HdmfZarrError, OSError):
    """Where the file lives cannot be reached or used (missing bucket, wrong credentials, bad URL)."""
