"""What a pickle of hdmf-zarr ≤0.13 may make, for :mod:`.safe_pickle`: inert stand-ins and checked values.

A pickle names callables (``GLOBAL``) and calls them (``REDUCE``). The only names resolved are those in
:data:`GLOBALS` (numpy's array, dtype and scalar constructors, the reference record class, the latin-1
``bytes`` spelling of protocol 2), each mapped to a stand-in defined here that merely records what it was
given; only the stand-ins in :data:`MAKERS` may be called. :func:`to_array` then rebuilds the numpy array
from those records, after its dtype, shape and contents are checked. Anything else raises
:class:`Refused`. Nothing is imported or executed.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np


class Refused(ValueError):
    """A pickle this module does not decode."""


class ArrayStub:
    """Stands for ``numpy.ndarray`` while unpickling: records the state ``ndarray.__setstate__`` gets."""

    def __init__(self) -> None:
        self.state: tuple | None = None

    def __setstate__(self, state: Any) -> None:
        self.state = state


class DtypeStub:
    """Stands for ``numpy.dtype``: records the type code and the state ``dtype.__setstate__`` gets."""

    def __init__(self, code: Any, align: Any = False, copy: Any = False) -> None:
        self.code = code
        self.state: tuple | None = None

    def __setstate__(self, state: Any) -> None:
        self.state = state


class ReferenceRecord(dict):
    """Stands for ``hdmf_zarr.utils.ZarrReference`` (a dict of ``source``, ``path``, ids)."""


class _NdarrayClass:
    """The class argument ``_reconstruct`` receives; only this marker is accepted there."""


def _reconstruct(cls: Any, shape: Any, typecode: Any) -> ArrayStub:
    if cls is not _NdarrayClass:
        raise Refused(f"_reconstruct of {cls!r}")
    return ArrayStub()


def _scalar(dtype: Any, data: Any = None) -> Any:
    """``numpy.core.multiarray.scalar``: a numpy scalar from its dtype and raw bytes."""
    npd = _to_dtype(dtype)
    if npd.kind not in "biufU" or not isinstance(data, bytes) or len(data) != npd.itemsize:
        raise Refused(f"numpy scalar of dtype {npd} from {type(data).__name__}")
    return np.frombuffer(data, dtype=npd)[0]


def _frombuffer(buf: Any, dtype: Any, shape: Any, order: Any) -> ArrayStub:
    """``numpy._core.numeric._frombuffer``: how protocol 5 spells a numeric array's data."""
    if not isinstance(buf, (bytes, bytearray)) or order not in ("C", "F"):
        raise Refused("_frombuffer of anything but bytes")
    stub = ArrayStub()
    stub.state = (1, shape, dtype, order == "F", bytes(buf))
    return stub


def _latin1(text: Any, encoding: Any = "latin1") -> bytes:
    """``_codecs.encode``, which protocol 2 pickles use to spell ``bytes``; only latin-1 text."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise Refused("_codecs.encode of anything but latin-1 text")
    return text.encode("latin1")


GLOBALS: dict[tuple[str, str], Any] = {("_codecs", "encode"): _latin1}
for _mod in ("numpy.core.multiarray", "numpy._core.multiarray"):
    GLOBALS[(_mod, "_reconstruct")] = _reconstruct
    GLOBALS[(_mod, "scalar")] = _scalar
for _mod in ("numpy.core.numeric", "numpy._core.numeric"):
    GLOBALS[(_mod, "_frombuffer")] = _frombuffer
GLOBALS[("numpy", "ndarray")] = _NdarrayClass
GLOBALS[("numpy", "dtype")] = DtypeStub
GLOBALS[("hdmf_zarr.utils", "ZarrReference")] = ReferenceRecord


MAKERS = (_reconstruct, _scalar, _frombuffer, _latin1, DtypeStub)  # what REDUCE may call: the stand-ins above


# --- rebuilding numpy values from the recorded states -------------------------------------------

_SIMPLE_KINDS = frozenset("biufOUS")


def _to_dtype(stub: Any) -> np.dtype:
    """A numpy dtype from a recorded ``numpy.dtype`` call and state (simple or structured)."""
    if not isinstance(stub, DtypeStub) or not isinstance(stub.code, str):
        raise Refused(f"expected a dtype, got {type(stub).__name__}")
    state: tuple[Any, ...] = stub.state if isinstance(stub.state, tuple) else ()
    endian = state[1] if len(state) >= 2 and state[1] in "<>|=" else "|"
    names = state[3] if len(state) >= 5 else None
    if names is None:
        code = stub.code
        if not code or code[0] not in _SIMPLE_KINDS or not code[1:].isdigit():
            raise Refused(f"dtype {code!r}")
        if code[0] == "O":
            return np.dtype(object)
        return np.dtype((endian if endian != "=" else "") + code)
    fields = state[4]
    if not isinstance(names, tuple) or not isinstance(fields, dict) or set(names) != set(fields):
        raise Refused("structured dtype with malformed fields")
    formats, offsets = [], []
    for name in names:
        entry = fields[name]
        if (
            not isinstance(name, str)
            or not isinstance(entry, tuple)
            or len(entry) < 2
            or not isinstance(entry[1], int)
            or entry[1] < 0
        ):
            raise Refused(f"structured dtype field {name!r}")
        formats.append(_to_dtype(entry[0]))
        offsets.append(entry[1])
    itemsize = state[5] if len(state) > 5 and isinstance(state[5], int) and state[5] > 0 else None
    spec: dict[str, Any] = {"names": list(names), "formats": formats, "offsets": offsets}
    if itemsize is not None:
        spec["itemsize"] = itemsize
    return np.dtype(spec)  # type: ignore[call-overload]  # numpy's stubs type this dict as their own TypedDict


def to_array(stub: ArrayStub) -> np.ndarray:
    state = stub.state
    if not isinstance(state, tuple) or len(state) not in (4, 5):
        raise Refused("array state")
    shape, dtype_stub, fortran, data = state[-4:]
    if not isinstance(shape, tuple) or not all(isinstance(n, int) and n >= 0 for n in shape):
        raise Refused(f"array shape {shape!r}")
    dtype = _to_dtype(dtype_stub)
    count = int(np.prod(shape))
    order: Literal["F", "C"] = "F" if fortran else "C"
    if isinstance(data, list):  # object arrays and structured arrays with object fields
        if len(data) != count or not dtype.hasobject:
            raise Refused("array data does not match its shape or dtype")
        out = np.empty(count, dtype=dtype)
        for i, value in enumerate(data):
            out[i] = _plain(value)
        return out.reshape(shape, order=order)
    if isinstance(data, bytes) and not dtype.hasobject and len(data) == count * dtype.itemsize:
        return np.frombuffer(data, dtype=dtype).reshape(shape, order=order).copy()
    raise Refused("array data does not match its shape or dtype")


def _plain(value: Any) -> Any:
    """Recorded values as plain Python/numpy values (records become dicts)."""
    if isinstance(value, ReferenceRecord):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (ArrayStub, DtypeStub)):
        return to_array(value) if isinstance(value, ArrayStub) else _to_dtype(value)
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if value is None or isinstance(value, (str, bytes, bool, int, float, np.generic)):
        return value
    raise Refused(f"value of type {type(value).__name__}")
