"""A Units table's spikes (issue #41, point 3), as plain data: a raster of every unit over a time window, in the
order of any unit column, and a PSTH with its trial-aligned raster for chosen units against a time column of an
interval table, grouped by one of its columns.

The spike times are read whole, once per request: the ``spike_times`` column and its index, within
:data:`SPIKE_VALUES` values (a file of more spikes is refused by name); a raster sends at most
:data:`RASTER_SPIKES` spikes (the window is narrowed to the first ones when it holds more, and says so).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ViewRequestError
from . import budget, lanes
from .series import json_floats
from .tree import plain
from .viewed_file import ViewedFile

#: Spike times a request may read (the column is read whole: 8 bytes each).
SPIKE_VALUES = 8_000_000
#: Spikes one raster sends, at most.
RASTER_SPIKES = 200_000
#: Units one raster shows, at most (the first ones in the chosen order).
RASTER_UNITS = 1_000
#: Units of one PSTH, at most; trials aligned to, at most; bins, at most.
PSTH_UNITS, PSTH_TRIALS, PSTH_BINS = 16, 10_000, 400
#: The raster's sort by the depth of each unit's first electrode (the electrodes' ``rel_y``, else ``y``), offered
#: when the units name electrodes that give one, the deepest first as the lanes of a recording.
ELECTRODE_DEPTH = "electrode depth"


def _units(opened: ViewedFile, path: str) -> tuple[Any, np.ndarray, np.ndarray]:
    """The Units table at ``path``, its spike times and the end of each unit's spikes in them."""
    from pynwb.misc import Units

    units = opened.container_at(path)
    if not isinstance(units, Units) or "spike_times" not in units.colnames:
        raise ViewRequestError("a raster needs a Units table with spike times", path)
    index_column = getattr(units, "spike_times_index", None)
    if index_column is None:
        raise ViewRequestError("a raster needs spike times with their index (a ragged column)", path)
    times, index = index_column.target.data, index_column.data
    for array in (times, index):
        budget.check_chunks(array, path)
    if len(times) > SPIKE_VALUES:
        raise ViewRequestError(f"{len(times)} spike times: more than the {SPIKE_VALUES} read at once", path, status=413)
    return units, np.asarray(times[:], dtype=np.float64), np.asarray(index[:], dtype=np.int64)


def raster(opened: ViewedFile, path: str, start: float | None, stop: float | None, sort: str | None) -> dict[str, Any]:
    """Each unit's spikes from ``start`` to ``stop`` (the first 10 s by default), units in the order of ``sort``."""
    units, times, ends = _units(opened, path)
    order = _order(units, sort, len(ends), path)[:RASTER_UNITS]
    finite = times[np.isfinite(times)]
    first = float(start) if start is not None else (float(finite.min()) if finite.size else 0.0)
    last = float(stop) if stop is not None else first + 10.0
    starts = np.concatenate([[0], ends[:-1]])
    budget.check_chunks(units.id.data, path)
    ids = np.asarray(units.id.data[: len(ends)])  # one read, not one per unit
    rows, sent = [], 0
    for unit in order:
        mine = times[starts[unit] : ends[unit]]
        shown = mine[(mine >= first) & (mine <= last)][: max(0, RASTER_SPIKES - sent)]
        sent += len(shown)
        rows.append({"row": int(unit), "id": int(ids[unit]), "times": [round(float(t), 6) for t in shown]})
    return {
        "path": path,
        "start": first,
        "stop": last,
        "units": len(ends),
        "sort": sort,
        "rows": rows,
        "capped": sent >= RASTER_SPIKES,
        "sortable": _sortable(units),
        "waveforms": "waveform_mean" in units.colnames,
    }


def _sortable(units: Any) -> list[str]:
    names = [
        name
        for name in units.colnames
        if type(units[name]).__name__ == "VectorData" and len(getattr(units[name].data, "shape", (0, 0))) == 1
    ]
    return names + ([ELECTRODE_DEPTH] if _depth_source(units) is not None else [])


def _depth_source(units: Any) -> tuple[Any, Any, Any] | None:
    """The units' electrodes column (its index and region) and the electrodes' depth column, when both exist."""
    if "electrodes" not in units.colnames or type(units["electrodes"]).__name__ != "VectorIndex":
        return None
    region = units["electrodes"].target
    table: Any = getattr(region, "table", None)
    if table is None:
        return None
    column = next((c for c in lanes.DEPTH_COLUMNS if c in table.colnames), None)
    return None if column is None else (units["electrodes"].data, region.data, table[column].data)


def _order(units: Any, sort: str | None, count: int, path: str) -> np.ndarray:
    if sort is None:
        return np.arange(count)
    if sort not in _sortable(units):
        raise ViewRequestError(f"sort={sort[:40]!r}: choose one of {', '.join(_sortable(units))}", path)
    if sort == ELECTRODE_DEPTH:
        depths = -_electrode_depths(units, count, path)  # the deepest first, as the lanes of a recording
        return np.argsort(np.where(np.isnan(depths), np.inf, depths), kind="stable").astype(np.int64)
    column = units[sort].data
    budget.check_chunks(column, path)
    values = np.asarray(column[:count])
    keys = [(v.decode() if isinstance(v, bytes) else v) for v in values.tolist()]
    return np.array(sorted(range(count), key=lambda i: (str(type(keys[i])), keys[i])), dtype=np.int64)


def _electrode_depths(units: Any, count: int, path: str) -> np.ndarray:
    """The depth of each unit's first electrode (NaN for a unit without one): three columns, each read once."""
    ends_column, rows_column, depth_column = _depth_source(units)  # type: ignore[misc]
    budget.check_read(ends_column, count, path, "the units' electrodes")
    ends = np.asarray(ends_column[:count], dtype=np.int64)
    budget.check_read(rows_column, len(rows_column), path, "the units' electrodes")
    rows = np.asarray(rows_column[:], dtype=np.int64)
    budget.check_read(depth_column, len(depth_column), path, "the electrodes' depths")
    depths = np.asarray(depth_column[:], dtype=np.float64)
    starts = np.concatenate([[0], ends[:-1]])
    found = np.full(count, np.nan)
    listed = np.flatnonzero((ends > starts) & (starts < len(rows)))  # units naming an electrode
    first = rows[starts[listed]]
    known = (first >= 0) & (first < len(depths))
    found[listed[known]] = depths[first[known]]
    return found


def psth(opened: ViewedFile, path: str, chosen: list[int], align: str, **window: Any) -> dict[str, Any]:
    """The PSTH (spikes/s per bin, mean over trials) and trial-aligned raster of the ``chosen`` units, aligned to
    the time column ``window["column"]`` of the interval table ``align``, lines by ``window["group"]``."""
    units, times, ends = _units(opened, path)
    if not chosen or len(chosen) > PSTH_UNITS or min(chosen) < 0 or max(chosen) >= len(ends):
        raise ViewRequestError(f"choose 1 to {PSTH_UNITS} units among rows 0..{len(ends) - 1}", path)
    before, after, bins = float(window["before"]), float(window["after"]), int(window["bins"])
    if not (0 <= before and 0 < after and 0 < bins <= PSTH_BINS and before + after <= 3600):
        raise ViewRequestError(f"before >= 0, after > 0 (s, together an hour at most), 1 to {PSTH_BINS} bins", path)
    events, groups = _events(opened, align, window.get("column") or "start_time", window.get("group"))
    edges = np.linspace(-before, after, bins + 1)
    starts = np.concatenate([[0], ends[:-1]])
    out = []
    for unit in chosen:
        mine = np.sort(times[starts[unit] : ends[unit]])
        aligned = [
            mine[np.searchsorted(mine, t - before) : np.searchsorted(mine, t + after, "right")] - t for t in events
        ]
        curves = {}
        for name in dict.fromkeys(groups):
            picked = [a for a, g in zip(aligned, groups) if g == name]
            counts = np.histogram(np.concatenate(picked) if picked else [], bins=edges)[0]
            curves[str(name)] = [float(c) / (len(picked) * (edges[1] - edges[0])) for c in counts]
        trials = [[round(float(t), 5) for t in a[:500]] for a in aligned[:500]]
        out.append({"row": unit, "id": int(units.id.data[unit]), "rates": curves, "trials": trials})
    return {
        "path": path,
        "align": align,
        "edges": edges.tolist(),
        "events": len(events),
        "units": out,
        "groups": [plain(g) for g in dict.fromkeys(groups)],
    }


def _events(opened: ViewedFile, align: str, column: str, group: str | None) -> tuple[np.ndarray, list[Any]]:
    """The times of ``column`` of the interval table at ``align`` and each row's value of ``group``."""
    from pynwb.epoch import TimeIntervals

    table = opened.container_at(align)
    if not isinstance(table, TimeIntervals) or column not in table.colnames:
        raise ViewRequestError(f"align to a time column of an interval table (no {column!r} here)", align)
    rows = min(len(table.id.data), PSTH_TRIALS)
    data = table[column].data
    budget.check_chunks(data, align)
    events = np.asarray(data[:rows], dtype=np.float64)
    kept = np.flatnonzero(np.isfinite(events))  # a trial without a time is left out
    if group is None:
        return events[kept], ["all"] * len(kept)
    if group not in table.colnames or type(table[group]).__name__ != "VectorData":
        raise ViewRequestError(f"group={group[:40]!r}: the table has no such column of one value per row", align)
    budget.check_chunks(table[group].data, align)
    values = [v.decode() if isinstance(v, bytes) else v for v in np.asarray(table[group].data[:rows]).tolist()]
    return events[kept], [values[i] for i in kept]


#: Channels of a mean waveform sent, at most (the first ones).
WAVEFORM_CHANNELS = 64


def waveforms(opened: ViewedFile, path: str, chosen: list[int]) -> dict[str, Any]:
    """The ``waveform_mean`` of the ``chosen`` units: per unit, per channel (at most :data:`WAVEFORM_CHANNELS`), its
    samples, with the waveforms' sampling rate and unit."""
    from pynwb.misc import Units

    units = opened.container_at(path)
    if not isinstance(units, Units) or "waveform_mean" not in units.colnames:
        raise ViewRequestError("the units have no waveform_mean column", path)
    data = units["waveform_mean"].data
    budget.check_chunks(data, path)
    shape = tuple(int(n) for n in data.shape)
    if not chosen or len(chosen) > PSTH_UNITS or min(chosen) < 0 or max(chosen) >= shape[0] or len(shape) not in (2, 3):
        raise ViewRequestError(f"choose 1 to {PSTH_UNITS} units among rows 0..{shape[0] - 1} (2-d or 3-d means)", path)
    out = []
    for unit in chosen:
        values = np.asarray(data[unit] if len(shape) == 2 else data[unit, :, :WAVEFORM_CHANNELS], dtype=np.float64)
        columns = values.reshape(values.shape[0], -1).T  # channels x samples
        out.append({"row": unit, "id": int(units.id.data[unit]), "channels": [json_floats(c) for c in columns]})
    rate = getattr(units, "waveform_rate", None)
    return {
        "path": path,
        "rate": float(rate) if rate else None,
        "unit": getattr(units, "waveform_unit", None),
        "channels": shape[2] if len(shape) == 3 else 1,
        "units": out,
    }
