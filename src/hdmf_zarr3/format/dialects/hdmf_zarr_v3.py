"""hdmf-zarr 0.14's Zarr v3 convention, read into this package's model.

What it stores, and how it maps (facts from files hdmf-zarr 0.14 wrote; see ``docs/conversion.md``):

- ``_DTYPE`` on an array: ``"object_reference"`` marks a ``string`` array whose elements are absolute
  in-file paths (``""`` never occurs; we read it as a null reference); other values are Python or
  numpy type names that the Zarr ``data_type`` states exactly, so the ``data_type`` is used.
- Compounds are ``struct`` arrays; reference and string fields are ``fixed_length_utf32``, and the
  reference fields are listed in ``_REFERENCE_FIELDS``.
- Attribute references are ``{"_REFERENCE": {"source": ..., "path": ...}}``; links are ``_LINKS``
  records ``{name, source, path}``; ``source`` is ``"."`` or relative to the store directory itself
  (``"../other.nwb.zarr"``), which :func:`relative_to_parent` turns into ours.
- ``_ARRAY_DIMENSIONS`` (xarray's convention) holds the dimension labels; it becomes the document's
  ``dimension_names``, as this package stores them.
- Attribute numbers are plain JSON: their numpy type is lost (the reader restores it from the spec).
"""

from __future__ import annotations

from typing import Any

from ...errors import FormatError
from .. import dtypes as D
from .. import names as N
from . import ArrayLayout, Dialect, relative_to_parent

DTYPE = "_DTYPE"
LINKS = "_LINKS"
REFERENCE = "_REFERENCE"
REFERENCE_FIELDS = "_REFERENCE_FIELDS"
ARRAY_DIMENSIONS = "_ARRAY_DIMENSIONS"
REFERENCE_DTYPE = "object_reference"
_TEXT_TYPES = ("string", "variable_length_utf8", "fixed_length_utf32")
_BYTES_TYPES = ("bytes", "variable_length_bytes", "fixed_length_bytes", "null_terminated_bytes")


class HdmfZarrV3Dialect(Dialect):
    name = "hdmf-zarr 0.14"
    writable = False
    typed_attributes = False

    @classmethod
    def recognises(cls, raw: dict[str, dict[str, Any]]) -> bool:
        if raw["/"].get("zarr_format") != 3:
            return False
        for doc in raw.values():
            attrs = doc.get("attributes", {})
            if DTYPE in attrs or LINKS in attrs or REFERENCE_FIELDS in attrs:
                return True
            if any(isinstance(v, dict) and REFERENCE in v for v in attrs.values()):
                return True
        root = raw["/"].get("attributes", {})
        return N.SPECLOC_ATTR in root or "neurodata_type" in root or "data_type" in root

    def source(self, source: str) -> str:
        return relative_to_parent(source, self.store_name)

    def translate(self, raw: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return {path: self._document(path, doc) for path, doc in raw.items()}

    def _document(self, path: str, doc: dict[str, Any]) -> dict[str, Any]:
        attrs: dict[str, Any] = {}
        out = dict(doc)
        for key, value in doc.get("attributes", {}).items():
            if key in (DTYPE, REFERENCE_FIELDS):
                continue
            if key == ARRAY_DIMENSIONS:
                if doc.get("node_type") == "array" and _names(value, len(doc.get("shape", []))):
                    out["dimension_names"] = value
                continue
            if key == LINKS:
                attrs[N.LINK_ATTR] = [self._record(link, path) for link in _list(value, key, path)]
            elif key == N.SPECLOC_ATTR and isinstance(value, dict) and REFERENCE in value:
                attrs[key] = str(value[REFERENCE].get("path", ""))
            else:
                attrs[key] = self._value(value, f"{path}@{key}")
        out["attributes"] = attrs
        return out

    def _record(self, record: Any, where: str) -> dict[str, Any]:
        if not isinstance(record, dict) or not isinstance(record.get("source", "."), str):
            raise FormatError(f"malformed link or reference record {str(record)[:80]}", where)
        return {**record, "source": self.source(record.get("source", "."))}

    def _value(self, value: Any, where: str) -> Any:
        if isinstance(value, dict) and REFERENCE in value:
            return {N.DTYPE_ATTR: D.OBJECT, "value": self._record(value[REFERENCE], where)}
        if isinstance(value, list) and value and all(isinstance(v, dict) and REFERENCE in v for v in value):
            return {N.DTYPE_ATTR: D.OBJECT, "value": [self._record(v[REFERENCE], where) for v in value]}
        return value

    def _layout(self, path: str, doc: dict[str, Any]) -> ArrayLayout:
        raw_attrs = self.raw[path].get("attributes", {})
        data_type = doc.get("data_type")
        scalar = doc.get("shape") == []
        if isinstance(data_type, dict) and data_type.get("name") == "struct":
            refs = raw_attrs.get(REFERENCE_FIELDS) or []
            fields = tuple(_field(f, refs, path) for f in data_type.get("configuration", {}).get("fields", []))
            if not fields:
                raise FormatError("struct data type without fields", path)
            return ArrayLayout(D.for_compound(fields), scalar=scalar, references="path")
        name = data_type.get("name") if isinstance(data_type, dict) else data_type
        if raw_attrs.get(DTYPE) in (REFERENCE_DTYPE, D.OBJECT) and name in _TEXT_TYPES:
            return ArrayLayout(D.for_scalar_dtype(D.OBJECT), scalar=scalar, references="path")
        if name in _TEXT_TYPES:
            kind = D.ASCII if raw_attrs.get(DTYPE) == "bytes" else D.TEXT
            return ArrayLayout(D.for_scalar_dtype(kind), scalar=scalar)
        if name in _BYTES_TYPES:
            return ArrayLayout(D.for_scalar_dtype(D.ASCII), scalar=scalar)
        if name in D.NUMERIC_NAMES:
            return ArrayLayout(D.for_scalar_dtype(name), scalar=scalar)
        raise FormatError(f"unsupported Zarr data type {data_type!r} in an hdmf-zarr 0.14 file", path)


def _field(spec: Any, refs: list, path: str) -> D.Field:
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
        raise FormatError(f"malformed struct field {str(spec)[:80]}", path)
    data_type = spec.get("data_type")
    name = data_type.get("name") if isinstance(data_type, dict) else data_type
    if spec["name"] in refs:
        return D.Field(spec["name"], D.OBJECT)
    if name in _TEXT_TYPES:
        return D.Field(spec["name"], D.TEXT)
    if name in _BYTES_TYPES:
        return D.Field(spec["name"], D.ASCII)
    if name in D.NUMERIC_NAMES:
        return D.Field(spec["name"], name)
    raise FormatError(f"unsupported struct field type {data_type!r}", path)


def _list(value: Any, key: str, path: str) -> list:
    if not isinstance(value, list):
        raise FormatError(f"{key} must be a list, got {type(value).__name__}", path)
    return value


def _names(value: Any, ndim: int) -> bool:
    return isinstance(value, list) and len(value) == ndim and all(isinstance(v, str) for v in value)
