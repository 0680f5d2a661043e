"""What a read asks of storage: a selection as unit-step slices, and stored chunks grouped into runs that one
ranged read each fetches."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

#: Chunks at most this many bytes apart are read by one request (the bytes between are read and dropped).
RUN_GAP = 64 * 2**10

Selection = tuple[slice, ...]


def basic_selection(key: Any, shape: tuple[int, ...]) -> tuple[Selection, tuple[int, ...]] | None:
    """``key`` as unit-step slices plus the result's shape (integer axes dropped), or ``None``."""
    key = key if isinstance(key, tuple) else (key,)
    if sum(k is Ellipsis for k in key) > 1:
        return None
    if any(k is Ellipsis for k in key):  # (``in`` would compare arrays of an orthogonal key)
        i = next(j for j, k in enumerate(key) if k is Ellipsis)
        key = key[:i] + (slice(None),) * (len(shape) - len(key) + 1) + key[i + 1 :]
    key = key + (slice(None),) * (len(shape) - len(key))
    if len(key) != len(shape):
        return None
    slices, out_shape = [], []
    for k, n in zip(key, shape):
        if isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            i = int(k) + n if k < 0 else int(k)
            if not 0 <= i < n:
                return None  # let zarr raise its IndexError
            slices.append(slice(i, i + 1))
        elif isinstance(k, slice):
            start, stop, step = k.indices(n)
            if step != 1:
                return None
            stop = max(start, stop)
            slices.append(slice(start, stop))
            out_shape.append(stop - start)
        else:
            return None
    return tuple(slices), tuple(out_shape)


def coalesce(chunks: list[tuple[Any, int, int]], limit: int, gap: int = RUN_GAP) -> list[list[tuple[Any, int, int]]]:
    """``(name, offset, size)`` of stored chunks grouped into runs that one ranged request each reads.

    Chunks follow each other in a shard (in the order of their inner grid): a window across all
    channels is a few runs of neighbouring chunks, read by one request each instead of one per chunk.
    A run grows while the next chunk starts at most ``gap`` bytes after its end and the run stays
    within ``limit`` bytes.
    """
    runs: list[list[tuple[Any, int, int]]] = []
    start = stop = 0
    for item in sorted(chunks, key=lambda c: c[1]):
        _, offset, size = item
        if runs and offset <= stop + gap and max(stop, offset + size) - start <= limit:
            runs[-1].append(item)
            stop = max(stop, offset + size)
        else:
            runs.append([item])
            start, stop = offset, offset + size
    return runs


def inner_chunks(
    origin: tuple[int, ...], chunks: tuple[int, ...], grid: tuple[int, ...], box: Selection
) -> list[tuple[int, ...]]:
    """The inner indices (in C order) of the chunks of the shard at ``origin`` (``grid`` chunks of ``chunks``
    along each axis) that ``box`` touches: the ranges of them along each axis (testing each of the 126 chunks
    of a shard in Python cost a read 0.2 ms)."""
    ranges = [
        range(max(0, (s.start - o) // c), min(g, -(-(s.stop - o) // c)))
        for o, c, g, s in zip(origin, chunks, grid, box)
    ]
    return list(itertools.product(*ranges))
