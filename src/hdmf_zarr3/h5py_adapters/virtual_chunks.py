"""Where an HDF5 dataset's bytes lie in its file, as the chunks of a Zarr v3 array (issue #20).

A *virtual* Zarr array keeps no bulk data of its own: each of its chunks is a byte range of the HDF5 file
(offset, length) that the array's codec chain (:func:`.format.layout.virtual_codecs.virtual_codecs`) decodes as
it is. :func:`plan_virtual` reads, through h5py and without reading any data, which byte ranges those are;
a writer then records them (e.g. as icechunk virtual references) and copies only what cannot be pointed at.

Design
------
*Chunked datasets* map one to one: the Zarr chunk grid is HDF5's, and every chunk HDF5 stored becomes a
:class:`VirtualChunk` at the address and size HDF5 reports. They are listed by ``DatasetID.chunk_iter``,
one pass over HDF5's chunk index (h5py >= 3.8 built on HDF5 >= 1.12.3 / 1.14); older builds fall back to
``get_num_chunks`` + ``get_chunk_info(i)``, which is correct but walks the index once per chunk.

- A chunk HDF5 never wrote is absent from the index: it is absent from the plan too, and Zarr reads it as
  the fill value, which is what h5py reads there (``fill_value`` is the dataset's HDF5 fill value; 0 when
  HDF5 leaves unwritten values undefined, fill time "never" or no fill value, as h5py then reads zeros).
- A chunk with a non-zero ``filter_mask`` was stored with some optional filter skipped (e.g. Blosc
  declines incompressible data); the array has one codec chain, so that chunk cannot be decoded in place:
  its cell goes to :attr:`VirtualArray.copies`, and the writer copies its values.
- A partial edge chunk whose stored size is exactly a whole unfiltered chunk's, in a dataset with filters,
  is copied too. HDF5's ``H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS`` option (set by ``H5Pset_chunk_opts``)
  stores edge chunks without filters *and with ``filter_mask`` 0*, and h5py can neither set nor report
  the option; such chunks always have exactly that size, while a filtered chunk has it only by chance
  (deflate, zstd and Blosc frames and fletcher32's checksum change the size; with shuffle alone, every
  edge chunk is copied). A false alarm costs one chunk's copy, never a wrong value.

*Contiguous datasets* are one extent of C-ordered bytes (``DatasetID.get_offset``). They are cut along the
first axis into chunks of whole rows, about ``contiguous_chunk_bytes`` each (``(k, *shape[1:])``); each
chunk is a slice of the extent. When a single row is bigger than that, the cut moves to the first axis
whose trailing block fits (``(1, ..., 1, k, *shape[j+1:])``), which is still contiguous in the file. Zarr
decodes every chunk at its full size, so a last, partial chunk along the cut axis (its bytes would be
shorter, or run into the next row) is listed in ``copies``. A contiguous dataset whose storage was never
allocated (``get_offset()`` is ``None``: nothing was ever written) gives a plan with no chunks and no
copies: the Zarr array then reads as the fill value everywhere, as h5py does, and nothing is copied. This
is the same rule as for a chunked dataset with no chunk written.

Everything else is *not virtual* (:class:`.format.layout.virtual_codecs.NotVirtual`, with the reason the command
reports) and the writer copies it; the first reason that applies is given:

- scalar (0-d) datasets, HDF5 virtual datasets (their data is mapped from other datasets) and datasets in
  external raw files (``dset.external``): no extent of this file holds their bytes;
- compact layout: the bytes sit inside the object header, among metadata;
- types other than fixed-size numbers, and filters no Zarr v3 codec decodes (as ``virtual_codecs`` says);
- datasets with no elements, and those of fewer than ``min_bytes`` bytes (``size * itemsize``): a copy
  costs less than a reference;
- files split by the ``family``, ``split`` or ``multi`` drivers, sources that are not a local file (unless
  their size and time are given), and byte ranges past the end of the file (a file not flushed).

The plan records the source's size and modification time (``st_mtime_ns``) so that a reader can refuse a
source changed since (issue #20, point 4). HDF5's addresses from ``get_offset`` and the chunk index are
absolute in the file (a user block before the superblock included), so offsets are used as they are.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..format.layout import Filter, NotVirtual, virtual_codecs

__all__ = ["NotVirtual", "VirtualArray", "VirtualChunk", "describe", "plan_virtual"]

# HDF5's layout classes (H5D_COMPACT, H5D_CONTIGUOUS, H5D_CHUNKED, H5D_VIRTUAL); fixed by the file format
_COMPACT, _CONTIGUOUS, _CHUNKED = 0, 1, 2
# H5D_FILL_TIME_NEVER and H5D_FILL_VALUE_UNDEFINED, from HDF5's API enums
_FILL_TIME_NEVER, _FILL_VALUE_UNDEFINED = 1, 0
# drivers whose addresses are not offsets into one file
_SPLIT_DRIVERS = {"family", "split", "multi"}


@dataclass(frozen=True)
class VirtualChunk:
    """One Zarr chunk read in place: a byte range of the HDF5 file.

    Attributes
    ----------
    cell : tuple of int
        The chunk's index in the chunk grid.
    offset : int
        Its first byte's offset in the HDF5 file.
    length : int
        Its size in bytes, as stored (after HDF5's filters).
    """

    cell: tuple[int, ...]
    offset: int
    length: int


@dataclass(frozen=True)
class VirtualArray:
    """How to lay an HDF5 dataset out as a virtual Zarr v3 array.

    Attributes
    ----------
    shape : tuple of int
        The dataset's shape.
    dtype : numpy.dtype
        Its type as stored (the byte order kept; the ``bytes`` codec names it).
    chunk_shape : tuple of int
        The Zarr chunk shape (HDF5's for a chunked dataset, a cut of whole rows for a contiguous one).
    codecs : list of dict
        The Zarr v3 codec chain decoding the stored bytes (``bytes`` first).
    fill_value : Any
        What chunks absent from both lists read as, a Python number: the dataset's HDF5 fill value, or 0
        where HDF5 leaves unwritten values undefined (h5py reads zeros there).
    chunks : list of VirtualChunk
        The chunks read in place, ordered by cell.
    copies : list of tuple of int
        The cells whose bytes cannot be read in place (stored with a filter skipped; a contiguous
        dataset's partial last chunk): the writer copies their values.
    source_size : int
        The HDF5 file's size in bytes when planned.
    source_mtime_ns : int
        Its modification time (``st_mtime_ns``) when planned.
    """

    shape: tuple[int, ...]
    dtype: np.dtype
    chunk_shape: tuple[int, ...]
    codecs: list[dict[str, Any]]
    fill_value: Any
    chunks: list[VirtualChunk]
    copies: list[tuple[int, ...]]
    source_size: int
    source_mtime_ns: int


def plan_virtual(
    dset: Any,
    *,
    min_bytes: int = 1 << 20,
    contiguous_chunk_bytes: int = 16 << 20,
    source_stat: tuple[int, int] | None = None,
) -> VirtualArray | NotVirtual:
    """Where ``dset``'s chunks lie in its HDF5 file, or why it must be copied.

    Parameters
    ----------
    dset : h5py.Dataset
        The dataset, in a file opened for reading (its addresses must be on disk: a file being written
        must be flushed first).
    min_bytes : int, optional
        Datasets with fewer bytes (``size * itemsize``) are copied: a reference would cost more.
    contiguous_chunk_bytes : int, optional
        About how many bytes each chunk cut from a contiguous dataset holds.
    source_stat : tuple of (int, int), optional
        The source's size in bytes and modification time in nanoseconds, when it is not a local file
        (e.g. an object's size and Last-Modified); by default ``os.stat`` of ``dset.file.filename``.

    Returns
    -------
    VirtualArray or NotVirtual
        The plan, or the reason (for the command's report) the dataset is copied instead.
    """
    plist = dset.id.get_create_plist()
    why = _layout_refusal(dset, plist.get_layout())
    if why is not None:
        return NotVirtual(why)
    codecs = virtual_codecs.virtual_codecs(_filters(plist), np.dtype(dset.dtype))
    if isinstance(codecs, NotVirtual):
        return codecs
    dtype = np.dtype(dset.dtype)
    shape = tuple(int(n) for n in dset.shape)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes == 0:
        return NotVirtual("it holds no elements (nothing to point at)")
    if nbytes < min_bytes:
        return NotVirtual(f"smaller than {min_bytes} bytes ({nbytes})")
    stat = _source_stat(dset) if source_stat is None else source_stat
    if isinstance(stat, NotVirtual):
        return stat
    size, mtime_ns = stat
    located = _located_chunks(dset, plist, contiguous_chunk_bytes, size)
    if isinstance(located, NotVirtual):
        return located
    chunk_shape, chunks, copies = located
    return VirtualArray(
        shape=shape,
        dtype=dtype,
        chunk_shape=chunk_shape,
        codecs=codecs,
        fill_value=_fill_value(dset, plist, dtype),
        chunks=chunks,
        copies=copies,
        source_size=int(size),
        source_mtime_ns=int(mtime_ns),
    )


def _located_chunks(
    dset: Any, plist: Any, contiguous_chunk_bytes: int, size: int
) -> tuple[tuple[int, ...], list[VirtualChunk], list[tuple[int, ...]]] | NotVirtual:
    """The chunk shape, the chunks read in place and the cells to copy of ``dset`` (its stored chunks, or cuts of
    a contiguous dataset), or why not: a chunk ending past the ``size`` bytes of the file."""
    dtype = np.dtype(dset.dtype)
    shape = tuple(int(n) for n in dset.shape)
    if plist.get_layout() == _CHUNKED:
        chunk_shape = tuple(int(n) for n in dset.chunks)
        unfiltered_size = math.prod(chunk_shape) * dtype.itemsize if plist.get_nfilters() else None
        chunks, copies = _stored_chunks(dset.id, shape, chunk_shape, unfiltered_size)
    else:
        axis, steps = _contiguous_cut(shape, dtype.itemsize, contiguous_chunk_bytes)
        chunk_shape = (1,) * axis + (steps,) + shape[axis + 1 :]
        chunks, copies = _contiguous_chunks(dset.id.get_offset(), shape, axis, steps, dtype.itemsize)
    past = next((c for c in chunks if c.offset + c.length > size), None)
    if past is not None:
        return NotVirtual(
            f"its chunk {past.cell} ends at byte {past.offset + past.length}, past the end of the file "
            f"({size} bytes; not flushed, or truncated)"
        )
    return chunk_shape, chunks, copies


def describe(result: VirtualArray | NotVirtual) -> str:
    """One line for the command's report: how a dataset is stored, or why it is copied.

    Parameters
    ----------
    result : VirtualArray or NotVirtual
        What :func:`plan_virtual` returned.

    Returns
    -------
    str
        E.g. ``"virtual: 12 chunks in place, 1 copied"``, or ``"copied: <why>"``.
    """
    if isinstance(result, NotVirtual):
        return f"copied: {result.reason}"
    if not result.chunks and not result.copies:
        return f"virtual: no chunk written (all fill value {result.fill_value!r})"
    line = f"virtual: {len(result.chunks)} chunk{'s' if len(result.chunks) != 1 else ''} in place"
    return f"{line}, {len(result.copies)} copied" if result.copies else line


def _layout_refusal(dset: Any, layout: int) -> str | None:
    """Why no extent of the file holds ``dset``'s bytes as one array, or ``None``."""
    if dset.shape == ():
        return "a scalar (0-d) dataset (one value has no chunks to point at)"
    if dset.is_virtual:
        return "an HDF5 virtual dataset (its data is mapped from other datasets)"
    if dset.external:
        return "its data lives in external raw files (HDF5 external storage)"
    if layout == _COMPACT:
        return "compact layout (its bytes are kept inside the object header)"
    if layout not in (_CONTIGUOUS, _CHUNKED):
        return f"HDF5 layout {layout} is neither chunked nor contiguous"
    return None


def _fill_value(dset: Any, plist: Any, dtype: np.dtype) -> Any:
    """What h5py reads where nothing was written: the fill value, or 0 where HDF5 leaves it undefined
    (fill time "never", or no fill value) and h5py's zeroed buffer shows through."""
    if plist.get_fill_time() == _FILL_TIME_NEVER or plist.fill_value_defined() == _FILL_VALUE_UNDEFINED:
        return np.zeros((), dtype).item()
    return np.asarray(dset.fillvalue, dtype=dtype).item()


def _filters(plist: Any) -> list[Filter]:
    """The filter pipeline of a dataset creation property list, first applied first."""
    stages = (plist.get_filter(i) for i in range(plist.get_nfilters()))
    return [Filter(int(stage[0]), tuple(int(v) for v in stage[2])) for stage in stages]


def _source_stat(dset: Any) -> tuple[int, int] | NotVirtual:
    """The HDF5 file's size and modification time, or why there is no local file to point into."""
    driver = dset.file.driver
    if driver in _SPLIT_DRIVERS:
        return NotVirtual(f"its file is split over several files (HDF5's {driver} driver)")
    if driver == "fileobj":
        return NotVirtual("its file was opened from a Python file object, not a path")
    try:
        found = os.stat(dset.file.filename)
    except OSError as error:
        return NotVirtual(f"its file {dset.file.filename!r} is not a local file ({error.strerror})")
    return found.st_size, found.st_mtime_ns


def _stored_chunks(
    dsid: Any, shape: tuple[int, ...], chunk_shape: tuple[int, ...], unfiltered_size: int | None
) -> tuple[list[VirtualChunk], list[tuple[int, ...]]]:
    """The chunks HDF5 stored, split into those read in place and the cells to copy.

    ``unfiltered_size`` is the bytes of a whole chunk stored without filters, if the dataset has filters
    (``None`` if it has none): an edge chunk of that size may have been stored unfiltered.
    """
    infos: list[Any] = []
    chunk_iter = getattr(dsid, "chunk_iter", None)
    if chunk_iter is not None:
        chunk_iter(infos.append)  # one pass over the chunk index; returning None continues it
    else:  # h5py < 3.8 or HDF5 < 1.12.3: each get_chunk_info(i) searches the index again
        infos = [dsid.get_chunk_info(i) for i in range(dsid.get_num_chunks())]
    grid = tuple(-(-n // c) for n, c in zip(shape, chunk_shape))
    chunks: list[VirtualChunk] = []
    copies: list[tuple[int, ...]] = []
    for info in infos:
        cell = tuple(int(o) // c for o, c in zip(info.chunk_offset, chunk_shape))
        if info.byte_offset is None or not all(i < g for i, g in zip(cell, grid)):
            continue  # not allocated, or outside the current extent: reads as the fill value
        if info.filter_mask:  # an optional filter was skipped: the chain cannot decode these bytes
            copies.append(cell)
        elif info.size == unfiltered_size and any((i + 1) * c > n for i, c, n in zip(cell, chunk_shape, shape)):
            copies.append(cell)  # a partial edge chunk perhaps stored unfiltered (see the module's notes)
        else:
            chunks.append(VirtualChunk(cell, int(info.byte_offset), int(info.size)))
    chunks.sort(key=lambda chunk: chunk.cell)
    copies.sort()
    return chunks, copies


def _contiguous_cut(shape: Sequence[int], itemsize: int, target: int) -> tuple[int, int]:
    """Where to cut a contiguous extent into chunks of about ``target`` bytes: the first axis whose
    trailing block (the axes after it, whole) fits, and how many of its steps a chunk takes."""
    axis = 0
    while axis < len(shape) - 1 and math.prod(shape[axis + 1 :]) * itemsize > target:
        axis += 1
    block = math.prod(shape[axis + 1 :]) * itemsize  # the bytes of one step along the cut axis
    return axis, max(1, min(shape[axis], target // block))


def _contiguous_chunks(
    base: int | None, shape: tuple[int, ...], axis: int, steps: int, itemsize: int
) -> tuple[list[VirtualChunk], list[tuple[int, ...]]]:
    """The slices of a contiguous extent at ``base`` that are whole chunks, and the partial chunks' cells."""
    if base is None:  # storage never allocated: every element reads as the fill value
        return [], []
    block = math.prod(shape[axis + 1 :]) * itemsize
    full, rest = divmod(shape[axis], steps)
    trailing = (0,) * (len(shape) - axis - 1)
    chunks: list[VirtualChunk] = []
    copies: list[tuple[int, ...]] = []
    for row, outer in enumerate(np.ndindex(*shape[:axis])):  # C order, as the extent holds them
        start = base + row * shape[axis] * block
        lead = tuple(int(n) for n in outer)
        for i in range(full):
            chunks.append(VirtualChunk((*lead, i, *trailing), start + i * steps * block, steps * block))
        if rest:
            copies.append((*lead, full, *trailing))
    return chunks, copies
