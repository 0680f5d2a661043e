"""Behaviour (issue #41, point 5), as plain data: a SpatialSeries (or the first of a Position or
CompassDirection) as a path in x-y, and the events of a BehavioralEvents as ticks.

A path is the positions of a time window, every n-th sample so that at most :data:`PATH_POINTS` are sent,
with their times (the page colours the path by time). The window's rows are read in one slice of the first
two columns, within the viewer's budget; a window of more than :data:`PATH_ROWS` rows is read as evenly
spaced rows instead of whole. Ticks are each TimeSeries' times in the window, the first :data:`EVENT_TICKS`
of them read in one slice (found by bisecting the timestamps, a chunk at a time).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ViewRequestError
from . import budget, tree
from .series import finite_times, json_floats, sample_span
from .viewed_file import ViewedFile

#: Points of a path sent, at most.
PATH_POINTS = 2_000
#: Rows of a window read whole, at most (beyond: the PATH_POINTS rows sent, one read each; fewer than the
#: chunks a request may decode).
PATH_ROWS = 2_000_000
#: Times of one series' events sent, at most (the first ones of the window), and series shown, at most.
EVENT_TICKS, EVENT_LINES = 20_000, 40


def path(opened: ViewedFile, node: str, start: float | None = None, stop: float | None = None) -> dict[str, Any]:
    """The x-y positions of the SpatialSeries at ``node`` (or the first of two or more columns in a Position or
    CompassDirection there) from ``start`` to ``stop`` (seconds; all by default)."""
    series = tree.walked_series(opened.container_at(node))
    if series is None:
        raise ViewRequestError("a path needs a SpatialSeries of two or more columns (x, y, ...)", node)
    data = series.data
    times, first, last = sample_span(series, start, stop, node, whole=True)
    picked = _picked(first, max(first, last))
    xy = _rows(data, picked, first, last)
    factor = float(series.conversion if series.conversion is not None else 1.0)
    return {
        "path": node,
        "series": opened.path_of(series),
        "unit": series.unit,
        "samples": len(times),
        "extent": json_floats(times.at(np.array([0, len(times) - 1]))) if len(times) else [None, None],
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


def events(opened: ViewedFile, node: str, start: float | None = None, stop: float | None = None) -> dict[str, Any]:
    """The times of the events of each TimeSeries of the BehavioralEvents at ``node`` (or of the TimeSeries
    there), or of the EventsTable there, from ``start`` to ``stop``, one line of ticks each."""
    from pynwb import TimeSeries
    from pynwb.behavior import BehavioralEvents
    from pynwb.event import EventsTable

    container = opened.container_at(node)
    if isinstance(container, EventsTable):
        return {"path": node, "series": 1, "lines": [_table_ticks(opened, container, start, stop, node)]}
    if isinstance(container, BehavioralEvents):
        members = [s for _, s in sorted(container.time_series.items())]
    elif isinstance(container, TimeSeries):
        members = [container]
    else:
        raise ViewRequestError(f"ticks are drawn for BehavioralEvents, not a {type(container).__name__}", node)
    lines = []
    for series in members[:EVENT_LINES]:
        times, first, last = sample_span(series, start, stop, node, whole=True)
        shown = min(last, first + EVENT_TICKS)
        ticks = times.block(first, shown) if shown > first else np.empty(0)
        lines.append(
            {"name": series.name, "path": opened.path_of(series), "count": last - first, "t": json_floats(ticks)}
        )
    return {"path": node, "series": len(members), "lines": lines}


def _table_ticks(opened: ViewedFile, table: Any, start: float | None, stop: float | None, node: str) -> dict:
    """An EventsTable's ``timestamp`` column (read whole, within the budget) in the window, in time order."""
    finite_times(node, start=start, stop=stop)
    column = table["timestamp"].data
    rows = len(table.id.data)
    budget.check_read(column, rows, node, "timestamps")
    times = np.asarray(column[:rows], dtype=np.float64)
    inside = np.isfinite(times) & (times >= (-np.inf if start is None else start))
    inside &= times <= (np.inf if stop is None else stop)
    found = np.sort(times[inside])
    return {
        "name": table.name,
        "path": opened.path_of(table),
        "count": len(found),
        "t": json_floats(found[:EVENT_TICKS]),
    }
