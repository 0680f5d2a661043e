"""HDMF dtypes and how they are stored as Zarr v3 data types.

Every dataset carries the reserved attribute ``zarr_dtype`` naming its HDMF dtype exactly:

============================  ==========================  =====================================
HDMF dtype (spec names)       ``zarr_dtype``              Zarr v3 ``data_type``
============================  ==========================  =====================================
float, float32, double, ...   numpy name (``float32``)    the same numeric name
bool                          ``bool``                    ``bool``
text, utf, utf8, utf-8        ``text``                    ``string`` (variable-length UTF-8)
ascii, bytes                  ``ascii``                   ``string`` (ASCII is a subset of UTF-8)
isodatetime, datetime         ``isodatetime``             ``string`` (ISO 8601)
object reference              ``object``                  ``string``, one JSON reference record
compound, numeric fields      list of ``{name, dtype}``   ``struct`` with the same fields
compound, any other field     list of ``{name, dtype}``   ``string``, one JSON array per row
compound with compound field  nested field lists          ``string``, the field a nested JSON array
============================  ==========================  =====================================

Strings and records use the variable-length ``string`` type, so nothing is padded to a fixed width;
a compound is stored as ``struct`` only when every field is fixed-size (lossless and compact).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np

from ...errors import UnsupportedDataError

TEXT = "text"
ASCII = "ascii"
ISODATETIME = "isodatetime"
OBJECT = "object"
REGION = "region"
STRING_DTYPES = frozenset({TEXT, ASCII, ISODATETIME})
REFERENCE_DTYPES = frozenset({OBJECT, REGION})

NUMERIC_NAMES = (
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
)
#: Zarr v3's core data types of a fixed size: the numeric names and the two complex types.
FIXED_SIZE_TYPES = frozenset(NUMERIC_NAMES) | {"complex64", "complex128"}

_ALIASES = {
    "float": "float32",
    "double": "float64",
    "long": "int64",
    "int": "int32",
    "short": "int16",
    "uint": "uint32",
    "utf": TEXT,
    "utf8": TEXT,
    "utf-8": TEXT,
    "text": TEXT,
    "str": TEXT,
    "ascii": ASCII,
    "bytes": ASCII,
    "isodatetime": ISODATETIME,
    "datetime": ISODATETIME,
    "object": OBJECT,
    "ref": OBJECT,
    "reference": OBJECT,
    "region": REGION,
}

Kind = Literal["numeric", "string", "reference", "struct", "rows"]


@dataclass(frozen=True)
class Field:
    """One field of a compound dtype: its name and canonical HDMF dtype, or the fields of a compound field."""

    name: str
    dtype: str | tuple[Field, ...]

    @property
    def nested(self) -> bool:
        """True for a field that is itself a compound (its ``dtype`` is a tuple of fields)."""
        return isinstance(self.dtype, tuple)


def fields_json(fields: Sequence[Field]) -> list[dict[str, Any]]:
    """The ``zarr_dtype`` of a compound: ``[{"name", "dtype"}, ...]``, a compound field's dtype a nested list."""
    return [{"name": f.name, "dtype": fields_json(f.dtype) if isinstance(f.dtype, tuple) else f.dtype} for f in fields]


def fields_numpy(fields: Sequence[Field]) -> list[tuple[str, Any]]:
    """The structured numpy dtype rows of a compound read back: numbers as themselves, compound fields nested,
    text and references as ``object``."""
    return [
        (
            f.name,
            fields_numpy(f.dtype) if isinstance(f.dtype, tuple) else f.dtype if f.dtype in NUMERIC_NAMES else object,
        )
        for f in fields
    ]


def put_field(target: Any, index: tuple[int, ...], value: Any, field: Field) -> None:
    """Store ``value`` in ``target[index]``, the column of ``field`` in a structured array: a compound
    field subfield by subfield (a tuple assignment would let numpy unpack builders, which are dicts)."""
    if isinstance(field.dtype, tuple):  # a compound field
        for sub, item in zip(field.dtype, value):
            put_field(target[sub.name], index, item, sub)
    else:
        target[index] = value


@dataclass(frozen=True)
class StorageType:
    """How one dataset is laid out in Zarr: the pair of ``zarr_dtype`` and Zarr v3 ``data_type``."""

    kind: Kind
    zarr_dtype: str | list[dict[str, str]]
    data_type: str | dict[str, Any]
    fields: tuple[Field, ...] = ()

    @property
    def numpy_dtype(self) -> np.dtype:
        """The in-memory dtype of the stored (encoded) values."""
        if self.kind == "numeric":
            return np.dtype(cast(str, self.data_type))  # a numeric data type is a name ("float32")
        if self.kind == "struct":
            return np.dtype([(f.name, f.dtype) for f in self.fields])
        return np.dtype(object)

    @property
    def row_dtype(self) -> np.dtype:
        """The structured dtype compound rows read back as (as h5py gives them to HDMF): numeric fields keep
        their type, text and reference fields are objects (``str``, or the resolved target)."""
        return np.dtype(fields_numpy(self.fields))

    @property
    def fill_value(self) -> Any:
        if self.kind == "numeric":
            return False if self.data_type == "bool" else 0
        if self.kind == "struct":
            return {f.name: (False if f.dtype == "bool" else 0) for f in self.fields}
        return ""


def canonical(dtype: Any) -> str | None:
    """Canonical HDMF dtype name for a spec name, numpy dtype or scalar type; ``None`` if unknown.

    ``numeric`` and ``None`` mean "take it from the data" and also give ``None``.
    """
    if dtype is None:
        return None
    if isinstance(dtype, str):
        if dtype == "numeric":
            return None
        if dtype in _ALIASES:
            return _ALIASES[dtype]
        if dtype in NUMERIC_NAMES:
            return dtype
        try:
            return canonical(np.dtype(dtype))
        except Exception:  # noqa: BLE001 - numpy's parser raises TypeError, ValueError, SyntaxError... on hostile names
            return None
    reftype = _reftype(dtype)
    if reftype is not None:
        return reftype
    if isinstance(dtype, type) and dtype in (str,):
        return TEXT
    if isinstance(dtype, type) and dtype is bytes:
        return ASCII
    try:
        npd = np.dtype(dtype)
    except Exception:  # noqa: BLE001 - as above
        return None
    if npd.kind in "biuf" and npd.name in NUMERIC_NAMES:
        return npd.name
    if npd.kind == "U" or npd.kind == "T":
        return TEXT
    if npd.kind == "S":
        return ASCII
    if npd.kind == "O":
        vlen = (npd.metadata or {}).get("vlen")
        if vlen is str:
            return TEXT
        if vlen is bytes:
            return ASCII
        if (npd.metadata or {}).get("ref") is not None:
            return OBJECT
    return None


def _reftype(dtype: Any) -> str | None:
    """``object``/``region`` for HDMF RefSpec-like values, ``None`` otherwise."""
    reftype = getattr(dtype, "reftype", None)
    if reftype is None and isinstance(dtype, dict):
        reftype = dtype.get("reftype")
    if reftype is not None:
        return REGION if reftype == REGION else OBJECT
    inner = getattr(dtype, "dtype", None)  # a DtypeSpec wrapping a RefSpec
    if inner is not None and not isinstance(dtype, np.dtype) and getattr(inner, "reftype", None):
        return REGION if inner.reftype == REGION else OBJECT
    return None


def is_compound(dtype: Any) -> bool:
    """True for HDMF compound dtypes: a list of field specs or a structured numpy dtype."""
    if isinstance(dtype, np.dtype):
        return dtype.names is not None
    return isinstance(dtype, (list, tuple)) and len(dtype) > 0 and not isinstance(dtype[0], (int, str))


def compound_fields(dtype: Any, data: Any = None) -> tuple[Field, ...]:
    """Normalize an HDMF compound dtype (DtypeSpecs, dicts or a structured dtype) to fields; a field whose
    dtype is itself a compound (as HDF5IO writes it) gets the fields of that compound."""
    if isinstance(dtype, np.dtype):
        names = cast("tuple[str, ...]", dtype.names)  # a compound's (structured) dtype
        return tuple(Field(n, _field_dtype(dtype[n], data, n)) for n in names)
    fields = []
    for spec in dtype:
        if isinstance(spec, dict):
            name, sub = spec["name"], spec["dtype"]
        else:
            name, sub = spec.name, spec.dtype
        fields.append(Field(str(name), _field_dtype(sub, data, name)))
    return tuple(fields)


def _field_dtype(sub: Any, data: Any, name: str) -> str | tuple[Field, ...]:
    if is_compound(sub):
        return compound_fields(sub, None)
    ref = _reftype(sub)
    if ref is not None:
        return ref
    if isinstance(sub, np.dtype) and sub.kind == "O" and not sub.metadata:
        return TEXT  # plain object fields in a structured array hold strings
    found = canonical(sub)
    if found is None:
        raise UnsupportedDataError(f"compound field {name!r} has unsupported dtype {sub!r}")
    return found


def for_hdmf_dtype(dtype: Any, data: Any = None) -> StorageType:
    """Storage type for a dataset with HDMF dtype ``dtype`` (``None``: infer from ``data``)."""
    if dtype is not None and is_compound(dtype):
        return for_compound(compound_fields(dtype, data))
    name = canonical(dtype)
    if name is None:
        name_or_fields = infer(data)
        if isinstance(name_or_fields, tuple):
            return for_compound(name_or_fields)
        name = name_or_fields
    return for_scalar_dtype(name)


def for_scalar_dtype(name: str) -> StorageType:
    """Storage type for a non-compound canonical HDMF dtype name."""
    if name in NUMERIC_NAMES:
        return StorageType("numeric", name, name)
    if name in STRING_DTYPES:
        return StorageType("string", name, "string")
    if name in REFERENCE_DTYPES:
        return StorageType("reference", name, "string")
    raise UnsupportedDataError(f"unsupported dtype {name!r}")


def for_compound(fields: Sequence[Field]) -> StorageType:
    """Storage type for a compound: ``struct`` when all fields are numeric, JSON rows otherwise."""
    fields = tuple(fields)
    zarr_dtype = fields_json(fields)
    if all(f.dtype in NUMERIC_NAMES for f in fields):  # a compound field makes it JSON rows
        data_type = {
            "name": "struct",
            "configuration": {"fields": [{"name": f.name, "data_type": f.dtype} for f in fields]},
        }
        return StorageType("struct", zarr_dtype, data_type, fields)
    return StorageType("rows", zarr_dtype, "string", fields)


def _builder_fields(fields: Sequence[Field]) -> list[dict[str, Any]]:
    return [
        {
            "name": f.name,
            "dtype": _builder_fields(f.dtype) if isinstance(f.dtype, tuple) else f.dtype if f.dtype != TEXT else "utf8",
        }
        for f in fields
    ]


def builder_dtype(storage: StorageType) -> Any:
    """The ``DatasetBuilder.dtype`` a reader reports for a stored dataset (as HDF5IO does)."""
    if storage.kind == "numeric":
        return np.dtype(cast(str, storage.data_type))  # a numeric data type is a name ("float32")
    if storage.kind in ("struct", "rows"):
        return _builder_fields(storage.fields)
    if storage.zarr_dtype == TEXT:
        return "utf8"
    return storage.zarr_dtype


def infer(data: Any) -> str | tuple[Field, ...]:
    """Canonical dtype (or compound fields) of in-memory data with no declared dtype."""
    from hdmf.build import ReferenceBuilder  # local: keep the format importable on its own
    from hdmf.container import Container

    dtype = getattr(data, "dtype", None)
    if isinstance(dtype, np.dtype):
        if dtype.names is not None:
            return compound_fields(dtype, data)
        if dtype.kind != "O":
            found = canonical(dtype)
            if found is None:
                raise UnsupportedDataError(f"unsupported numpy dtype {dtype}")
            return found
    if isinstance(dtype, str):
        found = canonical(dtype)
        if found is not None:
            return found
    sample = _first_element(data)
    if sample is _EMPTY:
        raise UnsupportedDataError("cannot determine the dtype of empty data without a declared dtype")
    if isinstance(sample, (ReferenceBuilder, Container)) or sample is None:
        return OBJECT
    if isinstance(sample, (bool, np.bool_)):
        return "bool"
    if isinstance(sample, str):
        return TEXT
    if isinstance(sample, bytes):
        return ASCII
    if isinstance(sample, (_dt.datetime, _dt.date)):
        return ISODATETIME
    if isinstance(sample, int):
        return "int64"
    if isinstance(sample, float):
        return "float64"
    if isinstance(sample, np.generic):
        found = canonical(sample.dtype)
        if found is not None:
            return found
    raise UnsupportedDataError(f"cannot store values of type {type(sample).__name__}")


_EMPTY = object()


def _first_element(data: Any) -> Any:
    """The first scalar of (possibly nested) data, or ``_EMPTY``."""
    while True:
        if isinstance(data, (str, bytes)) or not hasattr(data, "__len__"):
            return data
        if isinstance(data, np.ndarray) and data.ndim == 0:
            return data[()]
        if len(data) == 0:
            return _EMPTY
        data = data[0]
