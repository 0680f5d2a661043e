"""Measurements shared by every backend, parametrised by the IO class, so ours, NWBHDF5IO and
hdmf-zarr 0.14 (in its own venv, via ``_rival.py``) run the very same code.

Imports only the standard library, numpy and the sibling helper modules at import time.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _common import Timer, du, evict_tree, fsync_tree

Record = Callable[[str, Any], None]


def _recorder(results: dict[str, Any]) -> Record:
    def record(key: str, value: Any) -> None:
        results[key] = value

    return record


def ephys_write(io_cls: type, nwbfile: Any, path: str | Path, record: Record | None = None) -> dict[str, Any]:
    """Write ``nwbfile`` with ``io_cls`` and fsync every file; return the times and the size on disk.

    ``write_close`` stops when the IO closes, ``write`` after every file is fsynced.

    Parameters
    ----------
    io_cls : type
        ``NWBZarrIO`` (ours or hdmf-zarr's) or ``NWBHDF5IO``.
    nwbfile : pynwb.NWBFile
        The file to write (built beforehand, outside the timer).
    path : str or Path
        Where to write.
    record : callable, optional
        Called as ``record(key, value)`` for every result as soon as it is known.
    """
    results: dict[str, Any] = {}
    record = record or _recorder(results)
    with Timer() as t:
        with io_cls(str(path), mode="w") as io:
            io.write(nwbfile)
        record("write_close", time.perf_counter() - t.start)
        fsync_tree(path)
    record("write", t.seconds)
    record("size", du(path))
    return results


def ephys_read(
    io_cls: type,
    path: str | Path,
    windows: list[tuple[int, int]],
    channel: int,
    evict: bool,
    record: Record | None = None,
) -> dict[str, Any]:
    """Open the file and read the ElectricalSeries ``ephys``: all of it, windows of rows, one channel.

    Each read starts from a cold page cache when ``evict`` (see ``_common.evict_tree``). Results:
    ``open`` (open + ``read()``), ``full``, ``window`` (the median over ``windows``), ``channel`` in
    seconds, and for each kind ``<name>_sum``, the int64 sum of the values read (over all windows),
    to check that every backend read the same data.
    """
    results: dict[str, Any] = {}
    record = record or _recorder(results)

    def cold() -> None:
        if evict:
            evict_tree(path)

    cold()
    with Timer() as t:
        io = io_cls(str(path), mode="r")
        data = io.read().acquisition["ephys"].data
    record("open", t.seconds)
    reads = [("full", slice(None))] + [("window", slice(a, b)) for a, b in windows]
    times: dict[str, list[float]] = {}
    sums: dict[str, int] = {}
    try:
        for name, sel in [*reads, ("channel", (slice(None), channel))]:
            cold()
            with Timer() as t:
                values = data[sel]
            times.setdefault(name, []).append(t.seconds)
            sums[name] = sums.get(name, 0) + int(np.asarray(values).sum(dtype=np.int64))
            del values
            record(name, float(np.median(times[name])))
            record(name + "_sum", sums[name])
    finally:
        io.close()
    return results


def small_write_read(
    io_cls: type, nwbfile: Any, path: str | Path, evict: bool, record: Record | None = None
) -> dict[str, Any]:
    """Write ``nwbfile``, then time ``read()`` and ``read()`` + every DynamicTable ``to_dataframe()``.

    The write time stops when the IO closes (no fsync: small files are not flushed by users
    either); the files are flushed afterwards, and evicted from the page cache when ``evict``. The page
    cache is synced before each timed step, so neither pays for the writes of what came before.
    Also records the objects (``files``) and inodes (``inodes``: files and directories) of the file.
    """
    from _data import tables

    results: dict[str, Any] = {}
    record = record or _recorder(results)
    os.sync()
    with Timer() as t:
        with io_cls(str(path), mode="w") as io:
            io.write(nwbfile)
    record("write", t.seconds)
    fsync_tree(path)
    record("size", du(path))
    tree = Path(path)
    inside = list(tree.rglob("*")) if tree.is_dir() else []
    record("files", sum(1 for p in inside if p.is_file()) if tree.is_dir() else 1)
    record("inodes", len(inside) + 1 if tree.is_dir() else 1)
    if evict:
        evict_tree(path)
    os.sync()
    with Timer() as t:
        with io_cls(str(path), mode="r") as io:
            back = io.read()
            record("read", time.perf_counter() - t.start)
            record("rows", tables(back))
            record("read+tables", time.perf_counter() - t.start)
    return results


def latency_read(
    io_cls: type, path: str | Path, latency: float, record: Record | None = None, repeat: int = 1
) -> dict[str, Any]:
    """Open + ``read()`` + every table of ``path`` through a ``LatencyStore``; times, request counts and
    rounds of requests; and, for the target, open + ``read()`` of the same file from the local disk.
    Times are the best of ``repeat`` runs (each reads both ways)."""
    from _data import tables
    from _latency_store import LatencyStore
    from zarr.storage import LocalStore

    results: dict[str, Any] = {}
    record = record or _recorder(results)
    best: dict[str, float] = {}

    def keep(key: str, seconds: float) -> None:
        best[key] = min(seconds, best.get(key, seconds))
        record(key, best[key])

    for _ in range(repeat):
        with Timer() as t:  # the file was read just before (part b): its pages are cached, as they are below
            with io_cls(str(path), mode="r") as io:
                io.read()
                keep("local_read", time.perf_counter() - t.start)
        store = LatencyStore(LocalStore(str(path), read_only=True), latency=latency)
        with Timer() as t:
            with io_cls(store, mode="r") as io:
                back = io.read()
                keep("read", time.perf_counter() - t.start)
                record("read_requests", dict(store.counts))
                record("read_rounds", store.rounds.rounds)
                record("rows", tables(back))
                keep("read+tables", time.perf_counter() - t.start)
                record("requests", dict(store.counts))
                record("rounds", store.rounds.rounds)
    return results


def http_hdf5_read(path: str | Path, latency: float, record: Record | None = None) -> dict[str, Any]:
    """:func:`latency_read` for an HDF5 file, read by ``NWBHDF5IO`` over HTTP range requests (h5py on
    fsspec's ``HTTPFileSystem`` with its default read-ahead cache) from a local server adding ``latency``
    to every request (:mod:`_http_range`)."""
    import fsspec
    import h5py
    from _data import tables
    from _http_range import serving
    from pynwb import NWBHDF5IO

    results: dict[str, Any] = {}
    record = record or _recorder(results)
    path = Path(path)
    with Timer() as t:
        with NWBHDF5IO(str(path), mode="r") as io:
            io.read()
            record("local_read", time.perf_counter() - t.start)
    with serving(path.parent, latency) as server:
        fs = fsspec.filesystem("http", skip_instance_cache=True)
        with Timer() as t:
            with fs.open(server.url(path.name), "rb") as f, h5py.File(f, "r") as h5, NWBHDF5IO(file=h5) as io:
                back = io.read()
                record("read", time.perf_counter() - t.start)
                record("read_requests", dict(server.counts))
                record("read_rounds", server.rounds.rounds)
                record("rows", tables(back))
                record("read+tables", time.perf_counter() - t.start)
                record("requests", dict(server.counts))
                record("rounds", server.rounds.rounds)
                record("block_size", getattr(f, "blocksize", None))
    return results
