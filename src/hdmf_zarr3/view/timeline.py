"""An interval table (trials, epochs, any ``TimeIntervals``) as a timeline (issue #41, point 4), as plain data.

Each row is a band from its ``start_time`` to its ``stop_time``, on the line of its group: the value of a
column chosen to group by (a column of one text, number or boolean per row; none: one line). The first
:data:`TIMELINE_ROWS` rows are read, each column once (one slice), within the viewer's budget; a longer table
says how many rows it has. The groups are the first :data:`GROUPS` distinct values, in order of first
appearance, the rest together as ``other``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ViewRequestError
from . import budget
from .tree import plain
from .viewed_file import ViewedFile

#: Rows of a timeline, at most (the first ones).
TIMELINE_ROWS = 20_000
#: Lines of a timeline, at most (values past them are grouped as ``other``).
GROUPS = 40


def timeline(opened: ViewedFile, path: str, group: str | None = None) -> dict[str, Any]:
    """The rows of the interval table at ``path`` as bands, on lines by the column ``group``."""
    table = _intervals(opened, path)
    total = len(table.id.data)
    rows = min(total, TIMELINE_ROWS)
    starts, stops = (_column(table, name, rows, path) for name in ("start_time", "stop_time"))
    choices = _groupable(table)
    if group is not None and group not in choices:
        raise ViewRequestError(f"group={group[:40]!r}: choose one of {', '.join(choices) or 'no column'}", path)
    lines, line_of = _lines(_column(table, group, rows, path) if group else None, rows)
    finite = np.isfinite(starts) & np.isfinite(stops)
    return {
        "path": path,
        "rows": total,
        "shown": rows,
        "group": group,
        "groupable": choices,
        "lines": lines,
        "bands": [[float(starts[i]), float(stops[i]), line_of[i]] for i in np.flatnonzero(finite)],
    }


def _intervals(opened: ViewedFile, path: str) -> Any:
    from pynwb.epoch import TimeIntervals

    table = opened.container_at(path)
    if not isinstance(table, TimeIntervals):
        raise ViewRequestError(f"a {type(table).__name__} is no interval table", path)
    return table


def _groupable(table: Any) -> list[str]:
    """The columns of one text, number or boolean per row (not ragged, not references, not arrays)."""
    names = []
    for name in table.colnames:
        column = table[name]
        data = getattr(column, "data", None)
        if name in ("start_time", "stop_time") or type(column).__name__ != "VectorData":
            continue
        if len(getattr(data, "shape", (0, 0))) == 1 and np.dtype(getattr(data, "dtype", object)).kind in "biufUSO":
            names.append(name)
    return names


def _column(table: Any, name: str, rows: int, path: str) -> np.ndarray:
    data = table[name].data
    budget.check_chunks(data, path)
    values = data[:rows]
    return np.asarray(values, dtype=np.float64) if name in ("start_time", "stop_time") else np.asarray(values)


def _lines(values: np.ndarray | None, rows: int) -> tuple[list[Any], list[int]]:
    """The lines (group values as JSON) and each row's line."""
    if values is None:
        return ["all"], [0] * rows
    lines: list[Any] = []
    index: dict[Any, int] = {}
    line_of = []
    for value in values.tolist():
        key = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        if key not in index:
            index[key] = len(lines) if len(lines) < GROUPS else GROUPS
            if len(lines) < GROUPS:
                lines.append(plain(key))
            elif len(lines) == GROUPS:
                lines.append("other")
        line_of.append(index[key])
    return lines, line_of
