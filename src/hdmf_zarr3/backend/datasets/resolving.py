"""Lazy datasets whose elements hold references: object references and compound rows with reference
fields, resolved to builders (or containers) only when they are read, and :func:`wrap`, which picks the
lazy dataset class for a stored array."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from hdmf.query import BuilderResolver, ContainerResolver

from ...format.data import references as stored_references
from ...format.dialects import ArrayLayout
from ...format.vocabulary import dtypes
from .lazy import RegionSelection, ZarrDataset

if TYPE_CHECKING:
    from ..contexts import DatasetContext


class ResolvingDataset(ZarrDataset):
    """Shared by datasets whose elements hold references (resolved to builders or containers)."""

    _to_container = False

    def _resolve(self, ref: stored_references.Reference | None) -> Any:
        if ref is None:
            return None
        builder = self._context.resolve_reference(ref, self._path)
        target = self._context.construct(builder) if self._to_container else builder
        return RegionSelection(target, ref.region) if ref.region is not None else target

    def invert(self) -> ResolvingDataset:
        cls = self.get_inverse_class()
        self.store_appended()  # the inverse reads the same stored array
        return cls(self._context, self._path, self._doc, self.layout, cache=self._cache)

    def resolve(self, manager: Any = None) -> Any:
        return self[:]


class _ReferenceDataset(ResolvingDataset):
    @property
    def dtype(self) -> str:
        return str(self.storage.zarr_dtype)

    def _convert(self, raw: Any) -> Any:
        return self._elements(raw, {})

    def _elements(self, raw: Any, seen: dict[Any, Any]) -> Any:
        """``raw`` resolved, element by element; an element stored as the same text as one before it is
        that element's target again (a table column that points at a few groups is decoded a few times)."""
        if isinstance(raw, np.ndarray):
            return [self._elements(x, seen) for x in raw]
        key = raw if isinstance(raw, (str, bytes)) else None
        if key is not None and key in seen:
            return seen[key]
        ref = self._context.dialect().reference(raw, self.layout, self._path)
        target = self._resolve(ref)
        if key is not None and (ref is None or ref.region is None):  # a region's selection: one per element
            seen[key] = target
        return target


class BuilderReferenceDataset(_ReferenceDataset, BuilderResolver):
    """A dataset of object references whose elements read as Builders."""

    @classmethod
    def get_inverse_class(cls) -> type:
        return ContainerReferenceDataset


class ContainerReferenceDataset(_ReferenceDataset, ContainerResolver):
    """A dataset of object references whose elements read as Containers."""

    _to_container = True

    @classmethod
    def get_inverse_class(cls) -> type:
        return BuilderReferenceDataset


class _CompoundDataset(ResolvingDataset):
    """A compound dataset stored as JSON rows. Rows read as h5py's do under HDMF's HDF5IO: one row is an
    ``np.void``, several a structured array; text fields hold ``str`` and reference fields the resolved
    builder (or container)."""

    @property
    def dtype(self) -> list[Any]:
        return [
            dtypes.builder_dtype(dtypes.for_compound(f.dtype))
            if isinstance(f.dtype, tuple)
            else f.dtype
            if f.dtype != dtypes.TEXT
            else "utf8"
            for f in self.storage.fields
        ]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """Rows as a structured array (strings and references in object fields)."""
        out = self[:] if self.ndim else np.asarray(self[()])
        return out.astype(dtype) if dtype is not None else out

    def _convert(self, raw: Any) -> Any:
        if isinstance(raw, np.ndarray):
            out = np.empty(raw.shape, dtype=self.storage.row_dtype)
            for index, row in np.ndenumerate(raw):
                self._fill(out, index, row)
            return out
        out = np.empty((), dtype=self.storage.row_dtype)
        self._fill(out, (), raw)
        return out[()]

    def _fill(self, out: np.ndarray, index: tuple[int, ...], raw: Any) -> None:
        """Decode one stored row into ``out[index]``, field by field (a tuple assignment would let numpy
        unpack builders, which are dicts, into object fields)."""
        values = self._context.dialect().row(raw, self.layout, self._path)
        for field, value in zip(self.storage.fields, values):
            dtypes.put_field(out[field.name], index, self._resolve_field(value, field), field)

    def _resolve_field(self, value: Any, field: dtypes.Field) -> Any:
        """A field's value with its references resolved (in the fields of a compound field too)."""
        if isinstance(field.dtype, tuple):  # a compound field
            return tuple(self._resolve_field(v, f) for f, v in zip(field.dtype, value))
        if isinstance(value, stored_references.Reference) or (value is None and field.dtype in dtypes.REFERENCE_DTYPES):
            return self._resolve(value)
        return value


class BuilderCompoundDataset(_CompoundDataset, BuilderResolver):
    @classmethod
    def get_inverse_class(cls) -> type:
        return ContainerCompoundDataset


class ContainerCompoundDataset(_CompoundDataset, ContainerResolver):
    _to_container = True

    @classmethod
    def get_inverse_class(cls) -> type:
        return BuilderCompoundDataset


def wrap(context: DatasetContext, path: str, doc: dict[str, Any], layout: ArrayLayout) -> ZarrDataset:
    """The lazy dataset class for a stored array of the given layout."""
    if layout.storage.kind == "reference":
        return BuilderReferenceDataset(context, path, doc, layout)
    if layout.storage.kind == "rows":
        return BuilderCompoundDataset(context, path, doc, layout)
    return ZarrDataset(context, path, doc, layout)
