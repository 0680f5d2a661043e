"""A SpatialSeries as a path in x-y (issue #41, point 5), as plain data: the positions of a time window, every
n-th sample so that at most :data:`PATH_POINTS` are sent, with their times (the page colours the path by time).

The window's rows are read in one slice of the first two columns, within the viewer's budget; a window of more
than :data:`PATH_ROWS` rows is read as evenly spaced blocks of rows instead of whole.
"""

from __future__ import annotations

import bisect
from typing import Any

import numpy as np

from ..errors import ViewRequestError
from . import budget
from .series import SampleTimes, json_floats
from .viewed_file import ViewedFile

#: Points of a path sent, at most.
PATH_POINTS = 2_000
#: Rows of a window read whole, at most (beyond: the PATH_POINTS rows sent, one read each; fewer than the
#: chunks a request may decode).
PATH_ROWS = 2_000_000


def path(opened: ViewedFile, node: str, start: float | None = None, stop: float | None = None) -> dict[str, Any]:
    """The x-y positions of the SpatialSeries at ``node`` from ``start`` to ``stop`` (seconds; all by default)."""
    from pynwb.behavior import SpatialSeries

    series = opened.container_at(node)
    data = series.data
    shape = getattr(data, "shape", None)
    if not isinstance(series, SpatialSeries) or shape is None or len(shape) != 2 or shape[1] < 2:
        raise ViewRequestError("a path needs a SpatialSeries of two or more columns (x, y, ...)", node)
    budget.check_chunks(data, node)
    if series.timestamps is not None:
        budget.check_chunks(series.timestamps, node)
    total = int(shape[0]) if series.timestamps is None else min(int(shape[0]), len(series.timestamps))
    times = SampleTimes(series, total)
    first = 0 if start is None else bisect.bisect_left(times, float(start))
    last = total if stop is None else bisect.bisect_right(times, float(stop))
    picked = _picked(first, max(first, last))
    xy = _rows(data, picked, first, last)
    factor = float(series.conversion if series.conversion is not None else 1.0)
    return {
        "path": node,
        "unit": series.unit,
        "samples": total,
        "first": first,
        "last": last,
        "t": json_floats(times.at(picked)) if len(picked) else [],
        "x": json_floats(xy[:, 0] * factor),
        "y": json_floats(xy[:, 1] * factor),
    }


def _picked(first: int, last: int) -> np.ndarray:
    """The rows sent: all when few, else :data:`PATH_POINTS` evenly spaced."""
    if last - first <= PATH_POINTS:
        return np.arange(first, last)
    return np.unique(np.linspace(first, last - 1, PATH_POINTS).astype(np.int64))


def _rows(data: Any, picked: np.ndarray, first: int, last: int) -> np.ndarray:
    if not len(picked):
        return np.empty((0, 2))
    if last - first <= PATH_ROWS:
        block = np.asarray(data[first:last, 0:2], dtype=np.float64)
        return block[picked - first]
    return np.stack([np.asarray(data[int(r), 0:2], dtype=np.float64) for r in picked])
