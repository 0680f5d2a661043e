"""What a failed operation on a store raises: our typed error, naming the file and the key or path."""

from __future__ import annotations

from ...errors import HdmfZarrError, StoreError


def typed(exc: BaseException, location: str | None, what: str = "the write failed") -> BaseException:
    """``exc`` as the error to raise: an ``OSError`` of the store (a full disk, an I/O error, a file system
    turned read-only) becomes a :class:`~hdmf_zarr3.errors.StoreError` naming ``location`` and the file it
    was about, with its ``errno``; anything else (our own errors, ``KeyboardInterrupt``) is returned as it is."""
    if not isinstance(exc, OSError) or isinstance(exc, HdmfZarrError):
        return exc
    reason = exc.strerror or str(exc) or type(exc).__name__
    where = f" ({exc.filename})" if exc.filename else ""
    error = StoreError(f"{what}: {reason}{where}", location)
    error.errno = exc.errno  # (an OSError still: code checking for ENOSPC keeps working)
    return error


def undo_failed(exc: BaseException, location: str | None) -> BaseException:
    """The error of an undo the store refused (a file system turned read-only refuses the undo's writes as
    it refused the write's): what is left is the file marked incomplete with its journal, which
    :func:`~hdmf_zarr3.recover` applies once the file can be written again."""
    where = location or "the file"
    said = (
        f"the change could not be undone, so the file stays marked incomplete with its journal "
        f"(run hdmf_zarr3.recover({where!r}) once it can be written again)"
    )
    if isinstance(exc, StoreError) and exc.errno is not None:  # (already ours, from a path the undo touched)
        error = StoreError(f"{said}: {str(exc).removeprefix(f'{location}: ')}", location)
        error.errno = exc.errno
        return error
    return typed(exc, location, said)


def with_undo_failure(failure: BaseException, undo_error: BaseException, location: str | None) -> BaseException:
    """The error to raise when a write failed (``failure``) and so did its undo (``undo_error``): one of ours
    saying both, with the ``errno`` of the first that has one. A Ctrl-C stays what it is (the undo's error
    chained), and so does an undo's error that is not the store's."""
    if not isinstance(failure, Exception):
        return failure
    if not isinstance(undo_error, StoreError):
        return undo_error
    first = typed(failure, location)
    said = [str(e).removeprefix(f"{location}: ") for e in (first, undo_error)]
    error = StoreError(f"{said[0]}; {said[1]}", location)
    error.errno = getattr(first, "errno", None) or undo_error.errno
    return error
