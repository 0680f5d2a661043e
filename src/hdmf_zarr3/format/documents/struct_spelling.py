"""The two spellings of a compound array's data type: ``struct`` in a node's own document, zarr-python's
earlier ``structured`` in the root's consolidated copy (issue #42).

A node's ``zarr.json`` spells an all-numeric compound as the registered extension data type::

    "data_type": {"name": "struct", "configuration": {"fields": [{"name": "x", "data_type": "uint32"}, ...]}},
    "fill_value": {"x": 0, ...}

zarr-python 3.0 and 3.1 do not know that name, and zarr-python opens a group by parsing every document of
its consolidated copy: one ``struct`` there makes the whole file unreadable in 3.1 (which dandi-cli pins).
zarr-python 3.1 and 3.4 both read the name 3.1 gave compounds, so the consolidated copy spells them so::

    "data_type": {"name": "structured", "configuration": {"fields": [["x", "uint32"], ...]}},
    "fill_value": "<base64 of the packed little-endian element>"

:func:`older_spelling` writes it (into the copy only) and :func:`canonical_spelling` reads either back
as ``struct``, so every document a reader uses says ``struct``. zarr-python 3.0 has no compound type at
all: it opens such a file with ``use_consolidated=False``, every array but the compounds.
"""

from __future__ import annotations

import base64
import binascii
import math
from typing import Any

import numpy as np

from ...errors import CorruptStoreError
from ..vocabulary import FIXED_SIZE_TYPES

STRUCT = "struct"
STRUCTURED = "structured"
UTF32 = "fixed_length_utf32"
#: The widest text field read (hdmf-zarr 0.14 sizes them to the data; a field of 1 MiB is far beyond any).
MAX_TEXT_FIELD_BYTES = 2**20
#: The largest element read (numpy's item size of a record wraps around past 2**31 bytes: 4096 fields of 1 MiB
#: made one of 0 bytes).
MAX_ELEMENT_BYTES = 16 * 2**20
#: How a float fill that JSON has no number for is written in a Zarr v3 document.
_SPECIAL_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def older_spelling(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with a ``struct`` data type and its fill spelled as zarr-python 3.1 reads them; any other
    document as it is (as is a ``struct`` with a field type or a fill this module does not know)."""
    data_type = doc.get("data_type")
    if doc.get("node_type") != "array" or not isinstance(data_type, dict) or data_type.get("name") != STRUCT:
        return doc
    fields = [(f["name"], f["data_type"]) for f in data_type["configuration"]["fields"]]
    numpy_fields = [t for t in (_numpy_field(kind) for _, kind in fields) if t is not None]
    fill = doc.get("fill_value")
    if len(numpy_fields) != len(fields) or not isinstance(fill, dict) or _element_bytes(numpy_fields) is None:
        return doc
    element = np.zeros((), dtype=np.dtype([(name, t) for (name, _), t in zip(fields, numpy_fields)]))
    for (name, _), numpy_field in zip(fields, numpy_fields):
        value = fill.get(name)
        if numpy_field.kind == "f" and isinstance(value, str):
            value = _SPECIAL_FLOATS.get(value)
        if not isinstance(value, str if numpy_field.kind == "U" else (bool, int, float)):
            return doc
        try:
            element[name] = value
        except (OverflowError, ValueError, TypeError):
            return doc
        if _json_value(element[name]) != fill.get(name):  # (a fill the field cannot hold exactly: 0.5 in an int)
            return doc
    return {
        **doc,
        "data_type": {"name": STRUCTURED, "configuration": {"fields": [[name, kind] for name, kind in fields]}},
        "fill_value": base64.b64encode(element.tobytes()).decode("ascii"),
    }


def canonical_spelling(doc: dict[str, Any], path: str) -> dict[str, Any]:
    """``doc`` with a ``structured`` data type (:func:`older_spelling`'s, as zarr-python 3.1 writes it) and
    its base64 fill spelled as ``struct``; any other document as it is. A ``structured`` type that is not
    a list of ``[name, field type]`` pairs of types this module knows, or a fill that is not one packed
    element, is a CorruptStoreError naming ``path``."""
    data_type = doc.get("data_type")
    if doc.get("node_type") != "array" or not isinstance(data_type, dict) or data_type.get("name") != STRUCTURED:
        return doc
    config = data_type.get("configuration")
    pairs = config.get("fields") if isinstance(config, dict) else None
    if not isinstance(pairs, list) or not pairs or not all(_is_field(p) for p in pairs):
        raise CorruptStoreError("a 'structured' data type's fields must be [name, known field type] pairs", path)
    if len({name for name, _ in pairs}) != len(pairs):
        raise CorruptStoreError("a 'structured' data type names a field twice", path)
    field_types = [t for t in (_numpy_field(kind) for _, kind in pairs) if t is not None]
    if _element_bytes(field_types) is None:
        raise CorruptStoreError(f"a 'structured' element of more than {MAX_ELEMENT_BYTES} bytes", path)
    packed = np.dtype([(name, t) for (name, _), t in zip(pairs, field_types)])
    fill = doc.get("fill_value")
    try:
        raw = base64.b64decode(fill if isinstance(fill, str) else b"-", validate=True)
    except (binascii.Error, ValueError) as exc:
        raise CorruptStoreError(f"a 'structured' fill_value must be base64 ({exc})", path) from exc
    if len(raw) != packed.itemsize:
        raise CorruptStoreError(f"a 'structured' fill_value must be {packed.itemsize} bytes, not {len(raw)}", path)
    element = np.frombuffer(raw, dtype=packed)[0]
    return {
        **doc,
        "data_type": {"name": STRUCT, "configuration": {"fields": [{"name": n, "data_type": k} for n, k in pairs]}},
        "fill_value": {name: _json_value(element[name]) for name, _ in pairs},
    }


def _is_field(pair: Any) -> bool:
    return (
        isinstance(pair, list)
        and len(pair) == 2
        and isinstance(pair[0], str)
        and bool(pair[0])
        and _numpy_field(pair[1]) is not None
    )


def _element_bytes(field_types: list[np.dtype]) -> int | None:
    """The bytes of one element of these fields (summed here, not by numpy), or ``None`` past
    :data:`MAX_ELEMENT_BYTES`."""
    total = sum(t.itemsize for t in field_types)
    return total if total <= MAX_ELEMENT_BYTES else None


def _numpy_field(kind: Any) -> np.dtype | None:
    """The little-endian numpy type of a field's Zarr v3 data type: a number or a boolean (not complex), or
    ``fixed_length_utf32`` (the hdmf-zarr convention's text fields); ``None`` for any other."""
    if isinstance(kind, str):
        return np.dtype(kind).newbyteorder("<") if kind in FIXED_SIZE_TYPES and "complex" not in kind else None
    config = kind.get("configuration") if isinstance(kind, dict) and kind.get("name") == UTF32 else None
    size = config.get("length_bytes") if isinstance(config, dict) else None
    if type(size) is not int or not 0 < size <= MAX_TEXT_FIELD_BYTES or size % 4:
        return None
    return np.dtype(f"<U{size // 4}")


def _json_value(value: Any) -> Any:
    """A field's fill as a Zarr v3 document writes it: a boolean, an integer, a number, a float's special
    name, or text."""
    item = value.item() if isinstance(value, (np.generic, np.ndarray)) else value  # (a field of a 0-d element: 0-d)
    if isinstance(item, float) and not math.isfinite(item):
        return "NaN" if math.isnan(item) else "Infinity" if item > 0 else "-Infinity"
    return item
