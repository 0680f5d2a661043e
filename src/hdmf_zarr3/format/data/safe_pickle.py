"""Decode the pickled chunks of hdmf-zarr ≤0.13 files without running anything they name.

hdmf-zarr wrote object arrays (object references, compounds holding references or strings) through
numcodecs' ``Pickle`` codec. A pickle is a small program: ``GLOBAL`` names any importable callable and
``REDUCE`` calls it, so unpickling an untrusted chunk can run arbitrary code. These chunks only ever
hold a numpy object array (or a structured array with object fields) of plain values and
``hdmf_zarr.utils.ZarrReference`` records (a ``dict`` subclass).

Python's unpickler is therefore never used. ``pickletools.genops`` only parses the opcodes, and
:func:`_interpret` runs them on a stack of plain values: the only globals resolved are the few names
such a pickle uses (numpy's array, dtype and scalar constructors, the record class, and the latin-1
``bytes`` spelling of protocol 2), each mapped to an inert stand-in defined here that merely records
what it was given; the numpy array is then rebuilt from those records by :func:`loads`, after its
dtype, shape and contents are checked. Any other global, opcode or malformed state raises
:class:`~hdmf_zarr3.errors.UnsafeDataError` naming the node. Nothing is imported or executed.
"""

from __future__ import annotations

import pickletools
from typing import Any, Literal

import numpy as np

from ...errors import UnsafeDataError

#: Largest chunk accepted (bytes of pickle); a chunk of references is a few KiB to a few MiB.
MAX_PICKLE_BYTES = 256 * 1024 * 1024


class _Refused(ValueError):
    """A pickle this module does not decode."""


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
        raise _Refused(f"_reconstruct of {cls!r}")
    return _ArrayStub()


def _scalar(dtype: Any, data: Any = None) -> Any:
    """``numpy.core.multiarray.scalar``: a numpy scalar from its dtype and raw bytes."""
    npd = _to_dtype(dtype)
    if npd.kind not in "biufU" or not isinstance(data, bytes) or len(data) != npd.itemsize:
        raise _Refused(f"numpy scalar of dtype {npd} from {type(data).__name__}")
    return np.frombuffer(data, dtype=npd)[0]


def _frombuffer(buf: Any, dtype: Any, shape: Any, order: Any) -> _ArrayStub:
    """``numpy._core.numeric._frombuffer``: how protocol 5 spells a numeric array's data."""
    if not isinstance(buf, (bytes, bytearray)) or order not in ("C", "F"):
        raise _Refused("_frombuffer of anything but bytes")
    stub = _ArrayStub()
    stub.state = (1, shape, dtype, order == "F", bytes(buf))
    return stub


def _latin1(text: Any, encoding: Any = "latin1") -> bytes:
    """``_codecs.encode``, which protocol 2 pickles use to spell ``bytes``; only latin-1 text."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise _Refused("_codecs.encode of anything but latin-1 text")
    return text.encode("latin1")


_GLOBALS: dict[tuple[str, str], Any] = {("_codecs", "encode"): _latin1}
for _mod in ("numpy.core.multiarray", "numpy._core.multiarray"):
    _GLOBALS[(_mod, "_reconstruct")] = _reconstruct
    _GLOBALS[(_mod, "scalar")] = _scalar
for _mod in ("numpy.core.numeric", "numpy._core.numeric"):
    _GLOBALS[(_mod, "_frombuffer")] = _frombuffer
_GLOBALS[("numpy", "ndarray")] = _NdarrayClass
_GLOBALS[("numpy", "dtype")] = _DtypeStub
_GLOBALS[("hdmf_zarr.utils", "ZarrReference")] = _ReferenceRecord


_MAKERS = (_reconstruct, _scalar, _frombuffer, _latin1, _DtypeStub)  # what REDUCE may call: the stand-ins above
_VALUE_OPS = {
    "NONE": None,
    "NEWTRUE": True,
    "NEWFALSE": False,
    "EMPTY_TUPLE": (),
}


def _interpret(data: bytes) -> Any:
    """Run the pickle's opcodes on a stack of plain values (``pickletools.genops`` only parses).

    Python's own unpickler is never used: it would import and call whatever a ``GLOBAL`` names.
    Here ``GLOBAL`` resolves only the names in ``_GLOBALS``, ``REDUCE`` calls only their stand-ins,
    ``NEWOBJ`` makes only reference records, and any other opcode with an effect is refused.
    """
    stack: list[Any] = []
    marks: list[int] = []
    memo: dict[int, Any] = {}

    def pop_mark() -> list[Any]:
        start = marks.pop()
        items = stack[start:]
        del stack[start:]
        return items

    arg: Any  # the opcode's argument, as the opcode defines it (an int for the memo opcodes)
    for op, arg, _ in pickletools.genops(data):
        name = op.name
        if name in ("PROTO", "FRAME"):
            continue
        if name == "STOP":
            if len(stack) != 1:
                raise _Refused("malformed pickle (stack at STOP)")
            return stack[0]
        if name == "MARK":
            marks.append(len(stack))
        elif name in _VALUE_OPS:
            stack.append(_VALUE_OPS[name])
        elif name in (
            "INT",
            "BININT",
            "BININT1",
            "BININT2",
            "LONG",
            "LONG1",
            "LONG4",
            "FLOAT",
            "BINFLOAT",
            "UNICODE",
            "BINUNICODE",
            "SHORT_BINUNICODE",
            "BINUNICODE8",
            "BINBYTES",
            "SHORT_BINBYTES",
            "BINBYTES8",
            "BYTEARRAY8",
        ):
            stack.append(arg)
        elif name in ("STRING", "BINSTRING", "SHORT_BINSTRING"):  # Python 2 str: text
            stack.append(arg.decode("latin1") if isinstance(arg, bytes) else arg)
        elif name in ("EMPTY_LIST", "EMPTY_DICT"):
            stack.append([] if name == "EMPTY_LIST" else {})
        elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
            n = int(name[-1])
            items = stack[-n:]
            del stack[-n:]
            stack.append(tuple(items))
        elif name in ("TUPLE", "LIST"):
            items = pop_mark()
            stack.append(tuple(items) if name == "TUPLE" else items)
        elif name == "DICT":
            items = pop_mark()
            stack.append(dict(zip(items[::2], items[1::2])))
        elif name in ("APPEND", "APPENDS"):
            items = [stack.pop()] if name == "APPEND" else pop_mark()
            target = stack[-1]
            if not isinstance(target, list):
                raise _Refused(f"{name} to a {type(target).__name__}")
            target.extend(items)
        elif name in ("SETITEM", "SETITEMS"):
            items = stack[-2:] if name == "SETITEM" else pop_mark()
            if name == "SETITEM":
                del stack[-2:]
            target = stack[-1]
            if not isinstance(target, dict) or len(items) % 2:
                raise _Refused(f"{name} on a {type(target).__name__}")
            for key, value in zip(items[::2], items[1::2]):
                if not isinstance(key, (str, int)):
                    raise _Refused(f"dict key of type {type(key).__name__}")
                target[key] = value
        elif name in ("GLOBAL", "STACK_GLOBAL"):
            if name == "GLOBAL":
                module, _, attr = str(arg).partition(" ")
            else:
                module, attr = stack[-2], stack[-1]
                del stack[-2:]
            found = _GLOBALS.get((module, attr)) if isinstance(module, str) and isinstance(attr, str) else None
            if found is None:
                raise _Refused(f"refused global {module}.{attr}")
            stack.append(found)
        elif name == "REDUCE":
            func, args = stack[-2], stack[-1]
            del stack[-2:]
            if func not in _MAKERS or not isinstance(args, tuple):
                raise _Refused(f"refused call of {func!r}")
            stack.append(func(*args))
        elif name == "NEWOBJ":
            cls, args = stack[-2], stack[-1]
            del stack[-2:]
            if cls is not _ReferenceRecord or args != ():
                raise _Refused(f"refused construction of {cls!r}")
            stack.append(_ReferenceRecord())
        elif name == "BUILD":
            state = stack.pop()
            target = stack[-1]
            if isinstance(target, (_ArrayStub, _DtypeStub)):
                target.__setstate__(state)
            elif isinstance(target, _ReferenceRecord) and isinstance(state, dict):
                target.update(state)
            else:
                raise _Refused(f"BUILD of a {type(target).__name__}")
        elif name in ("PUT", "BINPUT", "LONG_BINPUT"):
            memo[int(arg)] = stack[-1]
        elif name == "MEMOIZE":
            memo[len(memo)] = stack[-1]
        elif name in ("GET", "BINGET", "LONG_BINGET"):
            if int(arg) not in memo:
                raise _Refused(f"memo key {arg} missing")
            stack.append(memo[int(arg)])
        elif name == "POP":
            stack.pop()
        elif name == "POP_MARK":
            pop_mark()
        elif name == "DUP":
            stack.append(stack[-1])
        else:
            raise _Refused(f"refused opcode {name}")
    raise _Refused("pickle ends without STOP")


# --- rebuilding numpy values from the recorded states -------------------------------------------

_SIMPLE_KINDS = frozenset("biufOUS")


def _to_dtype(stub: Any) -> np.dtype:
    """A numpy dtype from a recorded ``numpy.dtype`` call and state (simple or structured)."""
    if not isinstance(stub, _DtypeStub) or not isinstance(stub.code, str):
        raise _Refused(f"expected a dtype, got {type(stub).__name__}")
    state: tuple[Any, ...] = stub.state if isinstance(stub.state, tuple) else ()
    endian = state[1] if len(state) >= 2 and state[1] in "<>|=" else "|"
    names = state[3] if len(state) >= 5 else None
    if names is None:
        code = stub.code
        if not code or code[0] not in _SIMPLE_KINDS or not code[1:].isdigit():
            raise _Refused(f"dtype {code!r}")
        if code[0] == "O":
            return np.dtype(object)
        return np.dtype((endian if endian != "=" else "") + code)
    fields = state[4]
    if not isinstance(names, tuple) or not isinstance(fields, dict) or set(names) != set(fields):
        raise _Refused("structured dtype with malformed fields")
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
            raise _Refused(f"structured dtype field {name!r}")
        formats.append(_to_dtype(entry[0]))
        offsets.append(entry[1])
    itemsize = state[5] if len(state) > 5 and isinstance(state[5], int) and state[5] > 0 else None
    spec: dict[str, Any] = {"names": list(names), "formats": formats, "offsets": offsets}
    if itemsize is not None:
        spec["itemsize"] = itemsize
    return np.dtype(spec)  # type: ignore[call-overload]  # numpy's stubs type this dict as their own TypedDict


def _to_array(stub: _ArrayStub) -> np.ndarray:
    state = stub.state
    if not isinstance(state, tuple) or len(state) not in (4, 5):
        raise _Refused("array state")
    shape, dtype_stub, fortran, data = state[-4:]
    if not isinstance(shape, tuple) or not all(isinstance(n, int) and n >= 0 for n in shape):
        raise _Refused(f"array shape {shape!r}")
    dtype = _to_dtype(dtype_stub)
    count = int(np.prod(shape))
    order: Literal["F", "C"] = "F" if fortran else "C"
    if isinstance(data, list):  # object arrays and structured arrays with object fields
        if len(data) != count or not dtype.hasobject:
            raise _Refused("array data does not match its shape or dtype")
        out = np.empty(count, dtype=dtype)
        for i, value in enumerate(data):
            out[i] = _plain(value)
        return out.reshape(shape, order=order)
    if isinstance(data, bytes) and not dtype.hasobject and len(data) == count * dtype.itemsize:
        return np.frombuffer(data, dtype=dtype).reshape(shape, order=order).copy()
    raise _Refused("array data does not match its shape or dtype")


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
    raise _Refused(f"value of type {type(value).__name__}")


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
        obj = _interpret(data)
        if not isinstance(obj, _ArrayStub):
            raise _Refused(f"chunk holds a {type(obj).__name__}, not an array")
        return _to_array(obj)
    except UnsafeDataError:
        raise
    except Exception as exc:  # any malformed pickle: refused, never partially trusted
        raise UnsafeDataError(
            f"pickled chunk refused ({exc}); only numpy arrays of plain values and "
            "hdmf-zarr reference records are decoded",
            where,
        ) from exc
