"""Which storage objects a selection of an array touches (to keep their bytes before they are rewritten)."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


def touched_cells(key: Any, shape: Sequence[int], grid: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Grid indices of the chunks (or shards) that ``array[key]`` covers, for basic selections (integers,
    slices, ``...``) and orthogonal ones (integer or boolean arrays per axis), as zarr indexes them.

    Raises ``IndexError`` for a selection that does not fit ``shape``.
    """
    parts = key if isinstance(key, tuple) else (key,)
    if sum(p is Ellipsis for p in parts) > 1:
        raise IndexError("a selection may hold one '...' at most")
    if any(p is Ellipsis for p in parts):
        at = next(i for i, p in enumerate(parts) if p is Ellipsis)
        parts = parts[:at] + (slice(None),) * (len(shape) - len(parts) + 1) + parts[at + 1 :]
    parts = parts + (slice(None),) * (len(shape) - len(parts))
    if len(parts) != len(shape):
        raise IndexError(f"too many indices ({len(parts)}) for an array of {len(shape)} dimensions")
    return itertools.product(*(_cells(p, n, g) for p, n, g in zip(parts, shape, grid)))


def _cells(part: Any, size: int, step: int) -> list[int]:
    """Grid indices along one axis of ``size`` elements in cells of ``step`` that ``part`` selects."""
    if isinstance(part, slice):
        start, stop, stride = part.indices(size)
        if stride == 1:
            return list(range(start // step, (stop - 1) // step + 1)) if stop > start else []
        return sorted({i // step for i in range(start, stop, stride)})
    if isinstance(part, (int, np.integer)) and not isinstance(part, (bool, np.bool_)):
        index = operator.index(part)
        if not -size <= index < size:
            raise IndexError(f"index {index} is out of bounds for an axis of size {size}")
        return [(index % size) // step]
    indices = np.asarray(part)
    if indices.dtype == bool:
        if indices.shape != (size,):
            raise IndexError(f"a boolean selection of shape {indices.shape} does not fit an axis of size {size}")
        indices = np.nonzero(indices)[0]
    elif indices.ndim != 1 or indices.dtype.kind not in "iu":
        raise IndexError(
            f"unsupported selection {part!r}: use integers, slices, '...' or 1-d integer or boolean arrays"
        )
    if indices.size and not (-size <= int(indices.min()) and int(indices.max()) < size):
        raise IndexError(f"an index is out of bounds for an axis of size {size}")
    return sorted({int(i) // step for i in indices % size}) if size else []


@dataclass(frozen=True)
class AxisPicks:
    """One axis of an orthogonal selection, grouped by the chunk each selected element lies in.

    Everything is sized by the elements selected along the axis, never by the axis or its chunk grid:
    a strided slice over 2**39 chunks that selects 512 elements holds 512 entries.

    Attributes
    ----------
    length : int
        Elements selected along the axis (1 for an integer index).
    dropped : bool
        An integer index: the axis is not in the result.
    cells : ndarray
        The chunk indices touched, ascending.
    bounds : ndarray
        ``inner[bounds[g]:bounds[g + 1]]`` are the elements of chunk ``cells[g]``.
    inner : ndarray
        Each selected element's index within its chunk, grouped by chunk.
    outer : ndarray
        Each selected element's position in the result, in the same order as :attr:`inner`.
    """

    length: int
    dropped: bool
    cells: np.ndarray
    bounds: np.ndarray
    inner: np.ndarray
    outer: np.ndarray

    def group(self, cell: int) -> tuple[np.ndarray, np.ndarray] | None:
        """``(inner, outer)`` of chunk ``cell``, or ``None`` when the selection has nothing in it."""
        at = int(np.searchsorted(self.cells, cell))
        if at == len(self.cells) or int(self.cells[at]) != cell:
            return None
        lo, hi = int(self.bounds[at]), int(self.bounds[at + 1])
        return self.inner[lo:hi], self.outer[lo:hi]


@dataclass(frozen=True)
class Picks:
    """An orthogonal selection (per axis: an integer, a slice of any step, an integer or boolean array)
    grouped by chunk, made by :func:`orthogonal_picks`."""

    axes: tuple[AxisPicks, ...]
    chunks: tuple[int, ...]

    @property
    def work_shape(self) -> tuple[int, ...]:
        """The result's shape with dropped axes kept as length 1 (filled chunk by chunk)."""
        return tuple(a.length for a in self.axes)

    @property
    def shape(self) -> tuple[int, ...]:
        """The result's shape (integer axes dropped)."""
        return tuple(a.length for a in self.axes if not a.dropped)

    def cells(self) -> Iterator[tuple[int, ...]]:
        """Grid indices of the chunks touched (as many as the selection needs, none between them)."""
        return itertools.product(*(a.cells.tolist() for a in self.axes))

    def in_chunk(self, cell: tuple[int, ...]) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]] | None:
        """``(inner, outer)`` index arrays per axis of the elements in chunk ``cell`` (``None``: none)."""
        groups = [a.group(c) for a, c in zip(self.axes, cell)]
        if any(g is None for g in groups):
            return None
        return tuple(g[0] for g in groups if g), tuple(g[1] for g in groups if g)


def orthogonal_picks(key: Any, shape: Sequence[int], chunks: Sequence[int]) -> Picks | None:
    """``key`` as :class:`Picks` over an array of ``shape`` in ``chunks``, or ``None`` for a form it
    does not take (a multi-dimensional mask, ``None``/newaxis, anything else: the caller's other path
    decides). Raises ``IndexError`` for an index out of bounds. Costs time and memory in proportion to
    the elements selected per axis.
    """
    parts = key if isinstance(key, tuple) else (key,)
    if sum(p is Ellipsis for p in parts) > 1:
        return None
    if any(p is Ellipsis for p in parts):
        at = next(i for i, p in enumerate(parts) if p is Ellipsis)
        parts = parts[:at] + (slice(None),) * (len(shape) - len(parts) + 1) + parts[at + 1 :]
    parts = parts + (slice(None),) * (len(shape) - len(parts))
    if len(parts) != len(shape) or any(c <= 0 for c in chunks):
        return None
    axes = []
    for part, size, step in zip(parts, shape, chunks):
        picked = _axis_indices(part, int(size))
        if picked is None:
            return None
        indices, dropped = picked
        axes.append(_group(indices, int(step), dropped))
    return Picks(tuple(axes), tuple(int(c) for c in chunks))


def _axis_indices(part: Any, size: int) -> tuple[np.ndarray, bool] | None:
    """The (non-negative) indices ``part`` selects along an axis of ``size``, and whether it is dropped."""
    if isinstance(part, slice):
        try:
            start, stop, stride = part.indices(size)
        except (TypeError, ValueError):
            return None
        return np.arange(start, stop, stride, dtype=np.int64), False
    if isinstance(part, (int, np.integer)) and not isinstance(part, (bool, np.bool_)):
        index = operator.index(part)
        if not -size <= index < size:
            raise IndexError(f"index {index} is out of bounds for an axis of size {size}")
        return np.array([index % size], dtype=np.int64), True
    if isinstance(part, (list, np.ndarray)):
        try:
            indices = np.asarray(part)
        except ValueError:
            return None
        if indices.ndim != 1 or not (indices.dtype == bool or indices.dtype.kind in "iu" or indices.size == 0):
            return None
        if indices.dtype == bool:
            if indices.shape != (size,):
                raise IndexError(f"a boolean selection of shape {indices.shape} does not fit an axis of size {size}")
            return np.flatnonzero(indices).astype(np.int64), False
        indices = indices.astype(np.int64)
        if indices.size and not (-size <= int(indices.min()) and int(indices.max()) < size):
            raise IndexError(f"an index is out of bounds for an axis of size {size}")
        return np.where(indices < 0, indices + size, indices), False
    return None


def _group(indices: np.ndarray, step: int, dropped: bool) -> AxisPicks:
    cell = indices // step
    order = np.argsort(cell, kind="stable")
    cell = cell[order]
    cells, first = np.unique(cell, return_index=True)
    bounds = np.append(first, len(cell)).astype(np.int64)
    return AxisPicks(len(indices), dropped, cells, bounds, (indices % step)[order], order.astype(np.int64))
