"""Convert NWB files between HDF5 and Zarr v3 with bounded memory, keeping the storage layout.

``NWBZarrIO.export`` and ``NWBHDF5IO.export`` already convert in either direction. What they cannot
do on their own is carry a Zarr array's chunks and compression back to HDF5 (HDF5IO writes plain
data contiguously and uncompressed) or stream a large Zarr array into HDF5 (h5py would read it whole).
:func:`convert` wraps each Zarr dataset in an iterator that reads it chunk-aligned, with the HDF5
settings that match its codecs, before HDF5IO writes it.

Every dataset of ``src`` is copied; links into other files stay links (to Zarr or HDF5 files for
a Zarr destination, to HDF5 files for an HDF5 destination). With a Zarr side, the builders read
from ``src`` are written as they are, so nothing is rebuilt through containers: region
references, chunking and compression survive, and large arrays stream with bounded memory.
HDF5 → HDF5 is PyNWB's own export, which copies linked data in. The destination caches the
source's specifications exactly as stored (:mod:`hdmf_zarr3.backend.cached_specs.copying`), not those PyNWB has loaded.

Every array keeps its layout (chunks, shards, compression) unless ``chunks``, ``shards`` or
``codec`` say otherwise, for a Zarr destination. Each is one setting for every array, or a
mapping from dataset paths (and ``"*"`` for all others) to settings.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from hdmf.backends.hdf5 import H5DataIO
from hdmf.build import DatasetBuilder, GroupBuilder
from hdmf.data_utils import GenericDataChunkIterator
from zarr.abc.store import Store

from ..backend.cached_specs import copying as spec_copy
from ..backend.datasets import ZarrDataset
from ..errors import UnsupportedDataError
from ..format.layout import AUTO, EVERY, Relayout, hdf5_settings, parse_codec, parse_shape
from ..h5py_adapters import (
    Written,
    refuse_nul_attributes,
    source_error,
    source_errors,
    write_replacing,
)
from ..integrations import hdf5io_file
from ..storage.safety import refuse_self_overwrite
from ..storage.stores import locations
from .virtual_conversion import convert_virtual

#: Memory used for one block of a dataset while converting it.
BUFFER_BYTES = 256 * 2**20


class ZarrChunkIterator(GenericDataChunkIterator):
    """Reads a Zarr dataset in buffers of whole chunks (HDMF's chunk-iterator protocol)."""

    def __init__(self, dataset: ZarrDataset, display_progress: bool = False):
        self._dataset = dataset
        shape = dataset.shape
        chunks = tuple(min(c, s) for c, s in zip(dataset.chunks, shape))
        row_bytes = max(1, math.prod(shape[1:]) * dataset.array_view.itemsize)
        rows = max(chunks[0], BUFFER_BYTES // row_bytes // chunks[0] * chunks[0])
        buffer = (min(shape[0], rows),) + tuple(shape[1:])
        super().__init__(
            buffer_shape=buffer,
            chunk_shape=chunks,
            display_progress=display_progress,
            progress_bar_options={"desc": dataset.path, "unit": "buffer"},
        )

    def _get_data(self, selection: tuple[slice, ...]) -> np.ndarray:
        return np.asarray(self._dataset[selection])

    def _get_maxshape(self) -> tuple[int, ...]:
        return self._dataset.shape

    def _get_dtype(self) -> np.dtype:
        return self._dataset.storage.numpy_dtype


def prepare_for_hdf5(root: GroupBuilder, progress: bool = False, src: str | None = None, dst: str = "HDF5") -> int:
    """Wrap every plain Zarr dataset under ``root`` for HDF5IO: streamed, with matching settings.

    Returns the number of datasets wrapped. References and compound rows are left to HDF5IO, which
    resolves them element by element. What HDF5 cannot hold and is known without reading the data is
    refused first (region references; attributes with a NUL in a text, which HDF5IO writes last, after
    every dataset: ``dst`` names the destination in that error).
    """
    wrapped = 0
    stack: list[GroupBuilder] = [root]
    while stack:
        group = stack.pop()
        stack.extend(group.groups.values())
        _refuse_regions(group)
        refuse_nul_attributes(group, dst)
        if src is not None:
            _refuse_links_into_zarr(group, src)
        for builder in group.datasets.values():
            _refuse_regions(builder)
            refuse_nul_attributes(builder, dst)
            if _wrap(builder, progress):
                wrapped += 1
    return wrapped


def _refuse_regions(builder: GroupBuilder | DatasetBuilder) -> None:
    """HDMF's HDF5IO (6.2) cannot write region references: say so before writing anything."""
    from ..backend.datasets import RegionSelection

    path = _path(builder)
    data = getattr(builder, "data", None) if isinstance(builder, DatasetBuilder) else None
    if isinstance(data, ZarrDataset) and data.storage.zarr_dtype == "region" or isinstance(data, RegionSelection):
        raise UnsupportedDataError(
            "region references cannot be converted to HDF5: HDMF's HDF5 writer has no "
            "region reference support; the Zarr file keeps them",
            path,
        )
    for key, value in builder.attributes.items():
        values = value if isinstance(value, list) else [value]
        if any(isinstance(v, RegionSelection) for v in values):
            raise UnsupportedDataError(
                f"attribute {key!r} holds region references, which HDMF's HDF5 writer cannot write", path
            )


def _wrap(builder: DatasetBuilder, progress: bool) -> bool:
    data = builder.data
    # Compounds are left alone: HDF5IO takes a wrapped compound for a scalar. They are tables of rows,
    # read whole by HDF5IO as with any other backend.
    if not isinstance(data, ZarrDataset) or data.storage.kind not in ("numeric", "string"):
        return False
    if data.ndim == 0 or 0 in data.shape:
        return False
    codecs = list(data.array_view.inner_codecs)
    settings = hdf5_settings(codecs, tuple(min(c, s) for c, s in zip(data.chunks, data.shape)))
    settings.pop("chunks", None)  # the iterator carries the chunk shape
    settings["maxshape"] = (None,) + tuple(data.shape[1:])  # appendable, as the Zarr array was
    large = data.size * data.array_view.itemsize > BUFFER_BYTES  # more than one buffer of the iterator
    builder["data"] = H5DataIO(ZarrChunkIterator(data, display_progress=progress and large), **settings)
    return True


def _refuse_links_into_zarr(group: GroupBuilder, src: str) -> None:
    """An HDF5 external link cannot point into a Zarr store: say so instead of writing a broken link."""
    for link in group.links.values():
        source = link.builder.source
        if source and os.path.abspath(source) != os.path.abspath(src) and os.path.isdir(source):
            raise UnsupportedDataError(
                f"link {link.name!r} points into the Zarr file {source}; HDF5 cannot link "
                "into Zarr. Convert that file to HDF5 first, or copy the data in with "
                "NWBHDF5IO.export(..., write_args={'link_data': False})",
                _path(group),
            )


def _path(builder: GroupBuilder | DatasetBuilder) -> str:
    return "/" + builder.path.partition("/")[2] if "/" in builder.path else "/"


def _is_zarr(path: str | Path | Store) -> bool:
    if isinstance(path, Store):
        return True
    text = os.fspath(path).rstrip("/")
    return text.endswith(ZARR_SUFFIXES) or os.path.isdir(text)


#: Paths ending so are Zarr files (a directory, or a zip of one).
ZARR_SUFFIXES = (".zarr", ".zarr.zip")


#: ``convert(chunks=, shards=, codec=)`` default: every array keeps its layout.
KEEP = "keep"


def convert(
    src: str | Path | Store,
    dst: str | Path | Store,
    *,
    progress: bool = False,
    chunks: Any = KEEP,
    shards: Any = KEEP,
    codec: Any = KEEP,
    src_storage_options: dict[str, Any] | None = None,
    virtual: bool = False,
    **io_kwargs: Any,
) -> dict[str, str] | None:
    """Convert the NWB file ``src`` to ``dst``; the direction follows from the paths.

    A zarr ``Store``, or a path ending in ``.zarr`` or ``.zarr.zip`` (or an existing directory) is a Zarr
    file; anything else is HDF5. A Zarr source may be in any convention this package reads (ours, hdmf-zarr 0.14, or
    hdmf-zarr <= 0.13's Zarr v2); a Zarr destination is written in ours unless ``io_kwargs`` say
    ``convention="hdmf-zarr"``.
    What is kept (datasets, links, layouts, specifications) is in the module docstring.

    Parameters
    ----------
    src, dst : str, Path or zarr Store
        Source and destination files; ``dst`` is created (an existing one is replaced).
    progress : bool
        Show a progress bar for each dataset larger than one copy buffer.
    chunks : "keep", "auto" or mapping
        New chunk shapes: ``"auto"`` is the default layout's, a mapping gives shapes (or ``"auto"``)
        per path, e.g. ``{"/acquisition/ElectricalSeries/data": (30000, 64)}``.
    shards : "keep", "auto", None or mapping
        New shard shapes (whole multiples of the chunks): ``"auto"`` shards large arrays as the
        default layout does, ``None`` stores every chunk as its own object.
    codec : "keep", str, list of codecs or mapping
        New compressors: ``"zstd:5"``, ``"gzip:4"``, ``"blosc-lz4"``, ``"none"``, ``"auto"`` (the
        default codecs of each array's data type), or zarr codec objects / JSON documents.
        ``chunks="auto", shards="auto", codec="auto"`` repacks a file into the default layout.
    src_storage_options : dict, optional
        Options of the object store a Zarr ``src`` URL lives in (``storage_options`` in ``io_kwargs``
        are the destination's). HDF5 files are local paths on either side.
    virtual : bool
        ``src`` is an HDF5 file (a local path, or an ``s3://`` or ``http(s)://`` URL read with
        ``src_storage_options``) and
        ``dst`` a new icechunk repository (a local directory, or an ``s3://`` prefix reached with
        ``storage_options`` in ``io_kwargs``; nothing may be there yet) whose large numeric datasets
        read their chunks in place from ``src`` (see :mod:`.virtual_conversion`); returns what became
        of each dataset (``"virtual: ..."`` or ``"copied: <why>"``). Datasets smaller than ``min_bytes``
        (a keyword taken with ``virtual=True`` only; default 1 MiB) are copied.
    **io_kwargs
        Passed to the destination's IO (``NWBZarrIO``: ``storage_options``, ``convention``,
        ``chunk_key_separator``; ``NWBHDF5IO`` for an HDF5 destination).
    """
    refuse_self_overwrite(src, dst)
    if virtual:
        return _convert_virtual(src, dst, (chunks, shards, codec), progress, src_storage_options, io_kwargs)
    _convert_files(src, dst, (chunks, shards, codec), progress, src_storage_options, io_kwargs)
    return None


def _convert_files(
    src: str | Path | Store,
    dst: str | Path | Store,
    layout: tuple[Any, Any, Any],
    progress: bool,
    src_storage_options: dict[str, Any] | None,
    io_kwargs: dict[str, Any],
) -> None:
    """:func:`convert` without ``virtual``: ``src`` opened (its failures named, .source), then converted."""
    from pynwb import NWBHDF5IO

    from ..backend.zarrio import NWBZarrIO

    src_is_zarr = _is_zarr(src)
    src_cls = NWBZarrIO if src_is_zarr else NWBHDF5IO
    dst_path = None if isinstance(dst, Store) else os.fspath(dst)  # (a Store is Zarr)
    to_zarr = dst_path is None or dst_path.rstrip("/").endswith(ZARR_SUFFIXES)
    relayout = make_relayout(*layout)
    if relayout and not to_zarr:
        raise ValueError(f"chunks, shards and codec apply to a Zarr destination; {dst} is HDF5")
    for path, is_zarr in ((src, src_is_zarr), (dst, to_zarr)):  # a Store is Zarr
        if not is_zarr and not isinstance(path, Store) and locations.is_url(os.fspath(path)):
            raise ValueError(
                f"{path}: HDF5 files are converted from and to local paths only (a URL must name "
                "a Zarr file, ending in .zarr or .zarr.zip)"
            )
    src_kwargs: dict[str, Any] = (
        {"storage_options": src_storage_options} if src_cls is NWBZarrIO and src_storage_options else {}
    )
    # h5py's failures reading an HDF5 source are ours, naming it (.source); a Zarr source's are already
    guard: Callable[..., contextlib.AbstractContextManager[None]] = (
        _no_guard if src_cls is NWBZarrIO else functools.partial(source_errors, str(src), str(dst_path or dst))
    )
    with guard(opening=True):
        src_io = src_cls(src if isinstance(src, Store) else os.fspath(src), mode="r", **src_kwargs)
    finished = False
    try:
        # (to HDF5 the destination's writer asks first whether a failure was the source's, .destination)
        reading = functools.partial(guard, reader=src_io) if to_zarr else _no_guard
        with reading():
            _convert_open(src_io, dst, dst_path, to_zarr, relayout, progress, io_kwargs)
        finished = True
    finally:
        with guard(opening=True, finished=finished):
            src_io.close()


def _convert_virtual(
    src: str | Path | Store,
    dst: str | Path | Store,
    layout: tuple[Any, Any, Any],
    progress: bool,
    src_storage_options: dict[str, Any] | None,
    io_kwargs: dict[str, Any],
) -> dict[str, str]:
    """:func:`convert` with ``virtual=True``, once the arguments (``layout``: chunks, shards, codec) allow it."""
    if isinstance(src, Store) or isinstance(dst, Store) or _is_zarr(src):
        raise ValueError(
            "virtual=True reads an HDF5 file (a path, s3:// or http(s):// URL) into a new icechunk repository"
        )
    if make_relayout(*layout):
        raise ValueError("a virtual array keeps the HDF5 layout: chunks, shards and codec do not apply")
    return convert_virtual(src, dst, progress=progress, src_storage_options=src_storage_options, **io_kwargs)


@contextlib.contextmanager
def _no_guard(opening: bool = False, finished: bool = False, reader: Any = None) -> Iterator[None]:
    yield


def _convert_open(
    src_io: Any,
    dst: str | Path | Store,
    dst_path: str | None,
    to_zarr: bool,
    relayout: Relayout,
    progress: bool,
    io_kwargs: dict[str, Any],
) -> None:
    """:func:`convert` from the open ``src_io``."""
    from pynwb import NWBHDF5IO

    from ..backend.zarrio import NWBZarrIO

    if dst_path is None or to_zarr:
        with NWBZarrIO(dst, mode="w", **io_kwargs) as dst_io:
            dst_io.export(src_io=src_io, write_args={"link_data": True, "progress": progress, "relayout": relayout})
        return
    if not isinstance(src_io, NWBZarrIO):

        def export(work: str, written: Written) -> None:
            with NWBHDF5IO(work, mode="w", **io_kwargs) as dst_io:
                written.watch(dst_io)
                dst_io.export(src_io=src_io, write_args={"link_data": False}, cache_spec=False)
                spec_copy.cache_in_hdf5(
                    hdf5io_file(dst_io),
                    spec_copy.source_specifications(src_io),
                    spec_copy.merged_catalog(dst_io, src_io),
                    rebuilt=True,
                )

        # a failure is the source's when the h5py object it was about is the source's (.source)
        reading = functools.partial(source_error, src=str(src_io.source), dst=dst_path, reader=src_io)
        write_replacing(dst_path, export, reading)
        return
    # HDF5IO.export would rebuild every builder from containers (dropping the layout and reading
    # each array whole), so the builders read from Zarr are written directly instead.
    root = src_io.read_builder()
    if src_io.region_attribute_keys():
        path, key = src_io.region_attribute_keys()[0]
        raise UnsupportedDataError(
            f"attribute {key!r} holds region references, which HDMF's HDF5 writer "
            "cannot write; the Zarr file keeps them",
            path,
        )
    prepare_for_hdf5(root, progress=progress, src=src_io.source, dst=dst_path)

    def write(work: str, written: Written) -> None:
        with NWBHDF5IO(work, "w", manager=src_io.manager, **io_kwargs) as dst_io:
            written.watch(dst_io)
            dst_io.write_builder(root, link_data=True, export_source=src_io.source)
            spec_copy.cache_in_hdf5(
                hdf5io_file(dst_io),
                spec_copy.source_specifications(src_io),
                src_io.manager.namespace_catalog,
                rebuilt=False,
            )

    # written beside dst and moved over it when finished: a failure leaves dst as it was (.destination)
    write_replacing(dst_path, write)


def make_relayout(chunks: Any = KEEP, shards: Any = KEEP, codec: Any = KEEP) -> Relayout:
    """The :class:`~.format.layout.relayout.Relayout` of :func:`convert`'s ``chunks``, ``shards`` and ``codec``."""
    from ..backend.settings import codec_json

    def rules(value: Any, one: Any) -> dict[str, Any]:
        if isinstance(value, str) and value == KEEP:
            return {}
        items = value.items() if isinstance(value, Mapping) else [(EVERY, value)]
        return {path if path == EVERY else "/" + str(path).strip("/"): one(v) for path, v in items}

    def shape(value: Any, words: tuple[str, ...]) -> Any:
        if value is None or isinstance(value, str):
            return parse_shape("none" if value is None else value, words)
        return parse_shape(",".join(str(int(v)) for v in value), words)

    def compressors(value: Any) -> list[dict[str, Any]] | str:
        if isinstance(value, str):
            found = parse_codec(value)
            if found == AUTO:
                return AUTO
        else:
            found = list(value) if isinstance(value, (list, tuple)) else [value]
        return [codec_json(c, "compressors") for c in found]

    return Relayout(
        chunks=rules(chunks, lambda v: shape(v, (AUTO,))),
        shards=rules(shards, lambda v: shape(v, (AUTO, "none"))),
        codec=rules(codec, compressors),
    )
