"""A window of a TimeSeries, decimated for a plot of a given width, as plain data.

The time axis comes from the series' timestamps (searched lazily, one value per probe) or from its rate and
starting time; values are multiplied by ``conversion`` (and an ElectricalSeries' ``channel_conversion``)
and shifted by ``offset``, so they are in ``unit``. A window of at most two samples per pixel column is
sent as it is; a longer one as the minimum and maximum of each pixel column, so a plot never gets more
than ``2 * width`` points per channel. Those are exact when the window holds at most
:data:`EXACT_VALUES` values (read block by block, :data:`BLOCK_VALUES` at a time); beyond, each pixel
column is summarised from one chunk-long run of samples at its start (``decimation: minmax-sampled``), so
a window over an hour of a 384-channel recording reads one chunk per pixel column, not the hour.
"""

from __future__ import annotations

import bisect
from typing import Any

import numpy as np

from ..errors import ViewRequestError
from .opened import OpenedFile

#: Pixel columns of a plot, at most (and at least).
MAX_WIDTH, MIN_WIDTH = 4000, 10
#: Channels of one window, at most.
MAX_CHANNELS = 64
#: Channels shown when none are asked for.
DEFAULT_CHANNELS = 8
#: Values (samples × channels between the first and last asked) read for an exact min/max, at most.
EXACT_VALUES = 16_000_000
#: Values read at once, at most (bounds the memory of one window).
BLOCK_VALUES = 2_000_000
#: Samples of the window shown when no window is asked for.
DEFAULT_SAMPLES = 100_000


class _Times:
    """The time of sample ``i`` (as a sequence ``bisect`` can search): ``timestamps[i]`` or
    ``starting_time + i / rate``."""

    def __init__(self, series: Any, length: int):
        self.timestamps = series.timestamps
        self.rate = float(series.rate) if series.rate is not None else None
        self.start = float(series.starting_time or 0.0)
        self.length = length

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, i: int) -> float:
        if self.timestamps is not None:
            return float(self.timestamps[i])
        assert self.rate is not None
        return self.start + i / self.rate

    def many(self, indices: np.ndarray) -> np.ndarray:
        if self.timestamps is None:
            assert self.rate is not None
            return self.start + indices / self.rate
        return np.array([self[int(i)] for i in indices], dtype=np.float64)

    def block(self, lo: int, hi: int) -> np.ndarray:
        if self.timestamps is None:
            return self.many(np.arange(lo, hi))
        return np.asarray(self.timestamps[lo:hi], dtype=np.float64)


def window(
    opened: OpenedFile,
    path: str,
    start: float | None = None,
    stop: float | None = None,
    channels: list[int] | None = None,
    width: int = 1000,
) -> dict[str, Any]:
    """Samples of the TimeSeries at ``path`` from time ``start`` to ``stop`` (seconds; the whole series'
    first :data:`DEFAULT_SAMPLES` by default) of ``channels``, decimated for ``width`` pixel columns."""
    from pynwb import TimeSeries

    series = opened.container_at(path)
    if not isinstance(series, TimeSeries):
        raise ViewRequestError(f"a {type(series).__name__} is no TimeSeries", path)
    data = series.data
    shape = getattr(data, "shape", None)
    if shape is None or len(shape) not in (1, 2) or np.dtype(data.dtype).kind not in "biuf":
        raise ViewRequestError("only TimeSeries of numbers with one or two dimensions are plotted", path)
    if series.timestamps is None and series.rate is None:
        raise ViewRequestError("the series has neither timestamps nor a rate", path)
    width = min(max(int(width), MIN_WIDTH), MAX_WIDTH)
    total = int(shape[0])
    count = int(shape[1]) if len(shape) == 2 else 1
    chosen = _channels(channels, count, path)
    times = _Times(series, total)
    first = 0 if start is None else bisect.bisect_left(times, float(start))
    last = min(total, first + DEFAULT_SAMPLES) if stop is None else bisect.bisect_right(times, float(stop))
    last = max(last, first)
    out: dict[str, Any] = {
        "path": path,
        "unit": series.unit,
        "samples": total,
        "channel_count": count,
        "extent": [times[0], times[total - 1]] if total else [0.0, 0.0],
        "first": first,
        "last": last,
        "channels": chosen,
        "width": width,
    }
    span = (min(chosen), max(chosen) + 1)
    picks = [c - span[0] for c in chosen]
    if last - first <= 2 * width:
        block = _rows(data, first, last, span, picks)
        t = times.block(first, last)
        low = high = block
        out["decimation"] = "none"
    else:
        edges = first + (np.arange(width + 1, dtype=np.int64) * (last - first)) // width
        if (last - first) * (span[1] - span[0]) <= EXACT_VALUES:
            t, low, high = _exact(data, times, edges, span, picks)
            out["decimation"] = "minmax"
        else:
            t, low, high = _sampled(data, times, edges, span, picks)
            out["decimation"] = "minmax-sampled"
    scale, shift = _scaling(series, chosen)
    out["t"] = _floats(np.asarray(t, dtype=np.float64))
    out["min"] = [_floats(low[:, i] * scale[i] + shift) for i in range(len(chosen))]
    out["max"] = [_floats(high[:, i] * scale[i] + shift) for i in range(len(chosen))]
    return out


def _channels(asked: list[int] | None, count: int, path: str) -> list[int]:
    if not asked:
        return list(range(min(count, DEFAULT_CHANNELS)))
    chosen = sorted({int(c) for c in asked})
    if len(chosen) > MAX_CHANNELS or chosen[0] < 0 or chosen[-1] >= count:
        raise ViewRequestError(f"choose up to {MAX_CHANNELS} channels among 0..{count - 1}", path)
    return chosen


def _rows(data: Any, lo: int, hi: int, span: tuple[int, int], picks: list[int]) -> np.ndarray:
    """``data[lo:hi]`` of the channels ``picks`` (of the columns ``span``), as 2-d floats."""
    if hi <= lo:
        return np.empty((0, len(picks)))
    block = np.asarray(data[lo:hi] if data.ndim == 1 else data[lo:hi, span[0] : span[1]])
    block = block.reshape(hi - lo, -1)[:, picks]
    return block.astype(np.float64, copy=False)


def _exact(
    data: Any, times: _Times, edges: np.ndarray, span: tuple[int, int], picks: list[int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Min and max of every pixel column, reading whole bins in blocks of at most :data:`BLOCK_VALUES`."""
    per_block = max(1, BLOCK_VALUES // (span[1] - span[0]))
    bins = len(edges) - 1
    low = np.empty((bins, len(picks)))
    high = np.empty((bins, len(picks)))
    t = np.empty(bins)
    k = 0
    while k < bins:
        end = int(np.searchsorted(edges, edges[k] + per_block, side="right")) - 1
        end = min(max(end, k + 1), bins)
        lo, hi = int(edges[k]), int(edges[end])
        block = _rows(data, lo, hi, span, picks)
        offsets = edges[k:end] - lo
        low[k:end] = np.fmin.reduceat(block, offsets, axis=0)
        high[k:end] = np.fmax.reduceat(block, offsets, axis=0)
        t[k:end] = times.block(lo, hi)[offsets] if times.timestamps is not None else times.many(edges[k:end])
        k = end
    return t, low, high


def _sampled(
    data: Any, times: _Times, edges: np.ndarray, span: tuple[int, int], picks: list[int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Min and max of one chunk-long run of samples at the start of every pixel column."""
    run = max(1, int(data.chunks[0]) if getattr(data, "chunks", None) else 1024)
    run = min(run, max(1, BLOCK_VALUES // (span[1] - span[0])))
    bins = len(edges) - 1
    low = np.empty((bins, len(picks)))
    high = np.empty((bins, len(picks)))
    for k in range(bins):
        lo, hi = int(edges[k]), int(edges[k + 1])
        aligned = -(-lo // run) * run  # the next chunk boundary: the run then touches one chunk
        lo, hi = (aligned, min(hi, aligned + run)) if aligned < hi else (lo, min(hi, aligned))
        block = _rows(data, lo, hi, span, picks)
        low[k] = np.fmin.reduce(block, axis=0)
        high[k] = np.fmax.reduce(block, axis=0)
    return times.many(edges[:-1]), low, high


def _scaling(series: Any, chosen: list[int]) -> tuple[np.ndarray, float]:
    """The factor of every chosen channel (conversion, times channel_conversion if any) and the offset."""
    factor = np.full(len(chosen), float(series.conversion if series.conversion is not None else 1.0))
    per_channel = getattr(series, "channel_conversion", None)
    if per_channel is not None:
        values = np.asarray(per_channel[:], dtype=np.float64)
        factor *= values[chosen]
    return factor, float(getattr(series, "offset", 0.0) or 0.0)


def _floats(values: np.ndarray) -> list[float | None]:
    """Numbers for JSON (NaN and infinities, which JSON lacks, as ``null``)."""
    values = np.asarray(values, dtype=np.float64)
    return [float(v) if np.isfinite(v) else None for v in values.tolist()]
