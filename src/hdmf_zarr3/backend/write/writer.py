"""Write a builder tree: one walk collects every node, then the store operations run in batches.

The walk turns each GroupBuilder into a group document and each DatasetBuilder into an array
document plus a job that writes its chunks (a :class:`~.write_plan.WritePlan`). Nothing touches the
store during the walk; :func:`~.write_plan.store_plan` then stores the plan in batches.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
from hdmf.build import DatasetBuilder, GroupBuilder, LinkBuilder, ReferenceBuilder
from hdmf.data_utils import AbstractDataChunkIterator, DataIO

from ...errors import ReservedNameError, UnsupportedDataError
from ...format.data import Link, Reference, is_lazy_source, source_shape
from ...format.documents import zarr_json as docs
from ...format.layout import Relayout, ZarrLayout, chunkless
from ...format.layout import policy as layout_policy
from ...format.vocabulary import dtypes
from ...format.vocabulary import names as node_names
from ...h5py_adapters import regions
from ...integrations import dask_arrays
from ...storage.stores import WorkPools, locations
from ..datasets import ZarrDataset
from ..settings import bridge as dataio_bridge
from ..settings import hdmf_zarr_inputs, layout_choice
from . import hdf5_in_place
from .hdf5_in_place import VirtualOptions
from .parallel import ParallelOptions
from .plan import LARGE_SOURCE_BYTES, WritePlan, copy_job, plan_fill, store_plan
from .reference_targets import ReferenceEncoder
from .region_sources import RegionSources
from .streaming import plan_stream

if TYPE_CHECKING:
    from ..contexts import WriteContext


class BuilderWriter:
    """Writes one builder tree into the store of a file (``context``: what the writer needs of its io)."""

    def __init__(
        self,
        context: WriteContext,
        root: GroupBuilder,
        pools: WorkPools,
        link_data: bool = True,
        export_source: str | None = None,
        dataio: dict[int, DataIO] | None = None,
        progress: bool = False,
        relayout: Relayout | None = None,
        parallel: ParallelOptions | None = None,
        virtual: VirtualOptions | None = None,
    ):
        self.context = context
        self.pools = pools  # the io's: it shuts them down when it is closed
        self.root = root
        self.link_data = link_data
        self.export_source = locations.absolute(export_source) if export_source else None
        self.plan = WritePlan()
        self.progress = progress
        self.relayout = relayout
        self.parallel = parallel or ParallelOptions()
        self.virtual = virtual  # convert(virtual=True): large HDF5 datasets read in place
        self._dataio = dataio or {}  # DataIO settings HDMF dropped from reference datasets
        self._extra_links: dict[str, list[Link]] = {}
        self.reference_to = ReferenceEncoder(root, context.manager, context.handle.directory, export_source)
        self.regions = RegionSources(context, self.reference_to, self.export_source)
        self.convention = context.convention
        self.separator = context.chunk_key_separator

    # --- walk -------------------------------------------------------------------------------
    def write(self) -> WritePlan:
        if self.relayout:
            layout_choice.check_relayout_paths(self.relayout, self.root)
        self._group(self.root, "/")
        self._flush()
        return self.plan

    def _group(self, builder: GroupBuilder, path: str) -> None:
        for name in list(builder.groups) + list(builder.datasets) + list(builder.links):
            node_names.check_name(name, path)
        for sub in builder.groups.values():
            self._group(sub, node_names.join(path, sub.name))
        for sub in builder.datasets.values():
            self._dataset(sub, node_names.join(path, sub.name), path)
        attrs = self._attributes(builder, path)
        links = [self._link(lb, path) for lb in builder.links.values()] + self._extra_links.pop(path, [])
        if links:
            key, value = self.convention.link_attribute(links)
            attrs[key] = value
        if path == "/":
            previous = self.context.documents().get("/", {}).get("attributes", {})
            if node_names.SPECLOC_ATTR in previous:
                attrs[node_names.SPECLOC_ATTR] = previous[node_names.SPECLOC_ATTR]
            attrs = self.convention.root_attributes(attrs)
        self.plan.groups[path] = docs.group_document(attrs)
        for lb in builder.links.values():
            self.context.mark_written(lb)
        self.context.mark_written(builder)

    def _attributes(self, builder: Any, path: str) -> dict[str, Any]:
        out = {}
        for key, value in builder.attributes.items():
            if key in node_names.RESERVED_ATTRS:
                raise ReservedNameError(f"attribute name {key!r} is reserved by the storage format", path)
            if value is None:
                continue
            if isinstance(value, DataIO):
                value = value.data
            region = self.regions.attribute(builder, path, key, value)
            if region is not None and not self.convention.region_attributes():
                raise UnsupportedDataError(
                    f"the {self.convention.name} convention cannot store region references", f"{path}@{key}"
                )
            out[key] = (
                region if region is not None else self.convention.attribute(value, self.reference_to, f"{path}@{key}")
            )
        return out

    def _link(self, builder: LinkBuilder, parent: str) -> Link:
        return Link(builder.name, self.reference_to(builder, node_names.join(parent, builder.name)))

    def _dataset(self, builder: DatasetBuilder, path: str, parent: str) -> None:
        if self.context.is_written(builder):
            return
        data, options = builder.data, dataio_bridge.settings(self._dataio.get(id(builder)))
        link_data = self.link_data
        if isinstance(data, DataIO):
            options = dataio_bridge.settings(data)
            link_data = getattr(data, "link_data", link_data)
            data = data.data
        link = self._link_to(builder, data, path, link_data)
        if link is not None:
            self._extra_links.setdefault(parent, []).append(link)
        else:
            self._plan_dataset(builder, data, path, options)
        self.context.mark_written(builder)

    def _link_to(self, builder: DatasetBuilder, data: Any, path: str, link_data: bool) -> Link | None:
        """The link a dataset becomes instead of a copy (a zarr array or a dataset of another file), if it does."""
        if link_data and isinstance(builder.data, DataIO) and hdmf_zarr_inputs.is_zarr_array(data):
            # hdmf-zarr's ZarrDataIO(<zarr.Array>, link_data=True): a link to that array, in its own file
            return Link(builder.name, self._reference_to_array(data))
        if isinstance(data, ZarrDataset) and self._link_instead(data, path, link_data):
            return Link(builder.name, self._reference_from(data))
        return None

    def _plan_dataset(self, builder: DatasetBuilder, data: Any, path: str, options: Any) -> None:
        """Add the array of a dataset to the plan: its document and what stores its values."""
        raw_regions = None if isinstance(data, ZarrDataset) else regions.raw_region_dataset(data)
        storage = (
            dtypes.for_scalar_dtype(dtypes.REGION) if raw_regions is not None else self._storage(builder, data, path)
        )
        copies_regions = isinstance(data, ZarrDataset) and data.storage.zarr_dtype == dtypes.REGION
        if (
            raw_regions is None
            and not copies_regions
            and dtypes.REGION in (storage.zarr_dtype, *(f.dtype for f in storage.fields))
        ):
            raise UnsupportedDataError(
                "region references are written only from HDF5 region references "
                "(a reference builder carries no selection)",
                path,
            )
        attrs = self._attributes(builder, path)
        if (raw_regions is not None or copies_regions) and not self.convention.region_attributes():
            raise UnsupportedDataError(f"the {self.convention.name} convention cannot store region references", path)
        attrs.update(self.convention.dataset_attributes(storage))
        if self.convention.needs_values(storage) and (
            is_lazy_source(data) or isinstance(data, AbstractDataChunkIterator)
        ):
            data = _materialize(data)
        if raw_regions is None and isinstance(data, ZarrDataset) and data.storage.zarr_dtype == dtypes.REGION:
            doc = docs.array_document(
                data.shape, storage, attrs, chunks=data.chunks, separator=self._separator(path, len(data.shape))
            )
            self.plan.arrays[path] = doc
            self.plan.chunk_jobs.append(self._copy_job(path, doc, _RawElements(data), storage, raw=True))
        elif raw_regions is not None:
            values = regions.encode_dataset(raw_regions, self.regions.locate)
            doc = docs.array_document(values.shape, storage, attrs, separator=self._separator(path, len(values.shape)))
            self.plan.arrays[path] = doc = self.convention.chunk_keys(doc, self.separator is not None)
            if values.size:
                self._fill(path, doc, values)
        else:
            self._plan_values(builder, data, path, storage, attrs, options)

    def _plan_values(
        self,
        builder: DatasetBuilder,
        data: Any,
        path: str,
        storage: dtypes.StorageType,
        attrs: dict[str, Any],
        options: Any,
    ) -> None:
        """Add to the plan an array of values: Dask's, an iterator's, a lazy source's or held in memory."""
        if dask_arrays.is_dask(data) and storage.kind == "numeric":
            shape = tuple(int(s) for s in data.shape)
            layout = layout_choice.choose(path, storage, shape, options, relayout=self.relayout)
            doc = self._plan_array(builder, path, shape, storage, attrs, layout)
            self.plan.dask_writes.append((path, data, doc, storage))
        elif isinstance(data, AbstractDataChunkIterator):
            # written after the other nodes, laid out (and its settings checked) now, once
            names = _dimension_names(builder, None)
            self.plan.streams.append(
                (path, (data, plan_stream(path, data, storage, attrs, options, names, self.separator)))
            )
        elif is_lazy_source(data) and self.virtual is not None and (found := self.virtual.plan(data, path, storage)):
            ndim = len(found.shape)
            doc = hdf5_in_place.virtual_document(
                found, storage, attrs, _dimension_names(builder, ndim), self._separator(path, ndim), self.virtual.source
            )
            self.plan.arrays[path] = self.convention.finish_document(doc, storage, None)
            store = self.context.handle.store
            self.plan.virtual_writes.append(
                partial(hdf5_in_place.store_virtual, store, path, found, data, self.virtual.source)
            )
        elif is_lazy_source(data):
            shape = source_shape(data)
            layout = layout_choice.choose(path, storage, shape, options, source=data, relayout=self.relayout)
            doc = self._plan_array(builder, path, shape, storage, attrs, layout)
            large = math.prod(shape) * docs.itemsize(storage) > LARGE_SOURCE_BYTES
            (self.plan.large_jobs if large else self.plan.chunk_jobs).append(self._copy_job(path, doc, data, storage))
        else:
            values = self.convention.encode(data, storage, self.reference_to, path)
            layout = layout_choice.choose(path, storage, values.shape, options, relayout=self.relayout)
            doc = self._plan_array(builder, path, values.shape, storage, attrs, layout, values)
            if values.ndim == 0 and layout.fill_value is None:  # (a fill value the user chose stays theirs)
                self.plan.arrays[path] = doc = self.convention.scalar_document(doc, storage, values)
            if values.size and not chunkless.is_chunkless(doc):
                self._fill(path, doc, values)

    def _plan_array(
        self,
        builder: DatasetBuilder,
        path: str,
        shape: tuple[int, ...],
        storage: dtypes.StorageType,
        attrs: dict[str, Any],
        layout: ZarrLayout,
        values: np.ndarray | None = None,
    ) -> dict[str, Any]:
        """The document of the array at ``path`` laid out as ``layout``, finished by the convention (``values``:
        the whole content, known only for values held in memory) and added to the plan."""
        doc = docs.array_document(
            shape,
            storage,
            attrs,
            chunks=layout.chunks,
            codecs=layout.codecs,
            dimension_names=layout.dimension_names or _dimension_names(builder, len(shape)),
            fill_value=layout.fill_value,
            separator=self._separator(path, len(shape)),
        )
        doc = self.convention.chunk_keys(doc, self.separator is not None)
        self.plan.arrays[path] = doc = self.convention.finish_document(doc, storage, values)
        return doc

    def _separator(self, path: str, ndim: int) -> str:
        """The chunk-key separator of the ``ndim``-d array at ``path``: the io's, else the policy's."""
        return layout_policy.chunk_key_separator(path, ndim, self.separator)

    def _storage(self, builder: DatasetBuilder, data: Any, path: str) -> dtypes.StorageType:
        dtype = builder.dtype
        if dtype is None and isinstance(data, (ReferenceBuilder,)):
            dtype = dtypes.OBJECT
        try:
            if dtype is None and hasattr(data, "storage"):  # our own lazy datasets know their type
                return data.storage
            return dtypes.for_hdmf_dtype(dtype, data)
        except UnsupportedDataError as exc:
            if exc.path is not None:
                raise
            raise UnsupportedDataError(str(exc), path) from exc

    def _link_instead(self, data: Any, path: str, link_data: bool) -> bool:
        """Whether a dataset read from a Zarr file becomes a link rather than a copy."""
        if not link_data:
            return False
        src = data.io.source
        if self.export_source is not None:
            return src != self.export_source or data.path != path
        return not (src == self.context.source and data.path == path)

    def _reference_from(self, data: Any) -> Reference:
        same = data.io.source == self.context.source or data.io.source == self.export_source
        source = node_names.SAME_FILE if same else self.reference_to.relative(data.io.source)
        oid = data.attrs.get("object_id") if hasattr(data, "attrs") else None
        return Reference(source, data.path, oid, data.io.root_object_id)

    def _reference_to_array(self, array: Any) -> Reference:
        location, path = hdmf_zarr_inputs.zarr_array_location(array)
        if locations.same(location, self.context.source) or locations.same(location, self.export_source):
            return Reference(node_names.SAME_FILE, path, array.attrs.get("object_id"), self.reference_to.root_oid)
        return Reference(
            self.reference_to.relative(location),
            path,
            array.attrs.get("object_id"),
            hdmf_zarr_inputs.root_object_id(array),
        )

    # --- store operations ------------------------------------------------------------------------
    def _fill(self, path: str, doc: dict[str, Any], values: np.ndarray) -> None:
        plan_fill(self.plan, self.context.handle.store, path, doc, values, self.pools)

    def _copy_job(
        self, path: str, doc: dict[str, Any], source: Any, storage: dtypes.StorageType, raw: bool = False
    ) -> Callable[[], Awaitable[None]]:
        def encode(block: Any) -> np.ndarray:
            if raw:  # already in stored form (region records copied between Zarr files)
                return np.asarray(block, dtype=object)
            return self.convention.encode(block, storage, self.reference_to, path)

        return copy_job(self.context.handle.store, path, doc, source, encode, self.pools, self.progress, raw)

    def _flush(self) -> None:
        self.regions.close()
        store_plan(
            self.plan, self.context.handle, self.pools, self.parallel, self.progress, self.context.names_dimensions
        )


def _materialize(data: Any) -> Any:
    """All values of a lazy source or an iterator, in memory (for conventions that size fields by them)."""
    if isinstance(data, AbstractDataChunkIterator):
        rows: list = []
        for chunk in data:
            rows.extend(list(chunk.data))
        return rows
    return data[()] if not data.shape else data[:]


def _dimension_names(builder: DatasetBuilder, ndim: int | None) -> list[str | None] | None:
    """The spec's dimension labels (``dims``) as Zarr v3 ``dimension_names``, when they fit."""
    labels = builder.dimension_labels
    ndim = len(labels or ()) if ndim is None else ndim  # None: whatever the labels say (streams)
    if not labels or len(labels) != ndim or ndim == 0:
        return None
    return [str(label) if label is not None else None for label in labels]


class _RawElements:
    """The stored (encoded) elements of one of our datasets, for copying them unchanged."""

    def __init__(self, data: Any):
        self.data = data
        self.shape = data.shape

    def __getitem__(self, key: Any) -> Any:
        return self.data.stored_elements(key)
