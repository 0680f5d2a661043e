"""Strided and fancy selections of arrays zarr decodes (strings, compounds, Zarr v2, other codecs), read
one touched chunk at a time.

zarr's own indexers cost what the selection *spans*, not what it selects: a strided slice visits every
chunk between its ends, an integer or boolean array counts items per chunk of the whole axis
(``bincount`` with one entry per chunk). Over an axis of 2**39 chunks neither finishes. Here the
selection is first grouped by chunk (:func:`..format.data.selection.orthogonal_picks`, sized by the
elements selected); each chunk holding a selected element is read by a unit-step box within it (which
zarr reads by that chunk alone), concurrently, and its elements copied into the result. Unit-step
basic selections stay with zarr, which reads just the chunks they cover.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import zarr

from ...format.data import Picks, orthogonal_picks
from ..stores import bounded, sync

#: Chunks read at once.
CHUNKS_IN_FLIGHT = 64


def read_picked(array: zarr.Array, key: Any) -> np.ndarray | None:
    """``array.oindex[key]`` (orthogonal: integers, slices of any step, 1-d integer or boolean
    arrays), reading only the chunks holding a selected element; ``None`` for a key of another form."""
    shape = tuple(array.shape)
    chunks = tuple(array.chunks)  # the read unit (the inner chunks of a sharded array)
    if not shape:
        return None
    picks = orthogonal_picks(key, shape, chunks)
    if picks is None:
        return None
    return sync(_read(array, picks)).reshape(picks.shape)


async def _read(array: zarr.Array, picks: Picks) -> np.ndarray:
    reader = array.async_array
    out: np.ndarray | None = None

    def job(cell: tuple[int, ...]) -> Any:
        async def run() -> None:
            nonlocal out
            found = picks.in_chunk(cell)
            if found is None:  # (not reached: every cell of the product holds elements on each axis)
                return
            inner, outer = found
            low = [int(i.min()) for i in inner]
            box = tuple(
                slice(c * n + lo, c * n + int(i.max()) + 1) for c, n, lo, i in zip(cell, picks.chunks, low, inner)
            )
            values = np.asarray(await reader.getitem(box))
            if out is None:
                out = np.empty(picks.work_shape, dtype=values.dtype)
            out[np.ix_(*outer)] = values[np.ix_(*(i - lo for i, lo in zip(inner, low)))]

        return run

    await bounded((job(cell) for cell in picks.cells()), CHUNKS_IN_FLIGHT)
    return out if out is not None else np.empty(picks.work_shape, dtype=array.dtype)
