"""Whole-tree comparison of two container hierarchies read from two files (any HDMF backends).

``first_difference(a, a_io, b, b_io)`` walks both trees from their roots and returns the first
difference as ``"<where>: <what>"`` (``None`` if there is none). ``<where>`` is the path of the
container in the file, then ``.field`` for its fields and ``[i]`` for elements, e.g.
``/general/devices/laser.model: links to /general/devices/m1 != /general/devices/m2``.

What is compared, for every container reached through its children:

- its class name, ``data_type``, ``namespace``, name and ``object_id`` (unless ``object_ids=False``:
  HDMF mints a new random id at every read for a file that stores none, as for a container made on
  read, whose id is never compared);
- the names of its set fields, and each field's value:

  - a child container is compared recursively (it must be a child on both sides);
  - a container that is not a child (a link, a reference, a table a region points into) is compared
    by where it lives: the path of its builder in the file (and the file's name if it is another file);
    one that no node was read for (PyNWB makes some on read when upgrading old files) by its contents;
  - datasets (h5py, Zarr, DataIO, arrays) are read whole; numbers are compared with their dtype and
    NaN equal to NaN, other values element by element (text as ``str`` whether stored as bytes or not,
    compound rows field by field, references by target path);
  - lists, tuples and dicts element by element, scalars by value.

``Data`` containers (``VectorData``, ...) compare their ``data`` too.
"""

from __future__ import annotations

import datetime
import math
import os
from collections.abc import Mapping
from typing import Any

import numpy as np
from hdmf.container import AbstractContainer, Data
from hdmf.data_utils import DataIO

MAX_SHOWN = 100


def first_difference(
    a: AbstractContainer, a_io: Any, b: AbstractContainer, b_io: Any, object_ids: bool = True
) -> str | None:
    """The first difference between the trees under ``a`` (read by ``a_io``) and ``b``, or ``None``."""
    walker = _Walker(a_io, b_io, object_ids)
    try:
        walker.container(a, b, _path(a, a_io) or "/")
    except _Found as found:
        return str(found)
    return None


class _Found(Exception):
    pass


def _show(x: Any) -> str:
    text = repr(x)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 3] + "..."


def _path(container: AbstractContainer, io: Any) -> str | None:
    """Where ``container`` lives: its builder's path (``/...``), prefixed by the file name if the
    builder comes from another file than ``io``'s."""
    builder = io.manager.get_builder(container)
    if builder is None:
        return None
    path = "/" + builder.path.partition("/")[2] if "/" in builder.path else "/"
    source = builder.source
    if source and io.source and os.path.abspath(source) != os.path.abspath(io.source):
        return f"{os.path.basename(source)}:{path}"
    return path


class _Walker:
    def __init__(self, a_io: Any, b_io: Any, object_ids: bool):
        self.ios = (a_io, b_io)
        self.object_ids = object_ids
        self.seen: set[int] = set()

    def fail(self, where: str, what: str) -> None:
        raise _Found(f"{where}: {what}")

    def container(self, a: AbstractContainer, b: AbstractContainer, where: str) -> None:
        if id(a) in self.seen:
            return
        self.seen.add(id(a))
        read = self.object_ids and _path(a, self.ios[0]) is not None  # ids of containers made on read are new
        for attr in ("__class__.__name__", "data_type", "namespace", "name") + (("object_id",) if read else ()):
            va, vb = (type(c).__name__ if attr == "__class__.__name__" else getattr(c, attr, None) for c in (a, b))
            if va != vb:
                self.fail(where, f"{attr.split('.')[-1]} {_show(va)} != {_show(vb)}")
        fa, fb = a.fields, b.fields
        if set(fa) != set(fb):
            self.fail(where, f"fields only in a: {sorted(set(fa) - set(fb))}, only in b: {sorted(set(fb) - set(fa))}")
        for key in sorted(fa):
            self.value(fa[key], fb[key], f"{where}.{key}", (a, b))
        if isinstance(a, Data) and isinstance(b, Data) and "data" not in fa:
            self.value(a.data, b.data, f"{where}.data", (a, b))

    def value(self, x: Any, y: Any, where: str, owners: tuple[Any, Any] | None) -> None:
        if isinstance(x, AbstractContainer) or isinstance(y, AbstractContainer):
            self.reference(x, y, where, owners)
        elif isinstance(x, DataIO) or isinstance(y, DataIO):
            self.value(x.data if isinstance(x, DataIO) else x, y.data if isinstance(y, DataIO) else y, where, owners)
        elif _is_dataset(x) or _is_dataset(y):
            self.array(_read(x), _read(y), where, owners)
        elif isinstance(x, Mapping) or isinstance(y, Mapping):
            if not (isinstance(x, Mapping) and isinstance(y, Mapping)):
                self.fail(where, f"{type(x).__name__} != {type(y).__name__}")
            if set(x) != set(y):
                self.fail(where, f"keys only in a: {sorted(set(x) - set(y))}, only in b: {sorted(set(y) - set(x))}")
            for key in sorted(x, key=str):
                self.value(x[key], y[key], f"{where}[{key!r}]", owners)
        elif isinstance(x, (list, tuple)) or isinstance(y, (list, tuple)):
            if not (isinstance(x, (list, tuple)) and isinstance(y, (list, tuple))):
                self.fail(where, f"{type(x).__name__} != {type(y).__name__}")
            if len(x) != len(y):
                self.fail(where, f"length {len(x)} != {len(y)}")
            for i, (u, v) in enumerate(zip(x, y)):
                self.value(u, v, f"{where}[{i}]", owners)
        elif not _same_scalar(x, y):
            self.fail(where, f"{_show(x)} != {_show(y)}")

    def reference(self, x: Any, y: Any, where: str, owners: tuple[Any, Any] | None) -> None:
        if not (isinstance(x, AbstractContainer) and isinstance(y, AbstractContainer)):
            self.fail(where, f"{type(x).__name__} != {type(y).__name__}")
        child = owners is not None and (x.parent is owners[0], y.parent is owners[1])
        if child and child[0] != child[1]:
            self.fail(where, f"a child on one side only (child in a: {child[0]}, in b: {child[1]})")
        if child and child[0]:
            self.container(x, y, _path(x, self.ios[0]) or f"{where}/{x.name}")
            return
        pa, pb = _path(x, self.ios[0]), _path(y, self.ios[1])
        if pa is None and pb is None:  # made on read, not read from a node (PyNWB upgrading an old file)
            self.container(x, y, where)
        elif pa != pb:
            self.fail(where, f"refers to {pa} != {pb}")

    def array(self, x: Any, y: Any, where: str, owners: tuple[Any, Any] | None) -> None:
        if (
            isinstance(x, np.ndarray)
            and isinstance(y, np.ndarray)
            and x.dtype.kind in "biufcmM"
            and y.dtype.kind in "biufcmM"
        ):
            if x.dtype != y.dtype:
                self.fail(where, f"dtype {x.dtype} != {y.dtype}")
            if x.shape != y.shape:
                self.fail(where, f"shape {x.shape} != {y.shape}")
            ne = x != y
            if x.dtype.kind in "fc":
                ne &= ~(np.isnan(x) & np.isnan(y))
            if ne.any():
                first = tuple(int(i) for i in np.argwhere(ne)[0]) if ne.ndim else ()
                self.fail(
                    where,
                    f"values differ in {int(ne.sum())} of {ne.size}, first {list(first)}: "
                    f"{_show(x[first].item())} != {_show(y[first].item())}",
                )
            return
        self.value(_listed(x), _listed(y), where, None)


def _is_dataset(x: Any) -> bool:
    return isinstance(x, np.ndarray) or (hasattr(x, "shape") and hasattr(x, "dtype") and hasattr(x, "__getitem__"))


def _read(x: Any) -> Any:
    """A whole dataset: a numeric ndarray, or a list (tuple rows, containers, text) of its elements."""
    if not _is_dataset(x):
        return x
    value = x[()] if x.shape == () else x[:]
    if isinstance(value, np.ndarray) and value.dtype.kind in "biufcmM":
        return value
    return _listed(value)


def _listed(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        if value.dtype.names:
            return (
                [tuple(_listed(row[n]) for n in value.dtype.names) for row in value.reshape(-1)]
                if value.ndim
                else tuple(_listed(value[n]) for n in value.dtype.names)
            )
        return [_listed(v) for v in value] if value.ndim else _listed(value[()])
    if isinstance(value, np.void):
        return tuple(_listed(v) for v in value.tolist())
    if isinstance(value, (list, tuple)):
        return type(value)(_listed(v) for v in value)
    if isinstance(value, (bytes, np.bytes_)):
        return bytes(value).decode("utf-8")
    if isinstance(value, np.generic):
        return value.item()
    return value


def _same_scalar(x: Any, y: Any) -> bool:
    x, y = _listed(x), _listed(y)
    if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
        return True
    if isinstance(x, str) != isinstance(y, str):
        return False
    if isinstance(x, datetime.datetime) and isinstance(y, datetime.datetime):
        return x == y and x.utcoffset() == y.utcoffset()
    if type(x) is not type(y) and not (isinstance(x, (int, float)) and isinstance(y, (int, float))):
        return False
    return bool(x == y)
