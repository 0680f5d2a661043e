"""A window of a TimeSeries, decimated for a plot of a given width, as plain data.

The time axis comes from the series' timestamps (searched lazily, one value per probe) or from its rate and
starting time; values are multiplied by ``conversion`` (and an ElectricalSeries' ``channel_conversion``)
and shifted by ``offset``, so they are in ``unit``. A window of at most two samples per pixel column is
sent as it is; a longer one as the minimum and maximum of each pixel column, so a plot never gets more
than ``2 * width`` points per channel. The window is read in tiles of whole chunks (only the chunk columns
holding a chosen channel; each chunk decoded once; :data:`BLOCK_VALUES` values at a time). The min/max are
exact when the chunks of the window take at most :data:`DECODE_BYTES` to decode, or when the window has
no more chunk rows than a sampled window would read; beyond, the window is cut into as many bins as that
budget decodes one chunk row for (from :data:`MIN_RUNS` to ``width``), each summarised from the samples of
one chunk row inside it (``decimation: minmax-sampled``): a window over an hour of a 384-channel
recording reads a bounded number of chunks, not the hour.
"""

from __future__ import annotations

import bisect
import math
import numbers
from typing import Any

import numpy as np

from ..errors import ViewRequestError
from . import budget, lanes
from .viewed_file import ViewedFile

#: Pixel columns of a plot, at most (and at least).
MAX_WIDTH, MIN_WIDTH = 4000, 10
#: Channels of one window, at most.
MAX_CHANNELS = 64
#: Channels shown when none are asked for.
DEFAULT_CHANNELS = 8
#: Time bins of a minimap, at most, and the channels it shows, at most (one row each).
MINIMAP_BINS, MINIMAP_CHANNELS = 400, 4096
#: Bytes of chunks one window may decode for an exact min/max per pixel column; beyond, runs are sampled.
DECODE_BYTES = 256 * 1024 * 1024
#: Bins of a sampled window, at least (a window of fewer chunk rows is read whole instead).
MIN_RUNS = 100
#: Values read at once, at most, unless one chunk holds more (bounds the memory of one window).
BLOCK_VALUES = 4_000_000
#: Samples of the window shown when no window is asked for.
DEFAULT_SAMPLES = 100_000


class SampleTimes:
    """The time of sample ``i`` (as a sequence ``bisect`` can search): ``timestamps[i]`` or
    ``starting_time + i / rate``."""

    #: Chunks of timestamps kept (a search probes a few values in each).
    KEPT = 4

    def __init__(self, series: Any, length: int):
        self.timestamps = series.timestamps
        self.rate = float(series.rate) if series.rate is not None else None
        self.start = float(series.starting_time or 0.0)
        self.length = length
        chunks = getattr(self.timestamps, "chunks", None)
        self.chunk = min(BLOCK_VALUES, max(1, int(chunks[0]))) if chunks else 1
        self.kept: dict[int, np.ndarray] = {}

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, i: int) -> float:
        if self.timestamps is None:
            assert self.rate is not None
            return self.start + i / self.rate
        # the whole chunk holding ``i`` is decoded anyway: keep it for the next probes of the search
        first = (i // self.chunk) * self.chunk
        block = self.kept.get(first)
        if block is None:
            block = np.asarray(self.timestamps[first : min(self.length, first + self.chunk)], dtype=np.float64)
            if len(self.kept) >= self.KEPT:
                self.kept.pop(next(iter(self.kept)))
            self.kept[first] = block
        return float(block[i - first])

    def at(self, indices: np.ndarray) -> np.ndarray:
        """The times of the increasing sample ``indices`` (timestamps read once per block of them)."""
        if self.timestamps is None:
            assert self.rate is not None
            return self.start + indices / self.rate
        if len(indices) == 0:
            return np.empty(0)
        lo, hi = int(indices[0]), int(indices[-1]) + 1
        if hi - lo <= BLOCK_VALUES:  # one read of the span
            return self.block(lo, hi)[indices - lo]
        return np.array([self[int(i)] for i in indices], dtype=np.float64)  # far apart: one read each

    def block(self, lo: int, hi: int) -> np.ndarray:
        if self.timestamps is None:
            return self.at(np.arange(lo, hi))
        return np.asarray(self.timestamps[lo:hi], dtype=np.float64)


def window(
    opened: ViewedFile,
    path: str,
    start: float | None = None,
    stop: float | None = None,
    channels: list[int] | None = None,
    width: int = 1000,
) -> dict[str, Any]:
    """Samples of the TimeSeries at ``path`` from time ``start`` to ``stop`` (seconds; the whole series'
    first :data:`DEFAULT_SAMPLES` by default) of ``channels``, decimated for ``width`` pixel columns."""
    series = _plotted(opened, path)
    data = series.data
    width = min(max(int(width), MIN_WIDTH), MAX_WIDTH)
    count = int(data.shape[1]) if data.ndim == 2 else 1
    chosen = _channels(channels, count, path)
    times, first, last = sample_span(series, start, stop, path)
    total = len(times)
    out: dict[str, Any] = {
        "path": path,
        "unit": series.unit,
        "samples": total,
        "channel_count": count,
        "extent": json_floats(np.array([times[0], times[total - 1]])) if total else [0.0, 0.0],
        "first": first,
        "last": last,
        "channels": chosen,
        "width": width,
    }
    tiles = _Tiles(data, chosen)
    low, high, t, out["decimation"] = _decimated(data, tiles, times, (first, last), width, len(chosen))
    scale, shift = _scaling(series, chosen)
    out["t"] = json_floats(np.asarray(t, dtype=np.float64))
    shown = [v for v in out["t"] if v is not None]
    out["intervals"] = lanes.interval_bands(opened, shown[0], shown[-1]) if shown else []
    order, labels = lanes.electrode_lanes(series, chosen, path)  # top to bottom as on the probe, when known
    out["channels"] = [chosen[i] for i in order]
    out["labels"] = None if labels is None else [labels[i] for i in order]
    out["min"] = [json_floats(low[:, i] * scale[i] + shift) for i in order]
    out["max"] = [json_floats(high[:, i] * scale[i] + shift) for i in order]
    return out


def minimap(
    opened: ViewedFile, path: str, start: float | None = None, stop: float | None = None, bins: int = 160
) -> dict[str, Any]:
    """Every channel's peak-to-peak amplitude (in ``unit``) in ``bins`` time bins of the window ``start``–
    ``stop`` (as :func:`window`'s), one row per channel in the lanes' order (deepest first): the probe at a
    glance, on which the page chooses the channels it plots (at most :data:`MAX_CHANNELS`)."""
    series = _plotted(opened, path)
    data = series.data
    count = int(data.shape[1]) if data.ndim == 2 else 1
    if count > MINIMAP_CHANNELS:
        raise ViewRequestError(f"{count} channels: a minimap shows at most {MINIMAP_CHANNELS}", path)
    bins = min(max(int(bins), 1), MINIMAP_BINS)
    times, first, last = sample_span(series, start, stop, path)
    chosen = list(range(count))
    low, high, t, decimation = _decimated(data, _Tiles(data, chosen), times, (first, last), bins, count)
    if decimation == "none" and len(low):  # every sample came: binned here
        edges = np.unique((np.arange(min(bins, len(low)) + 1) * len(low)) // min(bins, len(low)))
        t = np.asarray(t)[edges[:-1]]
        low, high = np.fmin.reduceat(low, edges[:-1], axis=0), np.fmax.reduceat(high, edges[:-1], axis=0)
    scale, _ = _scaling(series, chosen)
    spread = (high - low) * np.abs(scale)
    order, labels = lanes.electrode_lanes(series, chosen, path)
    return {
        "path": path,
        "unit": series.unit,
        "channel_count": count,
        "first": first,
        "last": last,
        "decimation": decimation,
        "t": json_floats(np.asarray(t, dtype=np.float64)),
        "channels": order,
        "labels": None if labels is None else [labels[i] for i in order],
        "spread": [json_floats(spread[:, i]) for i in order],
    }


def sample_span(
    series: Any, start: float | None, stop: float | None, path: str, whole: bool = False
) -> tuple[SampleTimes, int, int]:
    """The series' sample times and the samples ``first:last`` from time ``start`` to ``stop`` (when ``start``
    is not given: from the first sample; when ``stop`` is not given: :data:`DEFAULT_SAMPLES` of them, or all
    with ``whole``), once its times are known to place samples and its chunks are within the budget."""
    finite_times(path, start=start, stop=stop)
    check_timing(series, path)
    total = int(series.data.shape[0]) if hasattr(series.data, "shape") else len(series.data)
    if series.timestamps is not None:  # samples past the last timestamp have no time: not shown
        total = min(total, len(series.timestamps))
    times = SampleTimes(series, total)
    first = 0 if start is None else bisect.bisect_left(times, float(start))
    if stop is None:
        last = total if whole else min(total, first + DEFAULT_SAMPLES)
    else:
        last = bisect.bisect_right(times, float(stop))
    return times, first, max(last, first)


def finite_times(path: str, **times: float | None) -> None:
    """Refuse a time asked for (``start=...``, ``stop=...``) that is NaN or infinite."""
    for name, value in times.items():
        if value is not None and not np.isfinite(value):
            raise ViewRequestError(f"{name}={value} is not a finite time", path)


def check_timing(series: Any, path: str) -> None:
    """Refuse a series whose samples have no time (no timestamps, and no positive finite rate), or whose data or
    timestamps have a chunk past the budget (before any is decoded)."""
    if series.timestamps is None and series.rate is None:
        raise ViewRequestError("the series has neither timestamps nor a rate", path)
    if series.timestamps is None and not (isinstance(series.rate, numbers.Real) and 0 < float(series.rate) < math.inf):
        raise ViewRequestError(f"a rate of {series.rate!r} places no sample in time", path)
    for array in (series.data, series.timestamps):
        if array is not None:
            budget.check_chunks(array, path)


def _plotted(opened: ViewedFile, path: str) -> Any:
    """The TimeSeries at ``path``, once it is known to be one this view plots within its budget."""
    from pynwb import TimeSeries

    series = opened.container_at(path)
    if not isinstance(series, TimeSeries):
        raise ViewRequestError(f"a {type(series).__name__} is no TimeSeries", path)
    data = series.data
    shape = getattr(data, "shape", None)
    if shape is None or len(shape) not in (1, 2) or np.dtype(data.dtype).kind not in "biuf":
        raise ViewRequestError("only TimeSeries of numbers with one or two dimensions are plotted", path)
    check_timing(series, path)
    conversion = getattr(series, "channel_conversion", None)
    if conversion is not None:  # a chunk past the budget is refused before any is decoded
        budget.check_chunks(conversion, path)
    return series


def _channels(asked: list[int] | None, count: int, path: str) -> list[int]:
    if not asked:
        return list(range(min(count, DEFAULT_CHANNELS)))
    chosen = sorted({int(c) for c in asked})
    if len(chosen) > MAX_CHANNELS or chosen[0] < 0 or chosen[-1] >= count:
        raise ViewRequestError(f"choose up to {MAX_CHANNELS} channels among 0..{count - 1}", path)
    return chosen


def _rows(data: Any, lo: int, hi: int, columns: tuple[int, int], picks: list[int]) -> np.ndarray:
    """``data[lo:hi]`` of the columns ``picks`` (counted from ``columns[0]``; the read covers ``columns``), 2-d."""
    if hi <= lo:
        return np.empty((0, len(picks)))
    block = np.asarray(data[lo:hi] if data.ndim == 1 else data[lo:hi, columns[0] : columns[1]])
    block = block.reshape(hi - lo, -1)
    if picks == list(range(picks[0], picks[0] + len(picks))):  # neighbouring channels: a view, not a copy
        return block[:, picks[0] : picks[0] + len(picks)]
    return block[:, picks]


class _Tiles:
    """How a window is read: in tiles of whole chunks (one chunk column wide, as many chunk rows as fit in
    :data:`BLOCK_VALUES`), only the chunk columns holding a chosen channel, each chunk decoded once."""

    def __init__(self, data: Any, chosen: list[int]):
        chunks = tuple(int(n) for n in (getattr(data, "chunks", None) or data.shape))
        self.rows = max(1, chunks[0])
        self.cols = max(1, chunks[1]) if data.ndim == 2 else 1
        self.chunk_bytes = self.rows * self.cols * np.dtype(data.dtype).itemsize
        self.tile_rows = self.rows * max(1, BLOCK_VALUES // (self.rows * self.cols))
        groups: dict[int, list[int]] = {}
        for position, channel in enumerate(chosen):
            groups.setdefault(channel // self.cols, []).append(position)
        # (first column, last column + 1), the positions of its channels in ``chosen``, their columns in it
        self.groups = [
            ((j * self.cols, (j + 1) * self.cols), where, [chosen[p] - j * self.cols for p in where])
            for j, where in sorted(groups.items())
        ]

    def run_bytes(self) -> int:
        """Bytes decoded to read one chunk row of the chosen channels."""
        return len(self.groups) * self.chunk_bytes

    def chunk_rows_between(self, lo: int, hi: int) -> int:
        return (hi - 1) // self.rows - lo // self.rows + 1 if hi > lo else 0

    def read(self, data: Any, lo: int, hi: int) -> Any:
        """``(r0, r1, positions, block)`` for every tile of rows ``lo:hi``."""
        for (c0, c1), where, picks in self.groups:
            if data.ndim == 2:
                c1 = min(c1, int(data.shape[1]))
            r0 = lo
            while r0 < hi:
                r1 = min(hi, (r0 // self.tile_rows + 1) * self.tile_rows)
                yield r0, r1, where, _rows(data, r0, r1, (c0, c1), picks)
                r0 = r1


def _all_rows(tiles: _Tiles, data: Any, lo: int, hi: int, count: int) -> np.ndarray:
    """Every sample of rows ``lo:hi`` of the chosen channels."""
    out = np.full((hi - lo, count), np.nan)
    for r0, r1, where, block in tiles.read(data, lo, hi):
        out[r0 - lo : r1 - lo, where] = block
    return out


def _exact(data: Any, tiles: _Tiles, edges: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Min and max of every pixel column (bins between ``edges``) over all the window's samples."""
    bins = len(edges) - 1
    low = np.full((bins, count), np.inf)
    high = np.full((bins, count), -np.inf)
    for r0, r1, where, block in tiles.read(data, int(edges[0]), int(edges[-1])):
        k0 = int(np.searchsorted(edges, r0, side="right")) - 1
        k1 = int(np.searchsorted(edges, r1 - 1, side="right"))
        offsets = np.maximum(edges[k0:k1], r0) - r0
        low[k0:k1, where] = np.fmin(low[k0:k1, where], np.fmin.reduceat(block, offsets, axis=0))
        high[k0:k1, where] = np.fmax(high[k0:k1, where], np.fmax.reduceat(block, offsets, axis=0))
    return low, high


def _sampled(data: Any, tiles: _Tiles, edges: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Min and max of one run of samples per bin, each within one chunk row (a chunk boundary inside the
    bin if there is one), so each bin decodes one chunk per chosen chunk column."""
    bins = len(edges) - 1
    low = np.full((bins, count), np.inf)
    high = np.full((bins, count), -np.inf)
    for k in range(bins):
        lo, hi = int(edges[k]), int(edges[k + 1])
        boundary = -(-lo // tiles.rows) * tiles.rows
        lo = boundary if boundary < hi else lo
        hi = min(hi, (lo // tiles.rows + 1) * tiles.rows)
        for _, _, where, block in tiles.read(data, lo, hi):
            low[k, where] = np.fmin(low[k, where], np.fmin.reduce(block, axis=0))
            high[k, where] = np.fmax(high[k, where], np.fmax.reduce(block, axis=0))
    return low, high


def _decimated(
    data: Any, tiles: _Tiles, times: SampleTimes, rows: tuple[int, int], width: int, count: int
) -> tuple[np.ndarray, np.ndarray, Any, str]:
    """The low and high values of ``count`` channels, their times and the decimation used for ``rows``
    (first, last) of ``data`` in ``width`` pixel columns: every row if few, else the exact min and max of each
    column if every chunk touched may be decoded within the budget, else sampled runs."""
    first, last = rows
    chunk_rows = tiles.chunk_rows_between(first, last)
    # the chunks read are bounded too: a window over 2**27 one-row chunks is sampled, not read chunk by chunk
    whole = chunk_rows * len(tiles.groups) <= budget.REQUEST_CHUNKS
    if last - first <= 2 * width and whole:
        low = high = _all_rows(tiles, data, first, last, count)
        return low, high, times.block(first, last), "none"
    limit = max(1, budget.REQUEST_CHUNKS // len(tiles.groups))
    runs = max(1, min(max(MIN_RUNS, min(width, DECODE_BYTES // tiles.run_bytes())), limit, last - first))
    if whole and (chunk_rows * tiles.run_bytes() <= DECODE_BYTES or chunk_rows <= runs):
        edges = first + (np.arange(width + 1, dtype=np.int64) * (last - first)) // width
        low, high = _exact(data, tiles, edges, count)
        return low, high, times.at(edges[:-1]), "minmax"
    edges = first + (np.arange(runs + 1, dtype=np.int64) * (last - first)) // runs
    low, high = _sampled(data, tiles, edges, count)
    return low, high, times.at(edges[:-1]), "minmax-sampled"


def _scaling(series: Any, chosen: list[int]) -> tuple[np.ndarray, float]:
    """The factor of every chosen channel (conversion, times channel_conversion if any) and the offset."""
    factor = np.full(len(chosen), float(series.conversion if series.conversion is not None else 1.0))
    per_channel = getattr(series, "channel_conversion", None)
    if per_channel is not None:  # the chosen channels' factors only (the file may declare 2**28 of them)
        known = [c for c in chosen if c < len(per_channel)]
        values = np.ones(len(chosen))
        if known:
            values[: len(known)] = np.asarray(per_channel[known], dtype=np.float64)
        factor *= values
    return factor, float(getattr(series, "offset", 0.0) or 0.0)


def json_floats(values: np.ndarray) -> list[float | None]:
    """Numbers for JSON (NaN and infinities, which JSON lacks, as ``null``)."""
    values = np.asarray(values, dtype=np.float64)
    if np.isfinite(values).all():  # (the common case, without a Python test per value)
        return values.tolist()
    return [v if math.isfinite(v) else None for v in values.tolist()]
