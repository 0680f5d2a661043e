"""Assemble pieces of an array into whole storage objects and write each object once, in parallel.

A ``DataChunkIterator`` yields blocks whose boundaries need not match the array's write units (its
shards, or its chunks when unsharded). Writing such a block straight through zarr would read,
merge and rewrite every unit it touches partially, and two concurrent writers touching one unit
would race. Here every block is cut along the unit grid: a piece that covers a whole unit is
written as is; other pieces are copied into that unit's buffer until the unit is complete. Each
unit is therefore written exactly once, by one writer. Units copied into buffers are written while
the iterator produces its next block; units cut straight from a block are written before the
iterator is asked for the next one (it may reuse the block's memory), two at a time.
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

Region = tuple[slice, ...]

#: Write units being encoded and stored at once (each holds one unit of data in memory).
IN_FLIGHT = 2


class UnitWriter:
    """Writes an array of growing or known shape in whole units of ``unit`` elements.

    Parameters
    ----------
    write : callable
        ``write(region, values, final_shape)`` stores ``values`` at ``region`` (a tuple of slices).
        ``final_shape`` is ``None`` while the final shape is not yet known.
    unit : tuple of int
        Shape of one write unit (shard or chunk).
    bounds : sequence of int or None
        The array's extent along each axis when known in advance (``None``: grows as data comes).
    dtype, fill_value
        Of the unit buffers; elements never given keep ``fill_value``.
    on_written : callable, optional
        Called with the number of elements of each unit once it is stored (progress).
    """

    def __init__(
        self,
        write: Callable[[Region, np.ndarray, tuple[int, ...] | None], None],
        unit: Sequence[int],
        bounds: Sequence[int | None],
        dtype: Any,
        fill_value: Any,
        on_written: Callable[[int], None] | None = None,
        workers: int = IN_FLIGHT,
    ):
        self._write = write
        self.unit = tuple(int(u) for u in unit)
        self.bounds = tuple(bounds)
        self.dtype = dtype
        self.fill_value = fill_value
        self.extent = [0] * len(self.unit)  # the largest bound seen so far, per axis
        self._buffers: dict[tuple[int, ...], list[Any]] = {}  # cell -> [buffer, elements filled]
        self._given: set[tuple[int, ...]] = set()  # cells some values were given for
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hdmf_zarr3-unit")
        self._pending: deque[Future] = deque()
        self._workers = workers
        self._on_written = on_written

    # --- the unit grid ----------------------------------------------------------------------
    def _cell_region(self, cell: tuple[int, ...], shape: Sequence[int | None]) -> Region:
        """The part of ``cell`` inside ``shape`` (a whole unit along axes of unknown extent)."""
        out = []
        for c, u, bound in zip(cell, self.unit, shape):
            stop = (c + 1) * u if bound is None else min((c + 1) * u, bound)
            out.append(slice(c * u, stop))
        return tuple(out)

    def _cells(self, region: Region) -> itertools.product:
        return itertools.product(*[range(s.start // u, (s.stop - 1) // u + 1) for s, u in zip(region, self.unit)])

    # --- adding data ------------------------------------------------------------------------
    def add(self, region: Region, values: np.ndarray) -> None:
        """Take ``values`` for ``region`` (slices with explicit start and stop)."""
        if any(s.stop <= s.start for s in region):
            return
        self.extent = [max(e, s.stop) for e, s in zip(self.extent, region)]
        borrowed: list[Future] = []  # writes of views into ``values``
        for cell in self._cells(region):
            self._given.add(cell)
            target = self._cell_region(cell, self.bounds)
            inter = tuple(slice(max(a.start, b.start), min(a.stop, b.stop)) for a, b in zip(region, target))
            piece = values[tuple(slice(i.start - r.start, i.stop - r.start) for i, r in zip(inter, region))]
            if inter == target and cell not in self._buffers:
                borrowed.append(self._submit(target, piece, None))
                continue
            entry = self._buffers.get(cell)
            if entry is None:
                entry = self._buffers[cell] = [np.full(self.unit, self.fill_value, dtype=self.dtype), 0]
            entry[0][tuple(slice(i.start - t.start, i.stop - t.start) for i, t in zip(inter, target))] = piece
            entry[1] += math.prod(i.stop - i.start for i in inter)
            if entry[1] >= math.prod(t.stop - t.start for t in target):
                del self._buffers[cell]
                self._submit(target, entry[0][tuple(slice(0, t.stop - t.start) for t in target)], None)
        # Iterators may refill the array they yielded once asked for more: finish with it first.
        for future in borrowed:
            future.result()

    def finish(self, shape: Sequence[int]) -> None:
        """Store the units still incomplete (edges, gaps) clipped to the final ``shape``; wait for all."""
        try:
            for cell in sorted(self._buffers):
                buffer, _ = self._buffers.pop(cell)
                target = self._cell_region(cell, shape)
                if all(t.stop > t.start for t in target):
                    self._submit(target, buffer[tuple(slice(0, t.stop - t.start) for t in target)], tuple(shape))
            while self._pending:
                self._pending.popleft().result()
        finally:
            self.close()

    def covered(self, shape: Sequence[int]) -> bool:
        """Whether values were given for every unit inside ``shape`` (an iterator may leave gaps, which
        are not stored: they read as the fill value)."""
        grid = [math.ceil(n / u) for n, u in zip(shape, self.unit)]
        inside = sum(1 for cell in self._given if all(c < g for c, g in zip(cell, grid)))
        return inside == math.prod(grid)

    def close(self) -> None:
        """Stop without writing what is left (after an error)."""
        self._buffers.clear()
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _submit(self, region: Region, values: np.ndarray, final_shape: tuple[int, ...] | None) -> Future:
        while len(self._pending) >= self._workers:  # bound memory: wait for the oldest write
            self._pending.popleft().result()
        size = values.size

        def run() -> None:
            self._write(region, values, final_shape)
            if self._on_written is not None:
                self._on_written(size)

        future = self._pool.submit(run)
        self._pending.append(future)
        return future
