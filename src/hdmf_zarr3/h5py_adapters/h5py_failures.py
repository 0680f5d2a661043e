"""Which exceptions are h5py's failures of a file (as opposed to a bug or a refusal of the code calling it).

h5py reports what goes wrong in a file with whatever its low level maps HDF5's error to: ``OSError`` (I/O,
a full disk, a file it cannot open), ``RuntimeError`` (damaged data, a failed filter), ``KeyError`` (an object
or attribute that is not there) and ``ValueError`` (HDF5 refusing an argument or a state). None of them names
the file. The conversions translate them into :class:`~hdmf_zarr3.errors.StoreError` naming the file (the
source, :mod:`.source`, or the destination, :mod:`.destination`).
"""

from __future__ import annotations

from types import TracebackType

import h5py

#: What h5py raises for a failure of a file.
H5PY_FAILURES = (OSError, RuntimeError, KeyError, ValueError)

#: h5py's objects: a method of one of them is h5py's code.
_H5PY_OBJECTS = (h5py.Group, h5py.Dataset, h5py.Datatype, h5py.AttributeManager)  # (a File is a Group)


def is_h5py_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is a failure of a file: an ``OSError`` (of h5py or of the file system), or a
    ``RuntimeError``, ``KeyError`` or ``ValueError`` raised in h5py's code (its innermost frame is h5py's, or a
    method of an h5py object; a ``KeyError`` of a dictionary lookup, a ``RecursionError`` are not a file's)."""
    if isinstance(exc, OSError):
        return True
    return isinstance(exc, H5PY_FAILURES) and _h5py_frame(exc.__traceback__)


def _h5py_frame(tb: TracebackType | None) -> bool:
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    frame = tb.tb_frame
    if str(frame.f_globals.get("__name__", "")).partition(".")[0] == "h5py":
        return True
    code = frame.f_code
    if code.co_argcount == 0:
        return False
    return isinstance(frame.f_locals.get(code.co_varnames[0]), _H5PY_OBJECTS)
