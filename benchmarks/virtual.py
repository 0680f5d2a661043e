"""Benchmark (g): an HDF5 NWB file as a virtual icechunk repository (issue #20).

The ephys recording of part (a) is written by ``NWBHDF5IO`` with gzip level 4 in NeuroConv's chunks
(78125 x 64), then converted twice: in full (``convert(src, "full.nwb.zarr")``, every byte re-encoded) and
virtually (``convert(src, "virtual.icechunk", virtual=True)``, the bulk read in place). Then a 1 s window
across all channels and one whole channel are read from the virtual repository by ``NWBZarrIO`` and from
the HDF5 file by h5py (``NWBHDF5IO``), cold (page cache evicted) unless ``--hot``, locally and through a
store (ours) or an HTTP range server (h5py) adding ``--latency`` seconds per request. LINDI is measured
beside them when it is installed ("n/a" otherwise). Usage::

    python benchmarks/virtual.py [--seconds 46.6] [--hot] [--latency 0.02]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import Timer, du, evict_tree, fmt, fsync_tree, quiet, ratio, ratio_line, table, workdir
from _data import RATE, ephys, ephys_nwbfile

#: NeuroConv's chunks for int16 x 384 channels, gzip level 4 (as part a's "hdf5 gzip").
HDF5_CHUNKS = (78125, 64)
CHANNEL = 7
DATA = "acquisition/ephys/data"


def run(
    work: Path, seconds: float = 46.6, evict: bool = True, latency: float = 0.02, lindi: bool = True
) -> dict[str, Any]:
    """Write the HDF5 file, convert it both ways, and time the reads (``lindi``: LINDI's too)."""
    from hdmf.backends.hdf5 import H5DataIO
    from pynwb import NWBHDF5IO

    from hdmf_zarr3 import convert

    data = ephys(seconds)
    src = work / "ephys_gzip.nwb"
    chunks = tuple(min(c, n) for c, n in zip(HDF5_CHUNKS, data.shape))
    with NWBHDF5IO(str(src), "w") as io:
        io.write(ephys_nwbfile(H5DataIO(data, chunks=chunks, compression="gzip", compression_opts=4)))
    fsync_tree(src)
    out: dict[str, Any] = {"seconds": seconds, "bytes": int(data.nbytes), "source_bytes": du(src), "latency": latency}
    with Timer() as t:
        convert(src, work / "full.nwb.zarr")
        fsync_tree(work / "full.nwb.zarr")
    out["full"] = {"seconds": t.seconds, "written": du(work / "full.nwb.zarr")}
    with Timer() as t:
        report = convert(src, work / "virtual.icechunk", virtual=True)
        fsync_tree(work / "virtual.icechunk")
    out["virtual"] = {"seconds": t.seconds, "written": du(work / "virtual.icechunk")}
    out["report"] = (report or {}).get("/" + DATA)
    expected = {name: data[_selection(name, data.shape)] for name in ("window", "channel")}
    cold = [src, work / "virtual.icechunk"] if evict else []
    out["reads"] = {
        "h5py": _reads(lambda: _h5py_data(src), expected, cold),
        "ours": _reads(lambda: _ours_data(work / "virtual.icechunk"), expected, cold),
        "lindi": _lindi(src, expected, cold) if lindi else {},
    }
    out["remote"] = {
        "h5py": _remote_h5py(src, latency, expected, cold),
        "ours": _reads(lambda: _ours_data(work / "virtual.icechunk", latency), expected, cold),
    }
    return out


def _reads(open_data: Any, expected: dict[str, np.ndarray], cold: list[Path]) -> dict[str, float]:
    """Seconds of each read (``window``, ``channel``), each from a fresh open; the values are checked."""
    times: dict[str, float] = {}
    for name in ("window", "channel"):
        for path in cold:
            evict_tree(path)
        data, close = open_data()
        try:
            key = _selection(name, data.shape)
            with Timer() as t:
                values = np.asarray(data[key])
            times[name] = t.seconds
            assert np.array_equal(values, expected[name]), f"{name}: wrong values"
        finally:
            close()
    return times


def _selection(name: str, shape: tuple[int, ...]) -> tuple[slice | int, ...]:
    start = min(int(shape[0] // 2), max(0, int(shape[0]) - RATE))
    return (slice(start, start + RATE), slice(None)) if name == "window" else (slice(None), CHANNEL)


def _h5py_data(src: Path) -> tuple[Any, Any]:
    from pynwb import NWBHDF5IO

    io = NWBHDF5IO(str(src), "r")
    return io.read().acquisition["ephys"].data, io.close


def _ours_data(repo: Path, latency: float | None = None) -> tuple[Any, Any]:
    from hdmf_zarr3 import NWBZarrIO

    if latency is None:
        io = NWBZarrIO(str(repo), "r")
    else:
        from _latency_store import LatencyStore

        from hdmf_zarr3.storage.virtual import repo as virtual_repo

        io = NWBZarrIO(LatencyStore(virtual_repo.open_readonly(repo), latency=latency), "r")
    return io.read().acquisition["ephys"].data, io.close


def _remote_h5py(src: Path, latency: float, expected: dict[str, np.ndarray], cold: list[Path]) -> dict[str, float]:
    """h5py reading the HDF5 file over HTTP range requests (fsspec) from a server adding ``latency``."""
    try:
        import fsspec
        import h5py
        from _http_range import serving
        from pynwb import NWBHDF5IO
    except ImportError:  # fsspec's HTTP file system needs aiohttp
        return {}
    with serving(src.parent, latency) as server:

        def open_data() -> tuple[Any, Any]:
            fs = fsspec.filesystem("http", skip_instance_cache=True)
            f = fs.open(server.url(src.name), "rb")
            h5 = h5py.File(f, "r")
            io = NWBHDF5IO(file=h5)

            def close() -> None:
                io.close()
                h5.close()
                f.close()

            return io.read().acquisition["ephys"].data, close

        return _reads(open_data, expected, cold)


def _lindi(src: Path, expected: dict[str, np.ndarray], cold: list[Path]) -> dict[str, Any]:
    """LINDI (its own venv: it needs zarr < 3) making its reference file of ``src`` and reading through
    it; "n/a" when its venv cannot be made. Its values are checked against ours."""
    import _lindi

    shape = next(iter(expected.values())).shape  # (only the selections' definitions are needed)
    del shape
    rows = len(expected["channel"])
    selections = {
        name: [list(_bounds(s)) if isinstance(s, slice) else s for s in _selection(name, (rows, 384))]
        for name in ("window", "channel")
    }
    found = _lindi.measure(src, selections, evict_tree if cold else lambda path: None)
    for name in ("window", "channel"):
        total = found.get(name + "_sum")
        if total is not None and total != int(expected[name].astype(np.int64).sum()):
            print(f"  LINDI: wrong values in the {name}")
            found.pop(name, None)
    return found


def _bounds(s: slice) -> tuple[int | None, int | None]:
    return s.start, s.stop


def report(r: dict[str, Any]) -> None:
    """Print the tables and the ratios of one :func:`run` against issue #20's targets."""
    gib = r["bytes"] / 2**30
    print(f"  {r['seconds']:g} s x 384 channels int16 ({gib:.2f} GiB), HDF5 gzip 4 in {HDF5_CHUNKS} chunks")
    print(f"  virtual array: {r.get('report')}")
    full, virtual = r["full"], r["virtual"]
    print(
        table(
            ["conversion", "seconds", "written MiB"],
            [
                ["full (every byte re-encoded)", fmt(full["seconds"]), fmt(full["written"] / 2**20, ".1f")],
                ["virtual (bulk read in place)", fmt(virtual["seconds"]), fmt(virtual["written"] / 2**20, ".3f")],
                [
                    "LINDI reference file (its own venv)",
                    fmt(r["reads"]["lindi"].get("make")),
                    fmt(
                        None if "written" not in r["reads"]["lindi"] else r["reads"]["lindi"]["written"] / 2**20, ".3f"
                    ),
                ],
            ],
        )
    )
    print(ratio_line("virtual time / full convert", ratio(virtual["seconds"], full["seconds"])))
    print(ratio_line("virtual bytes / full convert", ratio(virtual["written"], full["written"])))
    for where, reads in (("local", r["reads"]), (f"{r['latency'] * 1e3:.0f} ms per request", r["remote"])):
        rows = [[name, fmt(v.get("window"), ".3f"), fmt(v.get("channel"), ".3f")] for name, v in reads.items()]
        print(f"  reads, {where} (seconds):")
        print(table(["reader", "1 s window", "one channel"], rows))
        label = "" if where == "local" else " remote"
        for step in ("window", "channel"):
            ours, theirs = reads["ours"].get(step), reads["h5py"].get(step)
            print(ratio_line(f"virtual{label} {step} ours/h5py", ratio(ours, theirs)))


def main() -> None:
    quiet()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=46.6, help="recording length (46.6 s: 1 GiB)")
    parser.add_argument("--hot", action="store_true", help="do not evict files from the page cache before reads")
    parser.add_argument("--latency", type=float, default=0.02, help="seconds added to every remote request")
    parser.add_argument("--no-lindi", action="store_true", help="skip LINDI (its scratch venv)")
    args = parser.parse_args()
    print("(g) virtual copies of an HDF5 file")
    start = time.perf_counter()
    with workdir() as work:
        report(run(work, args.seconds, not args.hot, args.latency, not args.no_lindi))
    print(f"  [{time.perf_counter() - start:.0f} s]")


if __name__ == "__main__":
    main()
