"""Scalars stored in their array document: a 0-d array whose value is its ``fill_value``, with no chunk.

Every Zarr v3 reader returns an array's ``fill_value`` for a chunk that is not stored, so a 0-d array
holding one number or one string needs no chunk object: its value is written as the ``fill_value``
(spelled as the Zarr v3 core specification spells fill values of its data type) and the array carries
the reserved attribute :data:`~.names.CHUNKLESS_ATTR` (``true``). Our reader takes the value of such
an array from its document, which the consolidated root already holds: opening and reading a file
costs no request per scalar. Arrays without the attribute (files written before, other writers) are
read from their chunk as before. Pure rules: nothing here touches a store.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..vocabulary import ALL_CHUNKS_ATTR, CHUNKLESS_ATTR, StorageType

#: Strings longer than this (in UTF-8 bytes) keep their chunk: every open reads the consolidated root,
#: which holds every document. The cached specifications of NWB (the largest is ~100 KB) fit.
MAX_TEXT_BYTES = 2**20

_SPECIAL = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


def fill_value_of(value: Any, storage: StorageType) -> Any | None:
    """The JSON ``fill_value`` that holds ``value`` exactly in ``storage``'s data type, or ``None``
    when it cannot (data types other than numbers and ``string``; texts above :data:`MAX_TEXT_BYTES`)."""
    if isinstance(value, np.ndarray):
        value = value[()]
    if storage.data_type == "string":
        if not isinstance(value, str) or len(value.encode("utf-8", "surrogatepass")) > MAX_TEXT_BYTES:
            return None
        return value
    if storage.kind != "numeric":
        return None
    dtype = storage.numpy_dtype
    if dtype.kind == "b":
        return bool(value)
    if dtype.kind in "iu":
        return int(value)
    if dtype.kind != "f":
        return None
    number = dtype.type(value)
    if np.isnan(number):
        canonical = np.array(np.nan, dtype=dtype).view(f"u{dtype.itemsize}")
        bits = np.array(number, dtype=dtype).view(f"u{dtype.itemsize}")
        # other NaNs (sign, payload) only as their bytes: "0x" and the big-endian unsigned integer
        return "NaN" if bits == canonical else f"0x{int(bits):0{2 * dtype.itemsize}x}"
    if np.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    return float(number)  # Python's float repr reads back as the same float64, hence the same float32/16


def value_of_fill(fill: Any, storage: StorageType) -> np.ndarray:
    """The 0-d array a ``fill_value`` written by :func:`fill_value_of` holds."""
    if storage.data_type == "string":
        out = np.empty((), dtype=object)
        out[()] = str(fill)
        return out
    dtype = storage.numpy_dtype
    if isinstance(fill, str) and fill.startswith("0x"):
        bits = np.array(int(fill, 16), dtype=f"u{dtype.itemsize}")
        return bits.view(dtype).reshape(())
    if isinstance(fill, str):
        fill = _SPECIAL[fill]
    return np.array(fill, dtype=dtype)


def chunkless_document(doc: dict[str, Any], storage: StorageType, values: np.ndarray) -> dict[str, Any]:
    """``doc`` of a 0-d array holding ``values``, made chunkless when its value fits a ``fill_value``
    (else ``doc`` unchanged: its value is stored in a chunk)."""
    if values.ndim != 0 or doc.get("shape") != []:
        return doc
    fill = fill_value_of(values, storage)
    if fill is None:
        return doc
    attributes = {k: v for k, v in doc["attributes"].items() if k != ALL_CHUNKS_ATTR}  # it has no chunk
    return {**doc, "fill_value": fill, "attributes": {**attributes, CHUNKLESS_ATTR: True}}


def is_chunkless(doc: dict[str, Any]) -> bool:
    """Whether ``doc`` is a 0-d array written chunkless (its value is its ``fill_value``)."""
    return (
        doc.get("node_type") == "array"
        and doc.get("zarr_format") == 3
        and doc.get("shape") == []
        and doc.get("attributes", {}).get(CHUNKLESS_ATTR) is True
    )


def stored_value(doc: dict[str, Any]) -> np.ndarray | None:
    """The value of a chunkless 0-d array (see :func:`is_chunkless`), or ``None`` for any other array;
    ``None`` too for a data type whose fill value this module does not write (a foreign array)."""
    if not is_chunkless(doc):
        return None
    data_type = doc.get("data_type")
    if data_type == "string":
        fill = doc.get("fill_value")
        return value_of_fill(fill, StorageType("string", "text", "string")) if isinstance(fill, str) else None
    try:
        dtype = np.dtype(data_type) if isinstance(data_type, str) else None
    except Exception:  # noqa: BLE001 - numpy's parser raises TypeError, ValueError, SyntaxError... on hostile names
        return None
    if dtype is None or dtype.kind not in "biuf":
        return None
    try:
        return value_of_fill(doc.get("fill_value"), StorageType("numeric", str(data_type), str(data_type)))
    except (KeyError, TypeError, ValueError, OverflowError):
        return None
