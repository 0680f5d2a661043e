"""Decode the pickled chunks of hdmf-zarr ≤0.13 files without running anything they name.

hdmf-zarr wrote object arrays (object references, compounds holding references or strings) through
numcodecs' ``Pickle`` codec. A pickle is a small program: ``GLOBAL`` names any importable callable and
``REDUCE`` calls it, so unpickling an untrusted chunk can run arbitrary code. These chunks only ever
hold a numpy object array (or a structured array with object fields) of plain values and
``hdmf_zarr.utils.ZarrReference`` records (a ``dict`` subclass). So the only globals accepted are the
few names such a pickle uses (numpy's array, dtype and scalar constructors, the record class, and
the latin-1 ``bytes`` spelling of protocol 2), and each maps to an inert stand-in defined here that merely records
what it was given; the numpy array is then rebuilt from those records by :func:`loads`, after its
dtype, shape and contents are checked. Any other global, persistent id or malformed state raises
:class:`~hdmf_zarr3.errors.UnsafeDataError` naming the node. Nothing is imported or executed.
"""

from __future__ import annotations

import io
import pickle
from typing import Any

import numpy as np

from ..errors import UnsafeDataError

#: Largest chunk accepted (bytes of pickle); a chunk of references is a few KiB to a few MiB.
MAX_PICKLE_BYTES = 256 * 1024 * 1024


class _ArrayStub:
    """Stands for ``numpy.ndarray`` while unpickling: records the state ``ndarray.__setstate__`` gets."""

    def __init__(self) -> None:
        self.state: tuple | None = None

    def __setstate__(self, state: Any) -> None:
        self.state = state


class _DtypeStub:
    """Stands for ``numpy.dtype``: records the type code and the state ``dtype.__setstate__`` gets."""

    def __init__(self, code: Any, align: Any = False, copy: Any = False) -> None:
        self.code = code
        self.state: tuple | None = None

    def __setstate__(self, state: Any) -> None:
        self.state = state


class _ReferenceRecord(dict):
    """Stands for ``hdmf_zarr.utils.ZarrReference`` (a dict of ``source``, ``path``, ids)."""


class _NdarrayClass:
    """The class argument ``_reconstruct`` receives; only this marker is accepted there."""


def _reconstruct(cls: Any, shape: Any, typecode: Any) -> _ArrayStub:
    if cls is not _NdarrayClass:
        raise pickle.UnpicklingError(f"_reconstruct of {cls!r}")
    return _ArrayStub()


def _scalar(dtype: Any, data: Any = None) -> Any:
    """``numpy.core.multiarray.scalar``: a numpy scalar from its dtype and raw bytes."""
    npd = _to_dtype(dtype)
    if npd.kind not in "biufU" or not isinstance(data, bytes) or len(data) != npd.itemsize:
        raise pickle.UnpicklingError(f"numpy scalar of dtype {npd} from {type(data).__name__}")
    return np.frombuffer(data, dtype=npd)[0]


def _latin1(text: Any, encoding: Any = "latin1") -> bytes:
    """``_codecs.encode``, which protocol 2 pickles use to spell ``bytes``; only latin-1 text."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError("_codecs.encode of anything but latin-1 text")
    return text.encode("latin1")


_GLOBALS: dict[tuple[str, str], Any] = {("_codecs", "encode"): _latin1}
for _mod in ("numpy.core.multiarray", "numpy._core.multiarray"):
    _GLOBALS[(_mod, "_reconstruct")] = _reconstruct
    _GLOBALS[(_mod, "scalar")] = _scalar
_GLOBALS[("numpy", "ndarray")] = _NdarrayClass
_GLOBALS[("numpy", "dtype")] = _DtypeStub
_GLOBALS[("hdmf_zarr.utils", "ZarrReference")] = _ReferenceRecord


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        found = _GLOBALS.get((module, name))
        if found is None:
            raise pickle.UnpicklingError(f"refused global {module}.{name}")
        return found

    def persistent_load(self, pid: Any) -> Any:
        raise pickle.UnpicklingError("refused persistent id")


# --- rebuilding numpy values from the recorded states -------------------------------------------

_SIMPLE_KINDS = frozenset("biufOUS")


def _to_dtype(stub: Any) -> np.dtype:
    """A numpy dtype from a recorded ``numpy.dtype`` call and state (simple or structured)."""
    if not isinstance(stub, _DtypeStub) or not isinstance(stub.code, str):
        raise pickle.UnpicklingError(f"expected a dtype, got {type(stub).__name__}")
    state = stub.state
    endian = state[1] if isinstance(state, tuple) and len(state) >= 2 and state[1] in "<>|=" else "|"
    names = state[3] if isinstance(state, tuple) and len(state) >= 5 else None
    if names is None:
        code = stub.code
        if not code or code[0] not in _SIMPLE_KINDS or not code[1:].isdigit():
            raise pickle.UnpicklingError(f"dtype {code!r}")
        if code[0] == "O":
            return np.dtype(object)
        return np.dtype((endian if endian != "=" else "") + code)
    fields = state[4]
    if not isinstance(names, tuple) or not isinstance(fields, dict) or set(names) != set(fields):
        raise pickle.UnpicklingError("structured dtype with malformed fields")
    formats, offsets = [], []
    for name in names:
        entry = fields[name]
        if not isinstance(name, str) or not isinstance(entry, tuple) or len(entry) < 2 \
                or not isinstance(entry[1], int) or entry[1] < 0:
            raise pickle.UnpicklingError(f"structured dtype field {name!r}")
        formats.append(_to_dtype(entry[0]))
        offsets.append(entry[1])
    itemsize = state[5] if len(state) > 5 and isinstance(state[5], int) and state[5] > 0 else None
    spec: dict[str, Any] = {"names": list(names), "formats": formats, "offsets": offsets}
    if itemsize is not None:
        spec["itemsize"] = itemsize
    return np.dtype(spec)


def _to_array(stub: _ArrayStub) -> np.ndarray:
    state = stub.state
    if not isinstance(state, tuple) or len(state) not in (4, 5):
        raise pickle.UnpicklingError("array state")
    shape, dtype_stub, fortran, data = state[-4:]
    if not isinstance(shape, tuple) or not all(isinstance(n, int) and n >= 0 for n in shape):
        raise pickle.UnpicklingError(f"array shape {shape!r}")
    dtype = _to_dtype(dtype_stub)
    count = int(np.prod(shape))
    order = "F" if fortran else "C"
    if isinstance(data, list):  # object arrays and structured arrays with object fields
        if len(data) != count or not dtype.hasobject:
            raise pickle.UnpicklingError("array data does not match its shape or dtype")
        out = np.empty(count, dtype=dtype)
        for i, value in enumerate(data):
            out[i] = _plain(value)
        return out.reshape(shape, order=order)
    if isinstance(data, bytes) and not dtype.hasobject and len(data) == count * dtype.itemsize:
        return np.frombuffer(data, dtype=dtype).reshape(shape, order=order).copy()
    raise pickle.UnpicklingError("array data does not match its shape or dtype")


def _plain(value: Any) -> Any:
    """Recorded values as plain Python/numpy values (records become dicts)."""
    if isinstance(value, _ReferenceRecord):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (_ArrayStub, _DtypeStub)):
        return _to_array(value) if isinstance(value, _ArrayStub) else _to_dtype(value)
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if value is None or isinstance(value, (str, bytes, bool, int, float, np.generic)):
        return value
    raise pickle.UnpicklingError(f"value of type {type(value).__name__}")


def loads(data: bytes, where: str) -> np.ndarray:
    """The numpy array a numcodecs ``Pickle`` chunk holds, decoded without executing anything.

    Raises
    ------
    UnsafeDataError
        If the pickle names anything but numpy arrays, dtypes, scalars and reference records, or is
        malformed; ``where`` (the node path) is named in the message.
    """
    if len(data) > MAX_PICKLE_BYTES:
        raise UnsafeDataError(f"pickled chunk of {len(data)} bytes exceeds the {MAX_PICKLE_BYTES} byte limit", where)
    try:
        obj = _Unpickler(io.BytesIO(data)).load()
        if not isinstance(obj, _ArrayStub):
            raise pickle.UnpicklingError(f"chunk holds a {type(obj).__name__}, not an array")
        return _to_array(obj)
    except UnsafeDataError:
        raise
    except Exception as exc:  # any malformed pickle: refused, never partially trusted
        raise UnsafeDataError(f"pickled chunk refused ({exc}); only numpy arrays of plain values and "
                              "hdmf-zarr reference records are decoded", where) from exc
