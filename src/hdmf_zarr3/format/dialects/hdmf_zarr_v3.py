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

import json
import posixpath
from typing import Any, cast

import numpy as np

from ...errors import CorruptStoreError, UnsupportedDataError
from ..data import Reference, encode_attribute, encode_values
from ..vocabulary import DTYPE_ATTR, LINK_ATTR, SAME_FILE, SPECLOC_ATTR, dtypes
from .base import ArrayLayout, Convention, HdmfZarrDialect

DTYPE = "_DTYPE"
LINKS = "_LINKS"
REFERENCE = "_REFERENCE"
REFERENCE_FIELDS = "_REFERENCE_FIELDS"
ARRAY_DIMENSIONS = "_ARRAY_DIMENSIONS"
REFERENCE_DTYPE = "object_reference"
_TEXT_TYPES = ("string", "variable_length_utf8", "fixed_length_utf32")
_BYTES_TYPES = ("bytes", "variable_length_bytes", "fixed_length_bytes", "null_terminated_bytes")


class HdmfZarrV3Dialect(HdmfZarrDialect):
    name = "hdmf-zarr 0.14"

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
        return cls.hdmf_root(raw)

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
                attrs[LINK_ATTR] = [self._record(link, path) for link in _list(value, key, path)]
            elif key == SPECLOC_ATTR and isinstance(value, dict) and REFERENCE in value:
                attrs[key] = str(value[REFERENCE].get("path", ""))
            else:
                attrs[key] = self._value(value, f"{path}@{key}")
        out["attributes"] = attrs
        return out

    def _value(self, value: Any, where: str) -> Any:
        if isinstance(value, dict) and REFERENCE in value:
            return {DTYPE_ATTR: dtypes.OBJECT, "value": self._record(value[REFERENCE], where)}
        if isinstance(value, list) and value and all(isinstance(v, dict) and REFERENCE in v for v in value):
            return {DTYPE_ATTR: dtypes.OBJECT, "value": [self._record(v[REFERENCE], where) for v in value]}
        return value

    def _layout(self, path: str, doc: dict[str, Any]) -> ArrayLayout:
        raw_attrs = self.raw[path].get("attributes", {})
        data_type = doc.get("data_type")
        scalar = doc.get("shape") == []
        if isinstance(data_type, dict) and data_type.get("name") == "struct":
            refs = raw_attrs.get(REFERENCE_FIELDS) or []
            fields = tuple(_field(f, refs, path) for f in data_type.get("configuration", {}).get("fields", []))
            if not fields:
                raise CorruptStoreError("struct data type without fields", path)
            return ArrayLayout(dtypes.for_compound(fields), scalar=scalar, references="path")
        name = data_type.get("name") if isinstance(data_type, dict) else data_type
        if raw_attrs.get(DTYPE) in (REFERENCE_DTYPE, dtypes.OBJECT) and name in _TEXT_TYPES:
            return ArrayLayout(dtypes.for_scalar_dtype(dtypes.OBJECT), scalar=scalar, references="path")
        if name in _TEXT_TYPES:
            kind = dtypes.ASCII if raw_attrs.get(DTYPE) == "bytes" else dtypes.TEXT
            return ArrayLayout(dtypes.for_scalar_dtype(kind), scalar=scalar)
        if name in _BYTES_TYPES:
            return ArrayLayout(dtypes.for_scalar_dtype(dtypes.ASCII), scalar=scalar)
        if name in dtypes.NUMERIC_NAMES:
            return ArrayLayout(dtypes.for_scalar_dtype(name), scalar=scalar)
        raise CorruptStoreError(f"unsupported Zarr data type {data_type!r} in an hdmf-zarr 0.14 file", path)


def _field(spec: Any, refs: list, path: str) -> dtypes.Field:
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
        raise CorruptStoreError(f"malformed struct field {str(spec)[:80]}", path)
    data_type = spec.get("data_type")
    name = data_type.get("name") if isinstance(data_type, dict) else data_type
    if spec["name"] in refs:
        return dtypes.Field(spec["name"], dtypes.OBJECT)
    if name in _TEXT_TYPES:
        return dtypes.Field(spec["name"], dtypes.TEXT)
    if name in _BYTES_TYPES:
        return dtypes.Field(spec["name"], dtypes.ASCII)
    if name in dtypes.NUMERIC_NAMES:
        return dtypes.Field(spec["name"], name)
    raise CorruptStoreError(f"unsupported struct field type {data_type!r}", path)


def _list(value: Any, key: str, path: str) -> list:
    if not isinstance(value, list):
        raise CorruptStoreError(f"{key} must be a list, got {type(value).__name__}", path)
    return value


def _names(value: Any, ndim: int) -> bool:
    return isinstance(value, list) and len(value) == ndim and all(isinstance(v, str) for v in value)


#: hdmf-zarr pads compound string and reference fields to at least this many characters.
MIN_FIXED_CHARS = 512


def relative_to_store(source: str) -> str:
    """Our ``source`` (relative to the file's directory) as hdmf-zarr's (relative to the store itself)."""
    if source == SAME_FILE or posixpath.isabs(source) or "://" in source:
        return source
    return posixpath.normpath(posixpath.join("..", source))


class HdmfZarrV3Convention(Convention):
    """Writes what hdmf-zarr 0.14 reads (and :class:`HdmfZarrV3Dialect` reads back).

    Its limits are hdmf-zarr's: no region references, no references into other files or null
    references in datasets, and attribute numbers lose their numpy type.
    """

    name = "hdmf-zarr"

    def chunk_keys(self, doc: dict[str, Any], chosen: bool) -> dict[str, Any]:
        return doc  # hdmf-zarr's nested keys

    def root_attributes(self, attrs: dict[str, Any]) -> dict[str, Any]:
        return dict(attrs)

    def link_attribute(self, links: list[Any]) -> tuple[str, Any]:
        return LINKS, [
            {"source": relative_to_store(link.target.source), "path": link.target.path, "name": link.name}
            for link in links
        ]

    def region_attributes(self) -> bool:
        return False

    def attribute(self, value: Any, ref: Any, where: str) -> Any:
        encoded = encode_attribute(value, ref, where)
        return self._plain(encoded, where)

    def _plain(self, encoded: Any, where: str) -> Any:
        """Our typed envelopes as hdmf-zarr's plain JSON (their numpy type is lost, as theirs)."""
        if not isinstance(encoded, dict):
            return encoded
        dtype, inner = encoded.get(DTYPE_ATTR), cast(Any, encoded.get("value"))  # as our envelope holds it
        if dtype == dtypes.OBJECT:
            if isinstance(inner, list):
                raise UnsupportedDataError("hdmf-zarr 0.14 cannot store a list of references in an attribute", where)
            return {REFERENCE: {"source": relative_to_store(inner["source"]), "path": inner["path"]}}
        if dtype == dtypes.REGION:
            raise UnsupportedDataError("hdmf-zarr 0.14 cannot store region references", where)
        return _nonfinite(inner) if dtype in dtypes.NUMERIC_NAMES else inner

    def dataset_attributes(self, storage: dtypes.StorageType) -> dict[str, Any]:
        if storage.kind == "reference":
            if storage.zarr_dtype == dtypes.REGION:
                raise UnsupportedDataError("hdmf-zarr 0.14 cannot store region references")
            return {DTYPE: REFERENCE_DTYPE}
        if storage.kind == "rows":
            nested = [f.name for f in storage.fields if f.nested]
            if nested:
                raise UnsupportedDataError(
                    f"the hdmf-zarr convention has no compound fields that are compounds "
                    f"({', '.join(nested)}); write this file in the hdmf_zarr3 format"
                )
            return {REFERENCE_FIELDS: [f.name for f in storage.fields if f.dtype in dtypes.REFERENCE_DTYPES]}
        if storage.kind == "struct":
            return {}
        if storage.kind == "string":
            return {DTYPE: "str"}
        return {DTYPE: str(storage.data_type)}

    def needs_values(self, storage: dtypes.StorageType) -> bool:
        # field widths come from the longest value; references become paths in memory
        return storage.kind in ("rows", "reference")

    def encode(self, data: Any, storage: dtypes.StorageType, ref: Any, where: str) -> np.ndarray:
        def path_of(obj: Any) -> Reference:
            target = ref(obj)
            if target.source != SAME_FILE:
                raise UnsupportedDataError(
                    "hdmf-zarr 0.14 cannot store references into other files "
                    f"(target {target.path!r} in {target.source!r})",
                    where,
                )
            return target

        if storage.kind == "reference":
            encoded = encode_values(data, storage, path_of, where)
            return _map(encoded, lambda text: _element_path(text, where))
        if storage.kind == "rows":
            return _struct_rows(data, storage, path_of, where)
        return encode_values(data, storage, ref, where)

    def finish_document(self, doc: dict[str, Any], storage: dtypes.StorageType, values: Any = None) -> dict[str, Any]:
        names = doc.get("dimension_names")
        if names and all(isinstance(n, str) for n in names):
            doc["attributes"][ARRAY_DIMENSIONS] = list(names)
        if storage.kind == "rows":
            if values is None:
                raise UnsupportedDataError("hdmf-zarr 0.14 compounds with strings or references need their values")
            fields = []
            for f in storage.fields:
                numpy_field = values.dtype.fields[f.name][0]
                data_type: Any = (
                    f.dtype
                    if f.dtype in dtypes.NUMERIC_NAMES
                    else {"name": "fixed_length_utf32", "configuration": {"length_bytes": numpy_field.itemsize}}
                )
                fields.append({"name": f.name, "data_type": data_type})
            doc["data_type"] = {"name": "struct", "configuration": {"fields": fields}}
            doc["fill_value"] = {f.name: (0 if f.dtype in dtypes.NUMERIC_NAMES else "") for f in storage.fields}
            doc["codecs"] = [
                {"name": "bytes", "configuration": {"endian": "little"}},
                {"name": "zstd", "configuration": {"level": 0, "checksum": False}},
            ]
        return doc

    def scalar_document(self, doc: dict[str, Any], storage: dtypes.StorageType, values: np.ndarray) -> dict[str, Any]:
        return doc  # hdmf-zarr writes a chunk for every scalar

    def spec_attributes(self) -> dict[str, Any]:
        return {}


def _element_path(text: str, where: str) -> str:
    if text == "":
        raise UnsupportedDataError("hdmf-zarr 0.14 cannot store a null reference", where)
    return json.loads(text)["path"]


def _map(values: np.ndarray, fn: Any) -> np.ndarray:
    out = np.empty(values.shape, dtype=object)
    flat = out.reshape(-1)
    for i, v in enumerate(values.reshape(-1)):
        flat[i] = fn(v)
    return out


def _struct_rows(data: Any, storage: dtypes.StorageType, ref: Any, where: str) -> np.ndarray:
    """Compound rows as a numpy structured array: numbers as they are, strings and reference paths
    as fixed-width unicode (at least MIN_FIXED_CHARS, as hdmf-zarr sizes them)."""
    rows = [json.loads(r) for r in encode_values(data, storage, ref, where).reshape(-1)]
    columns: list[list[Any]] = [[] for _ in storage.fields]
    for row in rows:
        for i, (field, value) in enumerate(zip(storage.fields, row)):
            if field.dtype in dtypes.REFERENCE_DTYPES:
                if value is None:
                    raise UnsupportedDataError("hdmf-zarr 0.14 cannot store a null reference", where)
                value = value["path"]
            columns[i].append(value)
    dtype = []
    for field, column in zip(storage.fields, columns):
        if field.dtype in dtypes.NUMERIC_NAMES:
            dtype.append((field.name, field.dtype))
        else:
            dtype.append((field.name, f"U{max([MIN_FIXED_CHARS] + [len(v) for v in column])}"))
    scalar = isinstance(data, (tuple, np.void)) and not (
        len(data) and isinstance(data[0], (tuple, list, np.void))  # type: ignore[arg-type]  # np.void has a len
    )
    out = np.array([tuple(r) for r in zip(*columns)] if rows else [], dtype=dtype)
    return out.reshape(()) if scalar and out.shape == (1,) else out


def _nonfinite(value: Any) -> Any:
    """Our ``"NaN"``/``"Infinity"`` tokens as the floats hdmf-zarr writes (bare JSON tokens)."""
    if isinstance(value, list):
        return [_nonfinite(v) for v in value]
    if value in ("NaN", "Infinity", "-Infinity"):
        return float(value.replace("Infinity", "inf"))
    return value
