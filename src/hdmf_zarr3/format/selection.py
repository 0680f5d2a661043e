"""Which storage objects a selection of an array touches (to keep their bytes before they are rewritten)."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterator, Sequence
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
