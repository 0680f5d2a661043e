"""Writing data that is not held in memory: array-like sources copied block by block, and
HDMF ``DataChunkIterator`` streams written chunk by chunk with bounded memory."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from hdmf.data_utils import AbstractDataChunkIterator
from zarr.abc.store import Store
from zarr.core.array import AsyncArray
from zarr.core.sync import sync

from .format import documents as docs
from .format import dtypes as D
from .storage import nodes

#: Upper bound of one block read from a source during a copy.
BLOCK_BYTES = 64 * 2**20


# Sources are read on threads of their own: they may be synchronous zarr arrays, whose reads wait on
# the event loop (and on its default executor, which zarr's stores use for file I/O), so they must
# neither run on the loop nor occupy its executor.
_SOURCE_READERS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="hdmf_zarr3-source")


async def _off_loop(fn: Callable[[], np.ndarray]) -> np.ndarray:
    return await asyncio.get_running_loop().run_in_executor(_SOURCE_READERS, fn)


def block_rows(shape: tuple[int, ...], chunks: tuple[int, ...], itemsize: int) -> int:
    """Rows per block: whole chunks along axis 0, about BLOCK_BYTES in all."""
    row_bytes = max(1, math.prod(shape[1:]) * itemsize)
    rows = max(1, BLOCK_BYTES // row_bytes)
    step = chunks[0] if chunks else 1
    return max(step, rows // step * step)


async def copy_blocks(array: AsyncArray, source: Any, encode: Callable[[Any], np.ndarray],
                      progress: str | None = None) -> None:
    """Copy ``source`` into ``array`` in blocks of whole chunks along the first axis.

    The next block is read while the current one is encoded and written, so a slow source (HDF5
    decompression) and the Zarr writer overlap; at most two blocks are in memory. ``progress`` names
    a progress bar to show (for sources of more than one block).
    """
    shape = array.shape
    if len(shape) == 0:
        await array.setitem((), await _off_loop(lambda: encode(source[()])))
        return
    if shape[0] == 0:
        return
    itemsize = array.dtype.itemsize if array.dtype.kind not in "OT" else docs.VARIABLE_ITEM_BYTES
    step = block_rows(shape, array.chunks, itemsize)
    starts = list(range(0, shape[0], step))
    bar = _progress_bar(progress, len(starts)) if progress and len(starts) > 1 else None

    def read(start: int) -> asyncio.Future:
        stop = min(shape[0], start + step)
        return asyncio.ensure_future(_off_loop(lambda: encode(source[start:stop])))

    pending = read(starts[0])
    try:
        for i, start in enumerate(starts):
            block = await pending
            if i + 1 < len(starts):
                pending = read(starts[i + 1])
            await array.setitem(slice(start, min(shape[0], start + step)), block)
            if bar is not None:
                bar.update(1)
    finally:
        if not pending.done():
            pending.cancel()
        if bar is not None:
            bar.close()


def _progress_bar(description: str, total: int) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=description, unit="block", leave=False)


def stream_iterator(store: Store, path: str, iterator: AbstractDataChunkIterator, storage: D.StorageType,
                    attrs: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """Write every chunk ``iterator`` yields; return the final array document (not yet stored)."""
    shape = [int(s or 0) for s in (iterator.recommended_data_shape() or ())]
    chunks = options.get("chunks") or iterator.recommended_chunk_shape()
    if not chunks or chunks is True:
        guess = list(shape) or [1]
        maxshape = getattr(iterator, "maxshape", None) or ()
        for i, m in enumerate(maxshape):
            if m is not None and i < len(guess):
                guess[i] = max(guess[i], int(m))
        chunks = docs.default_chunks(guess, storage)
    chunks = tuple(int(c) for c in chunks)
    if not shape:
        shape = [0] * len(chunks)

    def document() -> dict[str, Any]:
        return docs.array_document(shape, storage, attrs, chunks=chunks)

    array = nodes.async_array(store, path, document())
    for chunk in iterator:
        if chunk is None or chunk.data is None:
            continue
        bounds = chunk.get_min_bounds()
        if any(b > s for b, s in zip(bounds, shape)):
            shape[:] = [max(b, s) for b, s in zip(bounds, shape)]
            array = nodes.async_array(store, path, document())
        values = np.asarray(chunk.data)
        if storage.kind == "numeric":
            values = values.astype(storage.numpy_dtype, copy=False)
        sync(array.setitem(chunk.selection, values))
    return document()
