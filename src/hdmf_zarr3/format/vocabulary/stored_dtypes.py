"""The storage type of a stored array, read back from its document and checked.

The reading mirror of :func:`.dtypes.for_hdmf_dtype`: an array's ``zarr_dtype`` attribute and Zarr
``data_type`` become the same :class:`.dtypes.StorageType` a writer chose, or a
:class:`~hdmf_zarr3.errors.CorruptStoreError` naming the node when the two disagree, a name is unknown or
a compound's fields are malformed or nested without end.
"""

from __future__ import annotations

from typing import Any

from ...errors import CorruptStoreError
from .dtypes import Field, StorageType, canonical, for_compound, for_scalar_dtype


def from_attribute(zarr_dtype: Any, data_type: Any, path: str) -> StorageType:
    """Rebuild the storage type of a stored array from its ``zarr_dtype`` and ``data_type``."""
    if isinstance(zarr_dtype, list):
        fields = _stored_fields(zarr_dtype, path)
        storage = for_compound(fields)
        if data_type != storage.data_type:
            raise CorruptStoreError(f"compound zarr_dtype {zarr_dtype!r} does not match data_type {data_type!r}", path)
        return storage
    if not isinstance(zarr_dtype, str):
        raise CorruptStoreError(f"zarr_dtype must be a string or a list of fields, got {zarr_dtype!r}", path)
    name = canonical(zarr_dtype)
    if name is None:
        raise CorruptStoreError(f"unknown zarr_dtype {zarr_dtype!r}", path)
    storage = for_scalar_dtype(name)
    if storage.kind == "numeric" and data_type != storage.data_type:
        raise CorruptStoreError(f"zarr_dtype {zarr_dtype!r} does not match data_type {data_type!r}", path)
    if storage.kind in ("string", "reference") and data_type != "string":
        raise CorruptStoreError(f"zarr_dtype {zarr_dtype!r} needs data_type 'string', got {data_type!r}", path)
    return storage


#: How deep compound fields may nest in a stored ``zarr_dtype`` (a hostile file cannot recurse without end).
MAX_NESTING = 8


def _stored_fields(zarr_dtype: list, path: str, depth: int = 0) -> tuple[Field, ...]:
    """The fields of a stored compound ``zarr_dtype``; a field whose dtype is a list is a compound field."""
    if depth > MAX_NESTING:
        raise CorruptStoreError(f"compound fields nested deeper than {MAX_NESTING} levels", path)
    fields = []
    try:
        for f in zarr_dtype:
            sub = f["dtype"]
            if isinstance(sub, list):
                if not sub:
                    raise CorruptStoreError(f"compound field {f['name']!r} has no fields", path)
                fields.append(Field(str(f["name"]), _stored_fields(sub, path, depth + 1)))
            else:
                fields.append(Field(str(f["name"]), canonical(sub) or ""))
    except (TypeError, KeyError) as exc:
        raise CorruptStoreError(f"malformed compound zarr_dtype {zarr_dtype!r}", path) from exc
    if any(not f.dtype for f in fields):
        raise CorruptStoreError(f"unknown field dtype in zarr_dtype {zarr_dtype!r}", path)
    return tuple(fields)
