"""Decode the pickled chunks of hdmf-zarr ≤0.13 files without running anything they name.

hdmf-zarr wrote object arrays (object references, compounds holding references or strings) through
numcodecs' ``Pickle`` codec. A pickle is a small program: ``GLOBAL`` names any importable callable and
``REDUCE`` calls it, so unpickling an untrusted chunk can run arbitrary code. These chunks only ever
hold a numpy object array (or a structured array with object fields) of plain values and
``hdmf_zarr.utils.ZarrReference`` records (a ``dict`` subclass).

Python's unpickler is therefore never used. ``pickletools.genops`` only parses the opcodes, and
:func:`_interpret` runs them on a stack of plain values, opcode by opcode (``_OPCODES``): the only globals
resolved are the few names such a pickle uses (numpy's array, dtype and scalar constructors, the record
class, and the latin-1 ``bytes`` spelling of protocol 2), each mapped to an inert stand-in
(:mod:`.pickle_stand_ins`) that merely records what it was given; the numpy array is then rebuilt from
those records by :func:`loads`, after its dtype, shape and contents are checked. Any other global, opcode
or malformed state raises :class:`~hdmf_zarr3.errors.UnsafeDataError` naming the node. Nothing is imported
or executed.
"""

from __future__ import annotations

import pickletools
from typing import Any

import numpy as np

from ...errors import UnsafeDataError
from .pickle_stand_ins import GLOBALS, MAKERS, ArrayStub, DtypeStub, ReferenceRecord, Refused, to_array

#: Largest chunk accepted (bytes of pickle); a chunk of references is a few KiB to a few MiB.
MAX_PICKLE_BYTES = 256 * 1024 * 1024


_VALUE_OPS = {
    "NONE": None,
    "NEWTRUE": True,
    "NEWFALSE": False,
    "EMPTY_TUPLE": (),
}
#: Opcodes that push their own argument: numbers, text and bytes.
_ARGUMENT_OPS = frozenset(
    {
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
    }
)


class _Machine:
    """What a pickle's opcodes act on: a stack of plain values, the marks on it and the memo."""

    def __init__(self) -> None:
        self.stack: list[Any] = []
        self.marks: list[int] = []
        self.memo: dict[int, Any] = {}

    def pop_mark(self) -> list[Any]:
        """The values above the last mark, taken off the stack with the mark."""
        start = self.marks.pop()
        items = self.stack[start:]
        del self.stack[start:]
        return items

    def take(self, count: int) -> list[Any]:
        """The top ``count`` values (fewer if the stack holds fewer), taken off the stack."""
        items = self.stack[-count:]
        del self.stack[-count:]
        return items

    def take_pair(self) -> tuple[Any, Any]:
        """The top two values, taken off the stack (``IndexError`` if it holds fewer)."""
        pair = self.stack[-2], self.stack[-1]
        del self.stack[-2:]
        return pair


# --- the opcodes that only build plain values ------------------------------------------------------
def _mark(machine: _Machine, name: str, arg: Any) -> None:
    machine.marks.append(len(machine.stack))


def _push_constant(machine: _Machine, name: str, arg: Any) -> None:
    machine.stack.append(_VALUE_OPS[name])


def _push_argument(machine: _Machine, name: str, arg: Any) -> None:
    machine.stack.append(arg)


def _push_python2_string(machine: _Machine, name: str, arg: Any) -> None:
    machine.stack.append(arg.decode("latin1") if isinstance(arg, bytes) else arg)  # Python 2 str: text


def _push_empty(machine: _Machine, name: str, arg: Any) -> None:
    machine.stack.append([] if name == "EMPTY_LIST" else {})


def _small_tuple(machine: _Machine, name: str, arg: Any) -> None:
    machine.stack.append(tuple(machine.take(int(name[-1]))))


def _marked_sequence(machine: _Machine, name: str, arg: Any) -> None:
    items = machine.pop_mark()
    machine.stack.append(tuple(items) if name == "TUPLE" else items)


def _marked_dict(machine: _Machine, name: str, arg: Any) -> None:
    items = machine.pop_mark()
    machine.stack.append(dict(zip(items[::2], items[1::2])))


def _put(machine: _Machine, name: str, arg: Any) -> None:
    key = len(machine.memo) if name == "MEMOIZE" else int(arg)
    machine.memo[key] = machine.stack[-1]


def _pop(machine: _Machine, name: str, arg: Any) -> None:
    machine.stack.pop()


def _pop_mark(machine: _Machine, name: str, arg: Any) -> None:
    machine.pop_mark()


def _dup(machine: _Machine, name: str, arg: Any) -> None:
    machine.stack.append(machine.stack[-1])


# --- the opcodes that refuse: every check between a pickle and anything it could name or change ---------
def _append(machine: _Machine, name: str, arg: Any) -> None:
    """``APPEND(S)``: only to a list."""
    items = [machine.stack.pop()] if name == "APPEND" else machine.pop_mark()
    target = machine.stack[-1]
    if not isinstance(target, list):
        raise Refused(f"{name} to a {type(target).__name__}")
    target.extend(items)


def _setitem(machine: _Machine, name: str, arg: Any) -> None:
    """``SETITEM(S)``: only on a dict, only keys of text or integers."""
    items = machine.take(2) if name == "SETITEM" else machine.pop_mark()
    target = machine.stack[-1]
    if not isinstance(target, dict) or len(items) % 2:
        raise Refused(f"{name} on a {type(target).__name__}")
    for key, value in zip(items[::2], items[1::2]):
        if not isinstance(key, (str, int)):
            raise Refused(f"dict key of type {type(key).__name__}")
        target[key] = value


def _global(machine: _Machine, name: str, arg: Any) -> None:
    """``(STACK_)GLOBAL``: only the names in ``GLOBALS``, each resolved to its inert stand-in."""
    if name == "GLOBAL":
        module, _, attr = str(arg).partition(" ")
    else:
        module, attr = machine.take_pair()
    found = GLOBALS.get((module, attr)) if isinstance(module, str) and isinstance(attr, str) else None
    if found is None:
        raise Refused(f"refused global {module}.{attr}")
    machine.stack.append(found)


def _reduce(machine: _Machine, name: str, arg: Any) -> None:
    """``REDUCE``: calls only the stand-ins (``MAKERS``), with a tuple of arguments."""
    func, args = machine.take_pair()
    if func not in MAKERS or not isinstance(args, tuple):
        raise Refused(f"refused call of {func!r}")
    machine.stack.append(func(*args))


def _newobj(machine: _Machine, name: str, arg: Any) -> None:
    """``NEWOBJ``: makes only empty reference records."""
    cls, args = machine.take_pair()
    if cls is not ReferenceRecord or args != ():
        raise Refused(f"refused construction of {cls!r}")
    machine.stack.append(ReferenceRecord())


def _build(machine: _Machine, name: str, arg: Any) -> None:
    """``BUILD``: sets the state of an array or dtype stand-in, or fills a reference record from a dict."""
    state = machine.stack.pop()
    target = machine.stack[-1]
    if isinstance(target, (ArrayStub, DtypeStub)):
        target.__setstate__(state)
    elif isinstance(target, ReferenceRecord) and isinstance(state, dict):
        target.update(state)
    else:
        raise Refused(f"BUILD of a {type(target).__name__}")


def _get(machine: _Machine, name: str, arg: Any) -> None:
    """``(BIN|LONG_BIN)GET``: only a memo key that was put."""
    if int(arg) not in machine.memo:
        raise Refused(f"memo key {arg} missing")
    machine.stack.append(machine.memo[int(arg)])


#: Every opcode run, and what runs it; any other opcode with an effect is refused (``PROTO``, ``FRAME`` and
#: ``STOP`` are read by :func:`_interpret` itself).
_OPCODES = {
    "MARK": _mark,
    **dict.fromkeys(_VALUE_OPS, _push_constant),
    **dict.fromkeys(_ARGUMENT_OPS, _push_argument),
    **dict.fromkeys(("STRING", "BINSTRING", "SHORT_BINSTRING"), _push_python2_string),
    **dict.fromkeys(("EMPTY_LIST", "EMPTY_DICT"), _push_empty),
    **dict.fromkeys(("TUPLE1", "TUPLE2", "TUPLE3"), _small_tuple),
    **dict.fromkeys(("TUPLE", "LIST"), _marked_sequence),
    "DICT": _marked_dict,
    **dict.fromkeys(("APPEND", "APPENDS"), _append),
    **dict.fromkeys(("SETITEM", "SETITEMS"), _setitem),
    **dict.fromkeys(("GLOBAL", "STACK_GLOBAL"), _global),
    "REDUCE": _reduce,
    "NEWOBJ": _newobj,
    "BUILD": _build,
    **dict.fromkeys(("PUT", "BINPUT", "LONG_BINPUT", "MEMOIZE"), _put),
    **dict.fromkeys(("GET", "BINGET", "LONG_BINGET"), _get),
    "POP": _pop,
    "POP_MARK": _pop_mark,
    "DUP": _dup,
}


def _interpret(data: bytes) -> Any:
    """Run the pickle's opcodes on a stack of plain values (``pickletools.genops`` only parses).

    Python's own unpickler is never used: it would import and call whatever a ``GLOBAL`` names.
    Here ``GLOBAL`` resolves only the names in ``GLOBALS``, ``REDUCE`` calls only their stand-ins,
    ``NEWOBJ`` makes only reference records, and any opcode not in ``_OPCODES`` is refused.
    """
    machine = _Machine()
    arg: Any  # the opcode's argument, as the opcode defines it (an int for the memo opcodes)
    for op, arg, _ in pickletools.genops(data):
        name = op.name
        if name in ("PROTO", "FRAME"):
            continue
        if name == "STOP":
            if len(machine.stack) != 1:
                raise Refused("malformed pickle (stack at STOP)")
            return machine.stack[0]
        run = _OPCODES.get(name)
        if run is None:
            raise Refused(f"refused opcode {name}")
        run(machine, name, arg)
    raise Refused("pickle ends without STOP")


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
        if not isinstance(obj, ArrayStub):
            raise Refused(f"chunk holds a {type(obj).__name__}, not an array")
        return to_array(obj)
    except UnsafeDataError:
        raise
    except Exception as exc:  # any malformed pickle: refused, never partially trusted
        raise UnsafeDataError(
            f"pickled chunk refused ({exc}); only numpy arrays of plain values and "
            "hdmf-zarr reference records are decoded",
            where,
        ) from exc
