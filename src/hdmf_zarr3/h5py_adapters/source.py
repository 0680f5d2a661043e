"""The HDF5 file a conversion reads: h5py's failures become our error, naming that file and the node.

h5py reports a failed read (an I/O error, a damaged chunk, a file it cannot open or close) as a plain
``OSError`` or ``RuntimeError`` naming neither the file nor the node, and the writer on the other side
would report it as its own failure (``StoreError`` naming the destination). :func:`source_errors` tells
them apart by the h5py object the failing call was about (found in the traceback's frames): one of the
source file, or none while the source is being opened or closed (``opening=True``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from types import TracebackType
from typing import Any

import h5py
import numpy as np

from ..errors import HdmfZarrError, StoreError
from .h5py_failures import is_h5py_failure

#: What h5py raises for a failed read (and, raised in h5py's code, :data:`.h5py_failures.H5PY_FAILURES`).
_H5PY_ERRORS = (OSError, RuntimeError)


@contextlib.contextmanager
def source_errors(
    src: str, dst: str, opening: bool = False, finished: bool = False, reader: Any = None
) -> Iterator[None]:
    """Raise a failure reading the HDF5 file ``src`` as :class:`~hdmf_zarr3.errors.StoreError` naming it
    (and the node, when the failing call was about one); ``dst`` is where the conversion was writing.

    With ``opening``, every h5py failure of the block is the source's (nothing else is open); otherwise only
    one whose h5py object belongs to ``src``, or that ``reader`` (the source's io) made itself, the innermost of
    the two deciding (a failure of an HDF5 destination stays the destination's).
    ``finished``: the conversion wrote ``dst`` whole before the block (closing the source) began.
    ``KeyboardInterrupt`` and our own errors go through unchanged.
    """
    try:
        yield
    except Exception as exc:
        error = source_error(exc, src, dst, opening, finished, reader)
        if error is None:
            raise
        raise error from exc


def source_error(
    exc: BaseException, src: str, dst: str, opening: bool = False, finished: bool = False, reader: Any = None
) -> StoreError | None:
    """The :class:`~hdmf_zarr3.errors.StoreError` naming ``src`` (and the node) for ``exc`` if it is (or wraps)
    a failure reading the HDF5 file ``src``, else ``None`` (arguments as :func:`source_errors`'). An HDF5
    destination's writer asks this first, as its reads of ``src`` and its writes interleave."""
    cause = _source_failure(exc, os.path.realpath(src), opening, reader)
    if cause is None:
        return None
    failure, node = cause
    reason = str(failure) or type(failure).__name__
    error = StoreError(
        f"reading the HDF5 file {src} failed ({type(failure).__name__}: {reason}); "
        f"the conversion to {dst} {'finished' if finished else 'did not finish'}",
        node,
    )
    if isinstance(failure, OSError):
        error.errno = failure.errno  # (an OSError still: code checking for EIO keeps working)
    return error


def _source_failure(
    exc: BaseException, src: str, opening: bool, reader: Any
) -> tuple[BaseException, str | None] | None:
    """The h5py failure of ``src`` in ``exc``'s chain (``exc`` or what it wraps) and its node, if any."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        if (isinstance(current, _H5PY_ERRORS) or is_h5py_failure(current)) and not isinstance(current, HdmfZarrError):
            found = _innermost(current.__traceback__, reader, src)
            if found is not None and found[0] == src and (found[2] is None or _read_fails(found[2])):
                return current, found[1]
            if opening and (found is None or found[0] == _CLOSED):
                return current, None
        current = current.__cause__ or current.__context__
    return None


def _innermost(tb: TracebackType | None, reader: Any, src: str) -> tuple[str, str | None, Any] | None:
    """(real path of its file, its name, None) of the h5py object in the innermost frame of ``tb`` that holds
    one, or ``(src, None, None)`` for a frame of a method of ``reader`` (``self``) inner to it.

    A frame holding an object of ``src`` and one of another file is a call about both (h5py's ``Group.copy``:
    one HDF5 call reads the source and writes the destination): ``(src, its name, the object)``, for the
    caller to find out which file failed by reading the object again (:func:`_read_fails`)."""
    found: tuple[str, str | None, Any] | None = None
    while tb is not None:
        local = tb.tb_frame.f_locals
        if reader is not None and local.get("self") is reader:
            found = (os.path.realpath(str(getattr(reader, "source", ""))), None, None)
        described = [(d, value) for value in local.values() if (d := _describe(value)) is not None]
        ours = [(d, value) for d, value in described if d[0] == src]
        if ours and len(ours) < len(described):
            (where, name), value = ours[0]
            found = (where, name, value)
        elif described:
            found = (*described[0][0], None)
        tb = tb.tb_next
    return found


def _read_fails(obj: Any) -> bool:
    """Whether reading the source's dataset ``obj`` again, whole, one chunk (or block of rows) at a time, fails
    as h5py fails (a group: no, it is not read). Only after a call about both files failed: its cost is that
    of reading the dataset, its memory one chunk's."""
    if not isinstance(obj, h5py.Dataset):
        return False
    try:
        if obj.shape is None or obj.ndim == 0:
            obj[()]
        elif obj.chunks is not None:
            for block in obj.iter_chunks():
                obj[block]
        else:
            rows = max(1, _BLOCK_BYTES // max(1, obj.dtype.itemsize * int(np.prod(obj.shape[1:]))))
            for start in range(0, obj.shape[0], rows):
                obj[start : start + rows]
    except Exception as exc:  # noqa: BLE001 -- judged: a failure of the file, or not the source's
        return is_h5py_failure(exc)
    return False


#: Bytes read at once by :func:`_read_fails` from a dataset stored contiguously.
_BLOCK_BYTES = 16 * 2**20


#: The "file" of an h5py object whose file is closed (or not open yet).
_CLOSED = ""


def _describe(value: Any) -> tuple[str, str | None] | None:
    if not isinstance(value, (h5py.Dataset, h5py.Group)):  # (a File is a Group)
        return None
    if getattr(value, "id", None) is None:  # a File being opened (``.file`` makes one): its caller's decides
        return None
    try:
        return os.path.realpath(value.file.filename), str(value.name)
    except Exception:  # noqa: BLE001 -- closed: not the source, which is open until the end
        # (an HDF5 destination is closed, its objects dead, by the time its writer asks whose failure it was)
        return _CLOSED, None
