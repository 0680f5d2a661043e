"""Writing data that is not held in memory: array-like sources copied block by block, and
HDMF ``DataChunkIterator`` streams written chunk by chunk with bounded memory."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from hdmf.data_utils import AbstractDataChunkIterator
from zarr import AsyncArray
from zarr.abc.store import Store

from ...errors import UnsupportedDataError
from ...format.data import printable
from ...format.documents import limits
from ...format.documents import zarr_json as docs
from ...format.layout import policy as layout_policy
from ...format.layout import stored_chunks
from ...format.vocabulary import dtypes
from ...storage.codecs import UnitEncoder
from ...storage.stores import WorkPools, nodes, sync
from ...storage.writes import UnitWriter
from ..settings import ZarrSettings, layout_choice

#: Upper bound of one block read from a source during a copy.
BLOCK_BYTES = 64 * 2**20


async def _off_loop(pools: WorkPools, fn: Callable[[], np.ndarray]) -> np.ndarray:
    # Off the loop and its default executor: see :mod:`.storage.stores.pools`.
    return await asyncio.get_running_loop().run_in_executor(pools.sources, fn)


def write_unit(array: AsyncArray) -> tuple[int, ...]:
    """The shape of one storage object: the shard of a sharded array, else the chunk.

    Writes cover whole units so that no unit is read back and rewritten (a partial shard write is
    a read-modify-write of the whole shard) and no two concurrent writers touch the same object.
    """
    return tuple(array.shards or array.chunks)


def block_rows(shape: tuple[int, ...], chunks: tuple[int, ...], itemsize: int) -> int:
    """Rows per block: whole write units along axis 0, about BLOCK_BYTES in all (at least one unit)."""
    row_bytes = max(1, math.prod(shape[1:]) * itemsize)
    rows = max(1, BLOCK_BYTES // row_bytes)
    step = chunks[0] if chunks else 1
    return max(step, rows // step * step)


async def copy_blocks(
    array: AsyncArray,
    source: Any,
    encode: Callable[[Any], np.ndarray],
    pools: WorkPools,
    progress: str | None = None,
    direct: UnitEncoder | None = None,
) -> None:
    """Copy ``source`` into ``array`` in blocks of whole chunks along the first axis.

    The next block is read while the current one is encoded and written, so a slow source (HDF5
    decompression) and the Zarr writer overlap; at most two blocks are in memory. ``progress`` names
    a progress bar to show (for sources of more than one block). Sources are read on ``pools.sources``,
    ``direct`` encodes on ``pools.encoders``.
    """
    shape = array.shape
    if len(shape) == 0:
        await array.setitem((), await _off_loop(pools, lambda: encode(source[()])))
        return
    if shape[0] == 0:
        return
    itemsize = array.dtype.itemsize if array.dtype.kind not in "OT" else docs.VARIABLE_ITEM_BYTES
    step = block_rows(shape, write_unit(array), itemsize)
    starts = list(range(0, shape[0], step))
    bar = _progress_bar(progress, len(starts)) if progress and len(starts) > 1 else None

    def read(start: int) -> asyncio.Future:
        stop = min(shape[0], start + step)
        return asyncio.ensure_future(_off_loop(pools, lambda: encode(source[start:stop])))

    pending = read(starts[0])
    try:
        for i, start in enumerate(starts):
            block = await pending
            if i + 1 < len(starts):
                pending = read(starts[i + 1])
            if direct is not None and block.dtype.kind in "biuf":
                await direct.write_block((start,) + (0,) * (len(shape) - 1), block, pools)
            else:
                await array.setitem(slice(start, min(shape[0], start + step)), block)
            if bar is not None:
                bar.update(1)
    finally:
        if not pending.done():
            pending.cancel()
        if bar is not None:
            bar.close()


def _progress_bar(description: str, total: int | None, unit: str = "block") -> Any:
    from tqdm.auto import tqdm

    # the description is a node path: a name's control characters must not reach the terminal raw
    return tqdm(total=total, desc=printable(description), unit=unit, unit_scale=unit != "block", leave=False)


def stream_layout(
    path: str,
    iterator: AbstractDataChunkIterator,
    storage: dtypes.StorageType,
    options: ZarrSettings | dict[str, Any],
) -> tuple[Any, tuple[int, ...], list[int], list[int | None]]:
    """The layout of a stream (checked, see :func:`~hdmf_zarr3.backend.settings.layout_choice.choose`), the shape
    it is sized for, its initial shape and its bounds (``None``: unlimited). Nothing is read from the iterator."""
    maxshape = tuple(getattr(iterator, "maxshape", None) or ())
    recommended = iterator.recommended_chunk_shape()
    initial = [int(s or 0) for s in (iterator.recommended_data_shape() or maxshape or ())]
    if not initial and recommended not in (None, True):
        initial = [0] * len(recommended)
    bounds: list[int | None] = (
        [int(m) if m is not None else None for m in maxshape]
        if len(maxshape) == len(initial)
        else [None] * len(initial)
    )
    if recommended not in (None, True) and len(recommended) == len(initial):  # an explicit chunk setting, unless given
        chunks = tuple(int(c) for c in recommended)
        if isinstance(options, ZarrSettings) and options.chunks is None:
            options = replace(options, chunks=chunks)
        elif isinstance(options, dict) and "chunks" not in options:
            options = {**options, "chunks": chunks}
    # Size chunks for the whole stream: rows of unknown count are taken as plentiful.
    estimate = tuple(b if b is not None else max(s, 2**31) for b, s in zip(bounds, initial))
    layout = layout_choice.choose(path, storage, estimate, options, auto_shards=None not in bounds)
    return layout, estimate, initial, bounds


@dataclass(frozen=True)
class StreamPlan:
    """What a stream is stored as, decided before anything is read from it (see :func:`plan_stream`)."""

    path: str
    storage: dtypes.StorageType
    attrs: dict[str, Any]
    layout: Any
    chunks: tuple[int, ...]  # the grid: shards when sharded, else chunks (the write unit)
    initial: list[int]
    bounds: list[int | None]  # None: unlimited
    dimension_names: list[str | None] | None
    separator: str

    def document(self, shape: Sequence[int]) -> dict[str, Any]:
        """The array document of the stream once it has ``shape``."""
        layout = self.layout
        return docs.array_document(
            shape,
            self.storage,
            self.attrs,
            chunks=self.chunks,
            codecs=layout.codecs,
            dimension_names=self.dimension_names,
            fill_value=layout.fill_value,
            separator=self.separator,
        )

    def provisional_document(self) -> dict[str, Any]:
        """The document stored before any chunk: sized for the largest extent a reader accepts."""
        return self.document(limits.provisional_shape(self.bounds, list(self.chunks), self.storage.data_type))

    def final_shape(self, extent: Sequence[int]) -> list[int]:
        """The shape once the data written reaches ``extent`` (at least the initial shape)."""
        return [max(e, s) for e, s in zip(extent, self.initial)]


def plan_stream(
    path: str,
    iterator: AbstractDataChunkIterator,
    storage: dtypes.StorageType,
    attrs: dict[str, Any],
    options: ZarrSettings | dict[str, Any],
    dimension_names: list[str | None] | None = None,
    separator: str | None = None,
) -> StreamPlan:
    """The layout and documents of a stream (see :func:`stream_layout`); nothing is read from it.

    The layout follows :func:`~hdmf_zarr3.backend.settings.layout_choice.choose` (the iterator's recommended
    chunk shape counts as an explicit chunk setting); arrays whose length is not known in advance are not
    sharded by default (the policy cannot tell how large they will be).

    ``separator``: of the chunk keys, ``None`` for the layout policy's choice at ``path``.
    """
    layout, estimate, initial, bounds = stream_layout(path, iterator, storage, options)
    chunks = tuple(layout.chunks or docs.default_chunks(estimate, storage))
    separator = layout_policy.chunk_key_separator(path, len(chunks), separator)
    return StreamPlan(
        path, storage, attrs, layout, chunks, initial, bounds, layout.dimension_names or dimension_names, separator
    )


def stream_iterator(
    store: Store, iterator: AbstractDataChunkIterator, plan: StreamPlan, pools: WorkPools, progress: bool = False
) -> dict[str, Any]:
    """Write every chunk ``iterator`` yields as ``plan`` says (:func:`plan_stream`, decided when the write was
    planned); return the final array document (not yet stored).

    Blocks are assembled into whole write units, each written once while the iterator produces the next
    block. Chunks are encoded on ``pools.encoders``.
    """
    path, storage = plan.path, plan.storage
    chunks, bounds, layout, document = plan.chunks, plan.bounds, plan.layout, plan.document
    provisional_doc = plan.provisional_document()
    nodes.put_documents(store, {path: provisional_doc})  # a document before any chunk (icechunk insists)
    provisional = nodes.async_array(store, path, provisional_doc)
    direct = UnitEncoder.for_document(store, path, provisional_doc)
    final: dict[str, AsyncArray] = {}

    def write(region: tuple[slice, ...], values: np.ndarray, final_shape: tuple[int, ...] | None) -> None:
        if direct is not None:
            sync(direct.write_block(tuple(r.start for r in region), values, pools))
            return
        array = (
            provisional
            if final_shape is None
            else final.setdefault("array", nodes.async_array(store, path, document(final_shape)))
        )
        sync(array.setitem(region, values))

    numeric = storage.kind == "numeric"
    dtype = storage.numpy_dtype if numeric else object
    fill = layout.fill_value if layout.fill_value is not None else (storage.fill_value if numeric else "")
    bar = _progress_bar(path, _known_size(bounds), unit="element") if progress else None
    writer = UnitWriter(write, chunks, bounds, dtype, fill, on_written=bar.update if bar is not None else None)
    try:
        for chunk in iterator:
            if chunk is None or chunk.data is None:
                continue
            region, values = _region(chunk.selection, np.asarray(chunk.data), len(chunks))
            writer.add(region, values.astype(dtype, copy=False) if numeric else values)
        shape = plan.final_shape(writer.extent)
        writer.finish(shape)
    except BaseException:
        writer.close()
        raise
    finally:
        if bar is not None:
            bar.close()
    return document(shape) if writer.covered(shape) else stored_chunks.unmarked(document(shape))


def _known_size(bounds: Sequence[int | None]) -> int | None:
    return math.prod(bounds) if bounds and None not in bounds else None  # type: ignore[arg-type]  # no None


def _region(selection: Any, values: np.ndarray, ndim: int) -> tuple[tuple[slice, ...], np.ndarray]:
    """An iterator chunk's selection as slices with explicit starts and stops, and its values shaped to it."""
    selection = selection if isinstance(selection, tuple) else (selection,)
    selection = selection + (slice(None),) * (ndim - len(selection))
    kept = iter(values.shape)  # integer selections drop their axis from the values
    out = []
    for sel in selection:
        if isinstance(sel, slice):
            if sel.step not in (None, 1):
                raise UnsupportedDataError(f"iterator selections must be contiguous, got step {sel.step}")
            start, count = sel.start or 0, next(kept, 0)
            out.append(slice(start, sel.stop if sel.stop is not None else start + count))
        else:
            out.append(slice(int(sel), int(sel) + 1))
    region = tuple(out)
    return region, values.reshape(tuple(r.stop - r.start for r in region))
