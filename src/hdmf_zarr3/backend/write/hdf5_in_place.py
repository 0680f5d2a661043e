"""Virtual arrays of a conversion from HDF5 (``convert(..., virtual=True)``): what the writer does instead
of copying a large HDF5 dataset.

For each ``h5py.Dataset`` the writer meets, :meth:`VirtualOptions.plan` asks
:func:`~hdmf_zarr3.h5py_adapters.virtual_chunks.plan_virtual` whether its chunks can be read in place. If they
can, the array's document takes the HDF5 chunk shape and the codec chain that reads HDF5's bytes
(:mod:`hdmf_zarr3.format.layout.virtual_codecs`), and :func:`store_virtual` records one virtual chunk per
stored HDF5 chunk (:func:`hdmf_zarr3.storage.virtual.repo.set_refs`), then copies the few chunks
that cannot be read in place (a chunk HDF5 stored with a filter skipped, the partial last chunk cut
from a contiguous dataset). Anything else is copied as in any conversion, and the reason is kept in
:attr:`VirtualOptions.report` for the command to print.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...format.documents import zarr_json as docs
from ...format.layout import NotVirtual
from ...format.vocabulary import ALL_CHUNKS_ATTR, VIRTUAL_ATTR, dtypes
from ...h5py_adapters import VirtualArray, describe, plan_virtual
from ...storage.virtual import Source
from ...storage.virtual import repo as virtual_repo

#: Datasets smaller than this are copied: a virtual chunk costs a request of its own.
MIN_VIRTUAL_BYTES = 1 << 20


@dataclass
class VirtualOptions:
    """What :func:`hdmf_zarr3.convert` hands the writer for ``virtual=True``.

    Parameters
    ----------
    source : Source
        The HDF5 file whose chunks are read in place (a local file or an S3 object).
    h5file : h5py.File
        That file, open: only datasets of it are made virtual.
    min_bytes : int
        Datasets smaller than this are copied.
    report : dict
        Filled by the writer: each dataset path of the source and what became of it.
    """

    source: Source
    h5file: Any
    min_bytes: int = MIN_VIRTUAL_BYTES
    report: dict[str, str] = field(default_factory=dict)

    def plan(self, data: Any, path: str, storage: dtypes.StorageType) -> VirtualArray | None:
        """The virtual layout of ``data`` (an ``h5py.Dataset`` of the source) at ``path``, or ``None``
        when it is copied (the reason is reported)."""
        file = getattr(data, "file", None)
        if file is None or storage.kind != "numeric" or getattr(data, "id", None) is None:
            return None
        if file != self.h5file:
            self.report[path] = "copied: its data is in another file than the source"
            return None
        stat = (self.source.size, self.source.mtime_ns or 0)
        found = plan_virtual(data, min_bytes=self.min_bytes, source_stat=stat)
        if not isinstance(found, NotVirtual) and found.dtype.newbyteorder("=") != storage.numpy_dtype:
            found = NotVirtual(f"its stored type {found.dtype} is not the type written ({storage.numpy_dtype})")
        self.report[path] = describe(found)
        return None if isinstance(found, NotVirtual) else found


def virtual_document(
    planned: VirtualArray,
    storage: dtypes.StorageType,
    attrs: dict[str, Any],
    dimension_names: list[str | None] | None,
    separator: str,
    source: Source,
) -> dict[str, Any]:
    """The ``zarr.json`` of a virtual array: HDF5's chunk shape, fill value and codecs, and where its
    bytes live (:data:`~hdmf_zarr3.format.vocabulary.names.VIRTUAL_ATTR`, which ``hdmf-zarr3 info`` shows)."""
    where = {
        "location": source.url,
        "chunks": len(planned.chunks),
        "copied": len(planned.copies),
    }
    return docs.array_document(
        planned.shape,
        storage,
        # (no promise that every chunk is stored: HDF5 leaves chunks never written unallocated)
        {**{k: v for k, v in attrs.items() if k != ALL_CHUNKS_ATTR}, VIRTUAL_ATTR: where},
        chunks=planned.chunk_shape,
        codecs=planned.codecs,
        dimension_names=dimension_names,
        fill_value=_json_number(planned.fill_value),
        separator=separator,
    )


def store_virtual(store: Any, path: str, planned: VirtualArray, dataset: Any, source: Source) -> None:
    """Record the virtual chunks of the array at ``path`` and copy the chunks that cannot be read in
    place (from ``dataset``, the ``h5py.Dataset``)."""
    import zarr

    virtual_repo.set_refs(store, path, ((c.cell, c.offset, c.length) for c in planned.chunks), source)
    if not planned.copies:
        return
    array = zarr.open_array(store=store, path=path.strip("/"), mode="r+")
    for cell in planned.copies:
        region = tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(cell, planned.chunk_shape, planned.shape))
        array[region] = np.asarray(dataset[region])


def _json_number(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return "NaN" if np.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value
