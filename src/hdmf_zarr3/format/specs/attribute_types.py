"""Restore the numpy types of attribute numbers from the spec, for files that did not record them.

hdmf-zarr (0.13 and 0.14) stores attribute values as plain JSON, so ``np.uint32(7)`` reads back as
the Python ``int`` 7, and containers whose spec declares ``uint32`` refuse it (neither version reads
back its own files with such an extension). The spec of each typed builder says what each attribute
is; plain numbers (and lists of them) are converted to that dtype, as HDF5IO would give them.
Attributes that already carry a type, and specs that say ``numeric`` or nothing, are left alone.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..vocabulary import dtypes


def restore(root: Any, catalog: Any) -> None:
    """Convert, in place, the plain-number attributes of a builder tree to their spec dtypes."""
    stack: list[tuple[Any, Any]] = [(root, None)]
    while stack:
        builder, spec = stack.pop()
        spec = _own_spec(builder, catalog) or spec
        if spec is not None:
            for name, value in list(builder.attributes.items()):
                attr_spec = spec.get_attribute(name) if hasattr(spec, "get_attribute") else None
                if attr_spec is not None:
                    converted = _convert(value, attr_spec.dtype)
                    if converted is not value:
                        builder.attributes[name] = converted
        for name, child in list(getattr(builder, "groups", {}).items()):
            stack.append((child, _child_spec(spec, name, "get_group")))
        for name, child in list(getattr(builder, "datasets", {}).items()):
            stack.append((child, _child_spec(spec, name, "get_dataset")))


def _own_spec(builder: Any, catalog: Any) -> Any:
    attrs = builder.attributes
    namespace = attrs.get("namespace")
    data_type = attrs.get("neurodata_type", attrs.get("data_type"))
    if not isinstance(namespace, str) or not isinstance(data_type, str):
        return None
    try:
        return catalog.get_spec(namespace, data_type)
    except Exception:  # a type or namespace the catalog does not know: nothing to restore
        return None


def _child_spec(spec: Any, name: str, getter: str) -> Any:
    if spec is None or not hasattr(spec, getter):
        return None
    try:
        return getattr(spec, getter)(name)
    except Exception:
        return None


def _convert(value: Any, spec_dtype: Any) -> Any:
    name = dtypes.canonical(spec_dtype) if isinstance(spec_dtype, str) else None
    if name is None or name not in dtypes.NUMERIC_NAMES:
        return value
    if _plain_number(value, name):
        return np.dtype(name).type(value)
    if isinstance(value, list) and value and all(_plain_number(v, name) for v in _flat(value)):
        try:
            return np.asarray(value, dtype=name)
        except (TypeError, ValueError, OverflowError):
            return value
    return value


def _plain_number(value: Any, name: str) -> bool:
    if name == "bool":
        return type(value) is bool
    if type(value) is bool:
        return False
    if name.startswith("float"):
        return type(value) in (int, float)
    if type(value) is not int:
        return False
    info = np.iinfo(name)
    return info.min <= value <= info.max


def _flat(value: list) -> list:
    out: list = []
    for v in value:
        out.extend(_flat(v) if isinstance(v, list) else [v])
    return out
