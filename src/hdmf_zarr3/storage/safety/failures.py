"""What a failed operation on a store raises: our typed error, naming the file and the key or path."""

from __future__ import annotations

from ...errors import HdmfZarrError, StoreError


def typed(exc: BaseException, location: str | None, what: str = "the write failed") -> BaseException:
    """``exc`` as the error to raise: an ``OSError`` of the store (a full disk, an I/O error) becomes a
    :class:`~hdmf_zarr3.errors.StoreError` naming ``location`` and the file it was about; anything else
    (our own errors, ``KeyboardInterrupt``) is returned as it is."""
    if not isinstance(exc, OSError) or isinstance(exc, HdmfZarrError):
        return exc
    reason = exc.strerror or str(exc) or type(exc).__name__
    where = f" ({exc.filename})" if exc.filename else ""
    error = StoreError(f"{what}: {reason}{where}", location)
    error.errno = exc.errno  # (an OSError still: code checking for ENOSPC keeps working)
    return error
