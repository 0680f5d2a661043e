"""Region references of a tree being written: where they come from and how they are stored.

HDMF reads an HDF5 region reference as a reference to the whole dataset (its selection is lost), and an
attribute of region references read from a Zarr file as the referenced object. The writer asks
:class:`RegionSources` for the region an attribute held in its source file (the HDF5 file or the Zarr file
the builder was read from) and how a reference to an HDF5 path is stored (:meth:`RegionSources.locate`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import UnsupportedDataError
from ...format.data import Reference
from ...format.data import values as data_values
from ...format.vocabulary import dtypes
from ...format.vocabulary import names as node_names
from ...h5py_adapters import regions
from ...storage.handles import open_store
from ...storage.stores import locations
from .reference_targets import ReferenceEncoder

if TYPE_CHECKING:
    from ..contexts import WriteContext


class RegionSources:
    """The source files of a write's region references, opened once each and closed by :meth:`close`.

    Parameters
    ----------
    context : WriteContext
        What the writer is given of its io (this file's source, documents and store options).
    reference_to : ReferenceEncoder
        How the writer stores a reference to another file.
    export_source : str or None
        The absolute path of the file being exported, if any.
    """

    def __init__(self, context: WriteContext, reference_to: ReferenceEncoder, export_source: str | None) -> None:
        self.context = context
        self.reference_to = reference_to
        self.export_source = export_source
        self.h5files: dict[str, Any] = {}  # HDF5 sources opened to read raw region references
        self.zarr_documents: dict[str, dict] = {}  # documents of Zarr sources, for the same purpose

    def hdf5_file(self, source: str | None) -> Any:
        """The HDF5 file at ``source``, opened read-only once (``None``: no HDF5 file there)."""
        if not source or source in self.h5files and self.h5files[source] is None:
            return None
        if source not in self.h5files:
            import h5py

            self.h5files[source] = h5py.File(source, "r") if os.path.isfile(source) and h5py.is_hdf5(source) else None
        return self.h5files[source]

    def attribute(self, builder: Any, path: str, key: str, value: Any) -> dict[str, Any] | None:
        """The region envelope for an attribute read (as a plain reference) from a region reference."""
        if not (
            data_values.is_reference_like(value)
            or (isinstance(value, list) and value and data_values.is_reference_like(value[0]))
        ):
            return None
        source = builder.source
        if source and (locations.is_remote(source) or os.path.isdir(source) or source.endswith(".zip")):
            # read from a Zarr file: copy its region envelope verbatim
            if source not in self.zarr_documents:
                self.zarr_documents[source] = self.source_documents(source)
            raw = self.zarr_documents[source].get(path, {}).get("attributes", {}).get(key)
            return raw if isinstance(raw, dict) and raw.get(node_names.DTYPE_ATTR) == dtypes.REGION else None
        h5file = self.hdf5_file(source)
        if h5file is None:
            return None
        raw = regions.raw_attribute(h5file, path, key)  # an export keeps every node at its path
        items = list(np.ravel(raw)) if isinstance(raw, np.ndarray) else [raw]
        if not items or not all(regions.is_region(r) for r in items):
            return None
        records = [regions.reference(r, h5file, self.locate) for r in items]
        stored = [r for r in records if r is not None]
        if len(stored) != len(records):  # (HDMF reads no attribute of null region references this far)
            raise UnsupportedDataError("an attribute of null region references cannot be stored", f"{path}@{key}")
        value_json = [r.to_json() for r in stored] if isinstance(raw, np.ndarray) else stored[0].to_json()
        return {node_names.DTYPE_ATTR: dtypes.REGION, "value": value_json}

    def source_documents(self, source: str) -> dict[str, Any]:
        """The node documents of the Zarr file at ``source`` (``{}`` if it is none, or no longer one)."""
        if locations.same(source, self.context.source):
            return self.context.documents()  # appending to this very file
        try:
            return open_store(source, "r", self.context.storage_options).documents()
        except Exception:  # not (or no longer) a Zarr store: nothing to copy from
            return {}

    def locate(self, h5path: str, path: str, oid: str | None, root_oid: str | None, region: dict | None) -> Reference:
        """How a reference to ``path`` in the HDF5 file ``h5path`` is stored (the file exported: this one)."""
        h5path = locations.absolute(h5path)
        if self.export_source is not None and h5path == self.export_source:
            return Reference(node_names.SAME_FILE, path, oid, self.reference_to.root_oid, region)
        return Reference(self.reference_to.relative(h5path), path, oid, root_oid, region)

    def close(self) -> None:
        """Close the HDF5 files opened."""
        for h5file in self.h5files.values():
            if h5file is not None:
                h5file.close()
