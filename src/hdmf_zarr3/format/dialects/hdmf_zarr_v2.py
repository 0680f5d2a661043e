"""hdmf-zarr ≤0.13's Zarr v2 convention, read into this package's model.

What it stores, and how it maps (facts from files hdmf-zarr 0.13 wrote; see ``docs/conversion.md``):

- ``zarr_dtype`` on an array: ``"object"`` for object references, a list of ``{name, dtype}`` for a
  compound (``"object"`` marks a reference field, ``"str_"`` a string field), ``"scalar"`` for a 0-d
  value stored as one element of shape ``(1,)``, or a Python/numpy type name (``"int"``, ``"str"``,
  ``"bytes"``, ...). The element type itself is the ``.zarray`` dtype and codecs: the type names are
  not exact (``"int"`` is stored as int64), so the ``.zarray`` dtype is used.
- Object references in arrays, and compounds with reference or string fields, are numpy object
  arrays encoded with numcodecs' ``Pickle`` codec (the default) or ``JSON`` codec; each reference is
  a record ``{source, path, object_id, source_object_id}``. They are decoded by
  :mod:`hdmf_zarr3.storage.stores.v2` without unpickling anything.
- Attribute references (``{"zarr_dtype": "object", "value": record}``) and ``zarr_link`` records are
  this package's own forms already, except that ``source`` is relative to the store directory
  itself (``"../other.nwb.zarr"``), which :func:`relative_to_parent` turns into ours.
- ``_ARRAY_DIMENSIONS`` (xarray's convention) holds the dimension labels; it becomes the document's
  ``dimension_names``. Attribute numbers are plain JSON (their numpy type is restored from the spec).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import CorruptStoreError
from ..vocabulary import DTYPE_ATTR, LINK_ATTR, dtypes
from .base import ArrayLayout, HdmfZarrDialect

SCALAR = "scalar"
ARRAY_DIMENSIONS = "_ARRAY_DIMENSIONS"
OBJECT_CODECS = frozenset({"pickle", "json2", "json"})
_FIELD_NAMES = {
    "str_": dtypes.TEXT,
    "str": dtypes.TEXT,
    "unicode": dtypes.TEXT,
    "bytes_": dtypes.ASCII,
    "bytes": dtypes.ASCII,
    "object": dtypes.OBJECT,
    "bool_": "bool",
}


def numpy_dtype(doc: dict[str, Any], path: str) -> np.dtype:
    """The numpy dtype a ``.zarray`` declares (structured dtypes are lists of ``[name, dtype]``)."""
    dtype = doc.get("dtype")
    try:
        if isinstance(dtype, list):
            return np.dtype([tuple(f) for f in dtype])
        return np.dtype(dtype)
    except (TypeError, ValueError) as exc:
        raise CorruptStoreError(f"invalid Zarr v2 dtype {str(dtype)[:80]!r}", path) from exc


def filter_ids(doc: dict[str, Any]) -> list[Any]:
    """The ``id`` of each filter of a Zarr v2 array (``None`` for a filter without one)."""
    return [f.get("id") for f in doc.get("filters") or [] if isinstance(f, dict)]


class HdmfZarrV2Dialect(HdmfZarrDialect):
    name = "hdmf-zarr <=0.13 (Zarr v2)"

    @classmethod
    def recognises(cls, raw: dict[str, dict[str, Any]]) -> bool:
        if raw["/"].get("zarr_format") != 2:
            return False
        return cls.hdmf_root(raw) or any(
            DTYPE_ATTR in d.get("attributes", {}) or LINK_ATTR in d.get("attributes", {}) for d in raw.values()
        )

    def _document(self, path: str, doc: dict[str, Any]) -> dict[str, Any]:
        out = dict(doc)
        attrs: dict[str, Any] = {}
        for key, value in doc.get("attributes", {}).items():
            if key == DTYPE_ATTR:
                continue
            if key == ARRAY_DIMENSIONS:
                if (
                    doc.get("node_type") == "array"
                    and isinstance(value, list)
                    and len(value) == len(doc.get("shape", []))
                    and all(isinstance(v, str) for v in value)
                ):
                    out["dimension_names"] = value
                continue
            if key == LINK_ATTR:
                if not isinstance(value, list):
                    raise CorruptStoreError(f"zarr_link must be a list, got {type(value).__name__}", path)
                attrs[key] = [self._record(link, path) for link in value]
            elif isinstance(value, dict) and value.get(DTYPE_ATTR) == dtypes.OBJECT and "value" in value:
                inner = value["value"]
                records = (
                    [self._record(v, path) for v in inner] if isinstance(inner, list) else self._record(inner, path)
                )
                attrs[key] = {DTYPE_ATTR: dtypes.OBJECT, "value": records}
            else:
                attrs[key] = value
        out["attributes"] = attrs
        if doc.get("node_type") == "array" and doc.get("dtype") == "|O":
            out["fill_value"] = None  # an int 0 (or a pickle) that zarr-python 3 refuses for objects
        return out

    def _layout(self, path: str, doc: dict[str, Any]) -> ArrayLayout:
        zarr_dtype = self.raw[path].get("attributes", {}).get(DTYPE_ATTR)
        npd = numpy_dtype(doc, path)
        filters = filter_ids(doc)
        objects = any(f in OBJECT_CODECS for f in filters)
        shape = doc.get("shape")
        scalar = shape == [] or (zarr_dtype == SCALAR and shape == [1])
        if isinstance(zarr_dtype, list):
            fields = tuple(_field(f, path) for f in zarr_dtype)
            return ArrayLayout(dtypes.for_compound(fields), scalar, references="record", objects=objects)
        if zarr_dtype == dtypes.OBJECT:
            if not objects:
                raise CorruptStoreError("object references stored without the Pickle or JSON codec", path)
            return ArrayLayout(dtypes.for_scalar_dtype(dtypes.OBJECT), scalar, references="record", objects=True)
        if npd.names is not None:  # a compound without its zarr_dtype: fields from the dtype
            fields = tuple(dtypes.Field(n, _element(npd[n], [], None, path)) for n in npd.names)
            return ArrayLayout(dtypes.for_compound(fields), scalar, references="record", objects=objects)
        element = _element(npd, filters, zarr_dtype, path)
        return ArrayLayout(dtypes.for_scalar_dtype(element), scalar, references="record", objects=objects)


def _element(npd: np.dtype, filters: list[str], zarr_dtype: Any, path: str) -> str:
    """The canonical HDMF dtype of one element, from the stored dtype and codecs."""
    if npd.kind in "biuf":
        return npd.name
    if npd.kind == "U":
        return dtypes.TEXT
    if npd.kind == "S" or zarr_dtype in ("bytes", "ascii") or "vlen-bytes" in filters:
        return dtypes.ASCII
    if npd.kind == "O":
        return dtypes.TEXT
    raise CorruptStoreError(f"unsupported Zarr v2 dtype {npd}", path)


def _field(spec: Any, path: str) -> dtypes.Field:
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str) or not isinstance(spec.get("dtype"), str):
        raise CorruptStoreError(f"malformed compound zarr_dtype field {str(spec)[:80]}", path)
    name = _FIELD_NAMES.get(spec["dtype"]) or dtypes.canonical(spec["dtype"])
    if name is None:
        raise CorruptStoreError(f"unknown compound field dtype {spec['dtype']!r}", path)
    return dtypes.Field(spec["name"], name)
