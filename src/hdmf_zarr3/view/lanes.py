"""What a plotted window is drawn with besides its values (issue #41, point 2): each channel's name from its
electrode, and the file's intervals (trials, epochs...) the window overlaps, as bands.

Only small things are read: the electrode rows of the chosen channels (their index in the series' electrodes
region, then their id, group, location and depth: each column once for all of them), and an interval table's
start and stop times when it has at most :data:`BAND_ROWS` rows (a larger table is named, its bands left out).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import HdmfZarrError
from . import budget
from .viewed_file import ViewedFile

#: Rows an interval table may have for its bands to be drawn (its start and stop times are read whole).
BAND_ROWS = 100_000
#: Bands of one table sent with a window, at most (the first ones in time).
WINDOW_BANDS = 2_000


#: Electrode columns giving a channel's depth, in the order they are looked for (along the probe first).
DEPTH_COLUMNS = ("rel_y", "y")
#: Rows of an electrodes column read at once for a window's channels (the span between the first and last
#: channel's rows); a wider span is read row by row.
SPAN_ROWS = 65_536


def electrode_lanes(series: Any, chosen: list[int], path: str) -> tuple[list[int], list[str] | None]:
    """The chosen channels' lanes from their electrodes (an ElectricalSeries' region): the positions in
    ``chosen`` top to bottom (:func:`_by_depth`) and each channel's ``e<id> <group> <location>``; as they
    are, and ``None``, when the series names no electrodes. Each column is read once for all channels (a
    probe of 384 channels costs a few reads, not a few per channel)."""
    unchanged = list(range(len(chosen)))
    region = getattr(series, "electrodes", None)
    table = getattr(region, "table", None)
    if region is None or table is None:
        return unchanged, None
    try:
        rows = [int(r) for r in _cells(region.data, chosen, path)]
        labels = _labels(table, rows, path)
    except (HdmfZarrError, IndexError, TypeError, ValueError, KeyError):  # a region that names no row: numbers
        return unchanged, None
    return _by_depth(table, rows, path), labels


def _by_depth(table: Any, rows: list[int], path: str) -> list[int]:
    """The positions of ``rows`` ordered by their electrode's depth (:data:`DEPTH_COLUMNS`; the deepest, the
    largest value, first, as on a probe), or as they are when the electrodes give no depth."""
    unchanged = list(range(len(rows)))
    column = next((c for c in DEPTH_COLUMNS if c in table.colnames), None)
    if column is None:
        return unchanged
    try:
        depths = [float(d) for d in _cells(table[column].data, rows, path)]
    except (HdmfZarrError, IndexError, TypeError, ValueError, KeyError):
        return unchanged
    if not all(np.isfinite(depths)) or len(set(depths)) == 1:
        return unchanged
    return sorted(unchanged, key=lambda i: -depths[i])


def _labels(table: Any, rows: list[int], path: str) -> list[str]:
    parts = [[f"e{i}"] for i in _cells(table.id.data, rows, path)]
    if "group_name" in table.colnames:
        names = [str(n) for n in _cells(table["group_name"].data, rows, path)]
    elif "group" in table.colnames:
        names = [str(getattr(table["group"][row], "name", "")) for row in rows]
    else:
        names = [""] * len(rows)
    locations = _cells(table["location"].data, rows, path) if "location" in table.colnames else [""] * len(rows)
    labels = zip(parts, names, locations)
    return [" ".join(p for p in [*part, name, str(place)] if p)[:40] for part, name, place in labels]


def _cells(data: Any, rows: list[int], path: str) -> list[Any]:
    """``data[row]`` for each of ``rows`` (text decoded): the span between the first and last row read once
    when it holds at most :data:`SPAN_ROWS` rows, else row by row."""
    budget.check_chunks(data, path)
    if not rows:
        return []
    lo, hi = min(rows), max(rows) + 1
    if lo < 0:
        raise IndexError(f"row {lo}")
    if hi - lo <= SPAN_ROWS:
        span = data[lo:hi]
        if len(span) < hi - lo:
            raise IndexError(f"row {hi - 1} of {lo + len(span)}")
        values = [span[row - lo] for row in rows]
    else:
        values = [data[row] for row in rows]
    return [v.decode("utf-8", "replace") if isinstance(v, bytes) else v for v in values]


def interval_bands(opened: ViewedFile, start: float, stop: float) -> list[dict[str, Any]]:
    """For each interval table of the file, its rows overlapping ``start``–``stop`` as ``[start, stop]``."""
    found = []
    for name, table in sorted((opened.nwbfile.intervals or {}).items()):
        entry: dict[str, Any] = {"name": name, "path": opened.path_of(table)}
        try:
            entry["bands"] = _bands(table, start, stop)
        except (HdmfZarrError, KeyError, TypeError, ValueError) as exc:
            entry["bands"], entry["left_out"] = [], str(exc)[:200]
        found.append(entry)
    return found


def _bands(table: Any, start: float, stop: float) -> list[list[float]]:
    if "start_time" not in table.colnames or "stop_time" not in table.colnames:
        raise KeyError("no start_time and stop_time columns")
    rows = len(table.id.data)
    if rows > BAND_ROWS:
        raise ValueError(f"{rows} rows: more than the {BAND_ROWS} drawn as bands")
    columns = [table["start_time"].data, table["stop_time"].data]
    for column in columns:
        budget.check_chunks(column, "")
    starts, stops = (np.asarray(column[:rows], dtype=np.float64) for column in columns)
    inside = np.flatnonzero((starts <= stop) & (stops >= start) & np.isfinite(starts) & np.isfinite(stops))
    inside = inside[np.argsort(starts[inside], kind="stable")][:WINDOW_BANDS]
    return [[float(starts[i]), float(stops[i])] for i in inside]
