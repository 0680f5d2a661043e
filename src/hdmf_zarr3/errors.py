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
    """Base class of errors about what a file holds (raised while reading it)."""


class CorruptStoreError(FormatError):
    """Metadata that is not valid: unparsable or non-UTF-8 ``zarr.json``, wrong JSON types,
    impossible shapes, links or references to nodes that do not exist."""


class MetadataLimitError(CorruptStoreError):
    """Metadata larger than this reader accepts: one JSON document (a ``zarr.json``, a lock, a journal
    entry, a JSON-encoded chunk) with more bytes or JSON values than its limit, or the node documents of
    one file together beyond the file's metadata budget. The message says which limit; the limits keep
    the memory a file can take bounded (see ``hdmf_zarr3.format.documents.limits``)."""


class SpecificationError(CorruptStoreError):
    """A cached specification the reader cannot trust: a field of the wrong JSON type, nesting too deep, a
    type inheriting from itself or from a type nobody defines, a namespace including itself. Names the
    namespace, the document and the type; ``.path`` is the group of the cached specifications."""


class UnsafeDataError(FormatError):
    """The store asks for something that could run code or escape the file (e.g. a pickle naming an
    arbitrary callable); it is refused, never executed."""


class UnsupportedCodecError(FormatError):
    """An array declares a codec this package does not decode."""


class UnsafeCodecError(UnsupportedCodecError, UnsafeDataError):
    """An array declares a codec that could run code on read (pickle); it is never decoded with it."""


class UnsafeLinkError(UnsafeDataError):
    """A link or reference ``source`` points outside the directories the caller allowed (by default
    the directory holding the file): an absolute path, ``..``, a URL, or a symlink leading out."""


class IncompleteFileError(FormatError):
    """A write or append did not finish (the writer crashed or was killed); what is there may be
    partial. Open with ``allow_incomplete=True`` to read it anyway."""


class DialectError(FormatError):
    """The store is Zarr, but not an HDMF file in any convention this package reads."""


class UnsupportedDataError(HdmfZarrError, TypeError, ValueError):
    """A value handed to the writer has a type, dtype or value the format cannot store (or a storage
    setting that does not fit it). Both a ``TypeError`` and a ``ValueError``: code written for hdmf-zarr
    and h5py catches the latter for bad values."""


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


class RemoteStoreError(StoreError):
    """A request to an object store (S3, GCS, Azure, HTTP) failed after its bounded retries: a server error,
    a dropped connection, a truncated answer, a timeout. The message names the node (array or group) and the
    key; ``.path`` is the object's URL. Nothing is known to be wrong with the file: retry later."""


class FileLockedError(StoreError):
    """Another writer holds the file's write lock. If that writer crashed, break the lock explicitly
    with :func:`hdmf_zarr3.break_lock`."""


class SelfOverwriteError(HdmfZarrError, ValueError):
    """A write would destroy what it reads: a destination that is its source, lies inside it or contains
    it, or mode ``w`` on a file this process still has open. Refused before anything is changed."""


class UnknownTypeError(FormatError):
    """A node names a neurodata type, or a namespace, that no loaded specification defines (neither cached
    in the file nor loaded by the caller): HDMF could not build it, or would leave it out."""


class IncompleteFileWarning(UserWarning):
    """A file read with ``allow_incomplete=True`` lacks nodes or types: what could not be read is named."""


class NotZarrError(StoreError):
    """The local path holds something other than a Zarr file: an HDF5 file (read it with ``NWBHDF5IO`` or
    convert it with :func:`hdmf_zarr3.convert`), another file, or a directory of other files."""


class ClosedFileError(HdmfZarrError, ValueError):
    """A dataset (or other lazy object) read from a file is used after that file was closed."""


class ParallelWriteError(HdmfZarrError, RuntimeError):
    """A worker process of a parallel write (``number_of_jobs > 1``) failed: the iterator raised there (the
    original exception is chained), or the process ended abruptly (killed, out of memory). The write is
    undone as any failed write is."""


class ParallelWriteWarning(UserWarning):
    """``number_of_jobs > 1`` was asked for, but some datasets are written serially in this process because
    worker processes cannot reopen the store (the datasets and the reason are named)."""


class FileReplacedError(StoreError):
    """The file a reader has open was replaced (mode ``w`` in another process) since it was opened: its
    metadata no longer describes what is stored there. Reopen the file."""


class SourceChangedError(StoreError):
    """A virtual array's bytes cannot be read as recorded: the file holding them changed since the
    repository was made, or it lies where the reader did not allow (see ``hdmf_zarr3.storage.virtual.repo``)."""


class ViewRequestError(HdmfZarrError, ValueError):
    """A request of ``hdmf-zarr3 view`` cannot be answered as asked: it names no node of the file, a node the
    view cannot show (a table view of an array), or a parameter out of range. ``status`` is the HTTP status
    the viewer answers with (404 for a node that does not exist, 400 otherwise)."""

    def __init__(self, message: str, path: str | None = None, status: int = 400):
        super().__init__(message, path)
        self.status = status
