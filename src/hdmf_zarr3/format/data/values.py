"""JSON encodings of values: attributes (with their dtypes), compound rows and string elements.

Zarr attributes are JSON. Values JSON holds exactly (``str``, ``bool``, finite Python ``int`` and
``float``, and lists of those) are stored as they are. Everything else is stored in a *typed
envelope* that records its HDMF dtype, so numbers and arrays read back with the same numpy dtype
(``bytes`` and ``datetime`` values read back as ``str``, as HDF5IO gives them)::

    {"zarr_dtype": "uint32", "value": 5}                  # numpy scalar
    {"zarr_dtype": "float64", "value": [1.5, "NaN"]}      # numpy array (nested lists)
    {"zarr_dtype": "float32", "value": [], "shape": [0, 3]}  # empty array with ndim > 1
    {"zarr_dtype": "ascii", "value": "abc"}               # bytes
    {"zarr_dtype": "object", "value": {reference record}}   # object reference (or a list of them)

Non-finite floats are the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"`` (as in Zarr v3
fill values), so every document is strict JSON.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ...errors import CorruptStoreError, UnsupportedDataError
from ..vocabulary import DTYPE_ATTR, dtypes
from .references import Reference

RefEncoder = Callable[[Any], Reference | None]
RefDecoder = Callable[[Reference], Any]

_NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def json_float(x: float) -> float | str:
    if math.isfinite(x):
        return x
    return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")


def _float_from_json(x: Any, where: str) -> float:
    if isinstance(x, str):
        if x not in _NONFINITE:
            raise CorruptStoreError(f"invalid float token {x!r}", where)
        return _NONFINITE[x]
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise CorruptStoreError(f"expected a number, got {x!r}", where)
    return float(x)


def is_reference_like(value: Any) -> bool:
    from hdmf.build import Builder, ReferenceBuilder
    from hdmf.container import AbstractContainer

    return isinstance(value, (AbstractContainer, Builder, ReferenceBuilder))


def _plain(value: Any) -> bool:
    """True if JSON stores ``value`` exactly as the same Python value."""
    if isinstance(value, (str, bool)) or type(value) is int:
        return True
    if type(value) is float:
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return False


def encode_attribute(value: Any, ref: RefEncoder, where: str) -> Any:
    """JSON form of an HDMF attribute value; ``ref`` turns a container/builder into a Reference."""
    if isinstance(value, tuple):
        value = list(value)
    if _plain(value):
        return value
    # an attribute's reference is never deferred (only dataset elements are): ``ref`` gives a Reference here
    if is_reference_like(value):
        return {DTYPE_ATTR: dtypes.OBJECT, "value": ref(value).to_json()}  # type: ignore[union-attr]
    if isinstance(value, list) and value and all(is_reference_like(v) for v in value):
        return {DTYPE_ATTR: dtypes.OBJECT, "value": [ref(v).to_json() for v in value]}  # type: ignore[union-attr]
    if isinstance(value, float):
        return {DTYPE_ATTR: "float64", "value": json_float(value)}
    if isinstance(value, (bytes, np.bytes_)):
        return {DTYPE_ATTR: dtypes.ASCII, "value": _decode_bytes(value, where)}
    if isinstance(value, np.str_):
        return str(value)
    if isinstance(value, (_dt.datetime, _dt.date)):
        return {DTYPE_ATTR: dtypes.ISODATETIME, "value": value.isoformat()}
    if isinstance(value, np.generic):
        value = np.asarray(value)
    if isinstance(value, list):
        value = _list_to_array(value, where)
    if isinstance(value, np.ndarray):
        return _encode_array(value, where)
    raise UnsupportedDataError(f"cannot store attribute value of type {type(value).__name__}", where)


def _list_to_array(value: list, where: str) -> np.ndarray:
    if value and all(isinstance(v, (bytes, np.bytes_)) for v in value):
        out = np.empty(len(value), dtype=object)  # not dtype "S": it would strip trailing NUL bytes
        out[:] = [bytes(v) for v in value]
        return out
    if value and all(isinstance(v, (str, np.str_)) for v in value):
        return np.array([str(v) for v in value], dtype=object)
    try:
        return np.asarray(value)
    except ValueError as exc:
        raise UnsupportedDataError(f"attribute value is a ragged list: {value!r}", where) from exc


def _encode_array(arr: np.ndarray, where: str) -> Any:
    if arr.dtype.names is not None:
        raise UnsupportedDataError("compound attributes are not supported", where)
    name: str | tuple[dtypes.Field, ...] | None = dtypes.canonical(arr.dtype)
    if name is None and arr.dtype.kind == "O":
        name = dtypes.infer(arr) if arr.size else dtypes.TEXT
    if name is None or name not in dtypes.NUMERIC_NAMES + (dtypes.TEXT, dtypes.ASCII, dtypes.ISODATETIME):
        raise UnsupportedDataError(f"cannot store attribute array of dtype {arr.dtype}", where)
    if name in dtypes.NUMERIC_NAMES:
        flat = [json_float(x) for x in arr.ravel().tolist()] if arr.dtype.kind == "f" else arr.ravel().tolist()
    else:
        flat = [encode_string(x, name, where) for x in arr.ravel().tolist()]
    out: dict[str, Any] = {DTYPE_ATTR: name, "value": _nest(flat, arr.shape)}
    if arr.size == 0 and arr.ndim != 1:
        out["shape"] = list(arr.shape)
    return out


def _nest(flat: list, shape: tuple[int, ...]) -> Any:
    if len(shape) == 0:
        return flat[0]
    if len(shape) == 1:
        return flat
    step = len(flat) // shape[0] if shape[0] else 0
    return [_nest(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]


def _decode_bytes(value: bytes, where: str) -> str:
    try:
        return bytes(value).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnsupportedDataError(
            f"{_node(where)} holds bytes that are not UTF-8/ASCII text: {value[:40]!r} "
            "(text is stored as UTF-8; store raw bytes as a uint8 dataset)",
            where,
        ) from exc


def _node(where: str) -> str:
    """The dataset or attribute ``where`` names (a node path, or ``path@key`` for an attribute), for a
    message that also names it by the name the caller gave it."""
    node, _, key = where.partition("@")
    if key:
        return f"attribute {key!r} of {node or '/'!r}"
    return f"dataset {node.rsplit('/', 1)[-1] or '/'!r}"


def decode_attribute(value: Any, resolve: RefDecoder, where: str) -> Any:
    """Python value of a stored attribute (inverse of :func:`encode_attribute`)."""
    if not isinstance(value, dict):
        return value
    if DTYPE_ATTR not in value or "value" not in value:
        raise CorruptStoreError(f"attribute object without '{DTYPE_ATTR}'/'value': {str(value)[:80]}", where)
    dtype, inner = value[DTYPE_ATTR], value["value"]
    if dtype in (dtypes.OBJECT, dtypes.REGION):
        if isinstance(inner, list):
            return [resolve(Reference.from_json(v, where)) for v in inner]
        return resolve(Reference.from_json(inner, where))
    name = dtypes.canonical(dtype) if isinstance(dtype, str) else None
    if name is None or name in dtypes.REFERENCE_DTYPES:
        raise CorruptStoreError(f"unknown attribute dtype {dtype!r}", where)
    if not isinstance(inner, list):
        if name in dtypes.NUMERIC_NAMES:
            return np.dtype(name).type(_scalar_from_json(inner, name, where))
        if not isinstance(inner, str):
            raise CorruptStoreError(f"{name} attribute value must be a string, got {inner!r}", where)
        return inner
    shape = value.get("shape")
    elements = _map_nested(
        inner, lambda x: _scalar_from_json(x, name, where) if name in dtypes.NUMERIC_NAMES else _check_str(x, where)
    )
    if not _rectangular(elements):
        raise CorruptStoreError(f"{name} attribute value is a ragged list: {str(inner)[:80]}", where)
    arr = np.array(elements, dtype=name if name in dtypes.NUMERIC_NAMES else object)
    if shape is not None:
        if (
            not isinstance(shape, list)
            or not all(type(n) is int and n >= 0 for n in shape)
            or math.prod(shape) != arr.size
        ):
            raise CorruptStoreError(f"attribute shape {str(shape)[:80]} does not fit its {arr.size} values", where)
        arr = arr.reshape(shape)
    return arr


def _rectangular(value: list) -> bool:
    """Whether nested lists form a regular n-d array (every list at one depth has the same length)."""
    level = [value]
    while level:
        lists = [v for v in level if isinstance(v, list)]
        if lists and len(lists) != len(level):
            return False
        if not lists:
            return True
        if len({len(v) for v in lists}) > 1:
            return False
        level = [x for v in lists for x in v]
    return True


def _map_nested(value: Any, fn: Callable[[Any], Any]) -> Any:
    if isinstance(value, list):
        return [_map_nested(v, fn) for v in value]
    return fn(value)


def _check_str(x: Any, where: str) -> str:
    if not isinstance(x, str):
        raise CorruptStoreError(f"expected a string element, got {x!r}", where)
    return x


def _scalar_from_json(x: Any, name: str, where: str) -> Any:
    if name == "bool":
        if not isinstance(x, bool):
            raise CorruptStoreError(f"expected a boolean, got {x!r}", where)
        return x
    if name.startswith(("int", "uint")):
        if isinstance(x, bool) or not isinstance(x, int):
            raise CorruptStoreError(f"expected an integer, got {x!r}", where)
        info = np.iinfo(name)
        if not info.min <= x <= info.max:
            raise CorruptStoreError(f"integer {x} out of range for {name}", where)
        return x
    return _float_from_json(x, where)


# --- elements of string arrays ------------------------------------------------------------------


def encode_string(x: Any, dtype: str, where: str) -> str:
    """One element of a ``text``/``ascii``/``isodatetime`` array as a Python ``str``."""
    if isinstance(x, str):
        return x if type(x) is str else str(x)  # numpy.str_ and other subclasses: codecs want str itself
    if isinstance(x, (bytes, np.bytes_)):
        return _decode_bytes(x, where)
    if isinstance(x, (_dt.datetime, _dt.date)):
        return x.isoformat()
    if dtype == dtypes.TEXT and x is not None:
        return str(x)
    raise UnsupportedDataError(f"expected a string for dtype {dtype}, got {type(x).__name__}", where)


# --- compound rows ----------------------------------------------------------------------------


def encode_row(row: Any, fields: tuple[dtypes.Field, ...], ref: RefEncoder, where: str) -> str | list:
    """A compound row as a JSON list (one entry per field, in field order)."""
    values = _row_values(row, fields, where)
    out: list[Any] = []
    for field, v in zip(fields, values):
        if isinstance(field.dtype, tuple):  # a compound field: a JSON array of its own fields, by the same rules
            out.append(encode_row(v, field.dtype, ref, where))
        elif field.dtype in dtypes.REFERENCE_DTYPES:
            encoded = None if v is None else ref(v)  # None: filled in later (see backend/write/pending_references.py)
            out.append(None if encoded is None else encoded.to_json())
        elif field.dtype in dtypes.STRING_DTYPES:
            out.append(encode_string(v, field.dtype, where))
        elif field.dtype == "bool":
            out.append(bool(v))
        elif field.dtype.startswith("float"):
            out.append(json_float(float(v)))
        else:
            out.append(int(v))
    return out


def _row_values(row: Any, fields: tuple[dtypes.Field, ...], where: str) -> list:
    if isinstance(row, dict):
        return [row[f.name] for f in fields]
    if isinstance(row, np.void):
        return [row[i] for i in range(len(fields))]
    values = list(row)
    if len(values) != len(fields):
        raise UnsupportedDataError(f"compound row has {len(values)} values for {len(fields)} fields", where)
    return values


def decode_row(obj: Any, fields: tuple[dtypes.Field, ...], where: str) -> list:
    """Field values of a stored row (a compound field's as a tuple); references stay :class:`Reference`
    (resolved by the caller)."""
    if not isinstance(obj, list) or len(obj) != len(fields):
        raise CorruptStoreError(f"compound row must be a list of {len(fields)} values, got {str(obj)[:80]}", where)
    out: list[Any] = []
    for field, v in zip(fields, obj):
        if isinstance(field.dtype, tuple):  # a compound field
            out.append(tuple(decode_row(v, field.dtype, where)))
        elif field.dtype in dtypes.REFERENCE_DTYPES:
            out.append(None if v is None else Reference.from_json(v, where))
        elif field.dtype in dtypes.STRING_DTYPES:
            out.append(_check_str(v, where))
        else:
            out.append(np.dtype(field.dtype).type(_scalar_from_json(v, field.dtype, where)))
    return out
