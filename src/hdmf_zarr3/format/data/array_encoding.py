"""The stored values of a dataset's data, as arrays ready for zarr's codec pipeline.

Pure rules: nothing here reads or writes a store. (:mod:`.values` holds the JSON encodings of
attributes, compound rows and string elements that these arrays are made of.)

In-memory values (numbers, strings, lists, numpy arrays, references, compound rows) are converted
in one step by :func:`encode_values`. Array-like sources that may not fit in memory (h5py datasets,
zarr arrays, our own lazy datasets) are converted block by block by the writer, which calls
:func:`encode_values` on each block.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from ...errors import UnsupportedDataError
from ..vocabulary import dtypes
from .references import Reference, encode_element
from .values import encode_row, encode_string

RefEncoder = Callable[[Any], Reference | None]


def is_lazy_source(data: Any) -> bool:
    """True for array-likes read block by block (h5py, zarr, lazy HDMF datasets)."""
    if isinstance(data, (np.ndarray, list, tuple, str, bytes)) or np.isscalar(data):
        return False
    return hasattr(data, "shape") and hasattr(data, "__getitem__")


def source_shape(data: Any) -> tuple[int, ...]:
    return tuple(int(s) for s in data.shape)


def encode_values(data: Any, storage: dtypes.StorageType, ref: RefEncoder, where: str) -> np.ndarray:
    """``data`` as a numpy array of the stored values (object arrays of ``str`` for strings)."""
    kind = storage.kind
    if kind == "numeric":
        return _numeric(data, storage, where)
    if kind == "struct":
        return _struct(data, storage, where)
    if kind == "string":
        return _elementwise(data, lambda x: encode_string(x, cast(str, storage.zarr_dtype), where), where)
    if kind == "reference":
        return _elementwise(
            data, lambda x: encode_element(None if x is None else ref(x)), where, scalar_types=_ref_scalar_types()
        )
    if kind == "rows":

        def row(x: Any) -> str:
            return json.dumps(encode_row(x, storage.fields, ref, where), separators=(",", ":"), allow_nan=False)

        return _rows(data, row, where)
    raise UnsupportedDataError(f"unknown storage kind {kind}", where)


def _numeric(data: Any, storage: dtypes.StorageType, where: str) -> np.ndarray:
    target = storage.numpy_dtype
    try:
        # Python numbers go straight to the target type: via float64, uint64 values above 2**63 would be lost.
        arr = data if isinstance(data, np.ndarray) else np.asarray(data, dtype=target)
        if arr.dtype.kind in "OUST" and target.kind != "b":
            arr = np.asarray(data, dtype=target)
        return arr.astype(target, copy=False)
    except (TypeError, ValueError) as exc:
        raise UnsupportedDataError(f"cannot store {type(data).__name__} as {target}: {exc}", where) from exc


def _struct(data: Any, storage: dtypes.StorageType, where: str) -> np.ndarray:
    target = storage.numpy_dtype
    if isinstance(data, np.ndarray) and data.dtype.names is not None:
        out = np.empty(data.shape, dtype=target)
        for f in storage.fields:
            out[f.name] = data[f.name]
        return out
    if isinstance(data, (tuple, np.void)) and not _is_rows(data):  # one row: a 0-d dataset
        return _struct([data], storage, where).reshape(())
    rows = [tuple(_row_tuple(r, storage.fields)) for r in _as_list(data)]
    try:
        return np.array(rows, dtype=target)
    except (TypeError, ValueError) as exc:
        raise UnsupportedDataError(f"compound rows do not fit fields {storage.zarr_dtype}: {exc}", where) from exc


def _row_tuple(row: Any, fields: tuple[dtypes.Field, ...]) -> tuple:
    if isinstance(row, dict):
        return tuple(row[f.name] for f in fields)
    if isinstance(row, np.void):
        return tuple(row[i] for i in range(len(fields)))
    return tuple(row)


def _as_list(data: Any) -> list:
    if isinstance(data, np.ndarray):
        return list(data) if data.ndim else [data[()]]
    if isinstance(data, (tuple, np.void)) and not _is_rows(data):
        return [data]
    return list(data)


def _is_rows(data: Any) -> bool:
    from hdmf.build import ReferenceBuilder  # local: keep the format importable on its own

    # ReferenceBuilder is a dict: a reference first field is not a row
    return (
        len(data) > 0
        and isinstance(data[0], (tuple, list, np.void, dict))
        and not isinstance(data[0], ReferenceBuilder)
    )


def _rows(data: Any, fn: Callable[[Any], str], where: str) -> np.ndarray:
    if isinstance(data, np.ndarray) and data.ndim == 0:  # a scalar compound given as a 0-d structured array
        data = data[()]
    if isinstance(data, np.void) or (isinstance(data, tuple) and not _is_rows(data)):
        return _object_array([fn(data)], ()).reshape(())
    rows = [fn(r) for r in (list(data) if not isinstance(data, np.ndarray) else data)]
    return _object_array(rows, (len(rows),))


def _ref_scalar_types() -> tuple[type, ...]:
    from hdmf.build import Builder, ReferenceBuilder
    from hdmf.container import AbstractContainer

    return (Builder, ReferenceBuilder, AbstractContainer)


def _elementwise(
    data: Any, fn: Callable[[Any], str], where: str, scalar_types: tuple[type, ...] = (str, bytes)
) -> np.ndarray:
    """Apply ``fn`` to every element of (nested) data, keeping its shape."""
    if (
        data is None
        or isinstance(data, scalar_types + (str, bytes, np.str_, np.bytes_, datetime.date))
        or np.isscalar(data)
    ):
        return _object_array([fn(data)], ()).reshape(())
    if isinstance(data, np.ndarray):
        if data.ndim == 0:
            return _object_array([fn(data[()])], ()).reshape(())
        flat = [fn(x) for x in data.ravel().tolist()] if data.dtype.kind != "O" else [fn(x) for x in data.ravel()]
        return _object_array(flat, data.shape)
    items = list(data)
    if items and not isinstance(items[0], scalar_types + (str, bytes)) and _nested(items[0]):
        parts = [_elementwise(x, fn, where, scalar_types) for x in items]
        shapes = {p.shape for p in parts}
        if len(shapes) != 1:
            raise UnsupportedDataError("ragged nested data cannot be stored as one array", where)
        out = np.empty((len(parts),) + parts[0].shape, dtype=object)
        for i, p in enumerate(parts):
            out[i] = p
        return out
    return _object_array([fn(x) for x in items], (len(items),))


def _nested(x: Any) -> bool:
    return isinstance(x, (list, tuple, np.ndarray)) or (
        hasattr(x, "__len__") and hasattr(x, "__getitem__") and not isinstance(x, (str, bytes, dict))
    )


def _object_array(items: list, shape: tuple[int, ...]) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out.reshape(shape)
