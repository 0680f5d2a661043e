"""Benchmark (a): bulk int16 ephys (samples x 384 channels) written through PyNWB and read back.

Writers: ours (``NWBZarrIO`` defaults), ``NWBHDF5IO`` contiguous, ``NWBHDF5IO`` gzip level 4 in
(78125, 64) chunks (NeuroConv's defaults for an ElectricalSeries: 10 MB chunks of at most 64
channels, gzip at h5py's default level 4), hdmf-zarr 0.14 defaults, and the raw-disk limit
(``ndarray.tofile`` + fsync; ``np.fromfile`` to read). Every write includes fsync of every file.
All formats are written first, then read; before every read the files are evicted from the page
cache (``posix_fadvise``, see ``_common.evict_tree``) unless ``--hot``. Also measures the codec's own
rate: numcodecs Blosc lz4 bit-shuffle level 5 on 4 MiB blocks with a 2-thread pool.

Usage::

    python benchmarks/bulk_ephys.py [--seconds 46.6] [--hot] [--no-rival]
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import _rival
import numpy as np
from _common import GB, Timer, du, evict_tree, fmt, ratio, ratio_line, table, workdir, zarr_layout
from _data import CHANNELS, RATE, ephys, ephys_nwbfile
from _measure import ephys_read, ephys_write

#: NeuroConv's chunk shape for int16 x 384 channels (10 MB, 64 channels), with gzip level 4.
HDF5_CHUNKS = (78125, 64)
CHANNEL = 17
#: 1 s windows read at random offsets (the median time is reported).
WINDOWS = 3
FORMATS = ["ours", "hdf5 contiguous", "hdf5 gzip", "hdmf-zarr 0.14", "raw"]


def codec_rate(data: np.ndarray, threads: int = 2, block_bytes: int = 4 * 2**20, repeat: int = 3) -> dict[str, float]:
    """Encode ``data`` in row blocks of ``block_bytes`` with Blosc lz4 bit-shuffle 5 on ``threads`` threads.

    numcodecs' Blosc runs single-threaded when called off the main thread, so the pool size is
    the number of cores used. The best of ``repeat`` passes is kept: it is the codec's capability.
    """
    import numcodecs

    codec = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.BITSHUFFLE)
    rows = max(1, block_bytes // (data.shape[1] * data.itemsize))
    blocks = [data[i : i + rows] for i in range(0, data.shape[0], rows)]
    best = float("inf")
    with ThreadPoolExecutor(threads) as pool:
        for _ in range(repeat):
            with Timer() as t:
                sizes = list(pool.map(lambda b: len(codec.encode(np.ascontiguousarray(b))), blocks))
            best = min(best, t.seconds)
    return {"seconds": best, "gbps": data.nbytes / GB / best, "ratio": data.nbytes / sum(sizes)}


def _raw_write(data: np.ndarray, path: Path) -> dict[str, Any]:
    with Timer() as t:
        with open(path, "wb") as f:
            data.tofile(f)
            close = time.perf_counter() - t.start
            f.flush()
            os.fsync(f.fileno())
    return {"write_close": close, "write": t.seconds, "size": du(path)}


def _raw_read(path: Path, shape: tuple[int, int], windows: list[tuple[int, int]], evict: bool) -> dict[str, Any]:
    row = shape[1] * 2
    reads = [("full", lambda: np.fromfile(path, dtype=np.int16).reshape(shape))]
    reads += [
        ("window", lambda a=a, b=b: np.fromfile(path, dtype=np.int16, count=(b - a) * shape[1], offset=a * row))
        for a, b in windows
    ]
    reads += [("channel", lambda: np.array(np.memmap(path, dtype=np.int16, mode="r", shape=shape)[:, CHANNEL]))]
    times: dict[str, list[float]] = {}
    res: dict[str, Any] = {"open": 0.0}
    for name, read in reads:
        if evict:
            evict_tree(path)
        with Timer() as t:
            values = read()
        times.setdefault(name, []).append(t.seconds)
        res[name] = float(np.median(times[name]))
        res[name + "_sum"] = res.get(name + "_sum", 0) + int(values.sum(dtype=np.int64))
    return res


def run(seconds: float = 46.6, evict: bool = True, rival: bool = True, keep: str | None = None) -> dict[str, Any]:
    """Write and read ``seconds`` of 384-channel ephys in every format; return the measurements."""
    from hdmf.backends.hdf5 import H5DataIO
    from pynwb import NWBHDF5IO

    from hdmf_zarr3 import NWBZarrIO
    from hdmf_zarr3.storage.codecs.direct_write import STAGES

    with Timer() as t:
        data = ephys(seconds)
    rng = np.random.default_rng(1)
    starts = rng.integers(0, max(1, data.shape[0] - RATE), WINDOWS)
    windows = [(int(s), min(data.shape[0], int(s) + RATE)) for s in starts]
    out: dict[str, Any] = {
        "rows": data.shape[0],
        "channels": CHANNELS,
        "bytes": data.nbytes,
        "generate_s": t.seconds,
        "windows": windows,
        "channel": CHANNEL,
        "evict": evict,
        "hdf5_chunks": [min(c, n) for c, n in zip(HDF5_CHUNKS, data.shape)],
    }
    print(
        f"  data: {data.shape[0]} x {CHANNELS} int16 = {data.nbytes / 2**30:.2f} GiB "
        f"(generated in {t.seconds:.1f} s); measuring...",
        flush=True,
    )
    out["codec"] = codec_rate(data)
    expected = {
        "full_sum": int(data.sum(dtype=np.int64)),
        "window_sum": sum(int(data[a:b].sum(dtype=np.int64)) for a, b in windows),
        "channel_sum": int(data[:, CHANNEL].sum(dtype=np.int64)),
    }
    fmts: dict[str, dict[str, Any]] = {name: {} for name in FORMATS}
    with workdir(keep=keep) as tmp:
        paths = {
            "ours": tmp / "ephys.nwb.zarr",
            "hdf5 contiguous": tmp / "ephys_contiguous.nwb",
            "hdf5 gzip": tmp / "ephys_gzip.nwb",
            "hdmf-zarr 0.14": tmp / "ephys_rival.nwb.zarr",
            "raw": tmp / "ephys.bin",
        }
        fmts["raw"].update(_raw_write(data, paths["raw"]))
        # a recording shorter than one chunk (small --seconds) gets one chunk: h5py refuses larger ones
        gzip = H5DataIO(data, chunks=tuple(out["hdf5_chunks"]), compression="gzip", compression_opts=4)
        for name, io_cls, source in (
            ("ours", NWBZarrIO, data),
            ("hdf5 contiguous", NWBHDF5IO, data),
            ("hdf5 gzip", NWBHDF5IO, gzip),
        ):
            with STAGES.measuring() as stages:
                fmts[name].update(ephys_write(io_cls, ephys_nwbfile(source), paths[name]))
            if name == "ours":
                out["ours_stages"] = dict(stages)
        if rival:
            res = _rival.call(
                "ephys_write", {"raw": str(paths["raw"]), "channels": CHANNELS, "path": str(paths["hdmf-zarr 0.14"])}
            )
            fmts["hdmf-zarr 0.14"].update(res or {})
        out["ours_layout"] = zarr_layout(paths["ours"] / "acquisition" / "ephys" / "data")
        for name in ("ours", "hdf5 contiguous", "hdf5 gzip"):
            io_cls = NWBZarrIO if name == "ours" else NWBHDF5IO
            fmts[name].update(ephys_read(io_cls, paths[name], windows, CHANNEL, evict))
        if rival and "write" in fmts["hdmf-zarr 0.14"]:
            res = _rival.call(
                "ephys_read",
                {"path": str(paths["hdmf-zarr 0.14"]), "windows": windows, "channel": CHANNEL, "evict": evict},
            )
            fmts["hdmf-zarr 0.14"].update(res or {})
        fmts["raw"].update(_raw_read(paths["raw"], data.shape, windows, evict))
    for res in fmts.values():
        res["correct"] = all(res.get(k) == v for k, v in expected.items()) if "full_sum" in res else None
    out["formats"] = fmts
    return out


def report(r: dict[str, Any]) -> None:
    """Print the table and the ratios of one :func:`run`."""
    n = r["bytes"]
    fm = r["formats"]

    def gbps(name: str, key: str, nbytes: float = n) -> float | None:
        s = fm[name].get(key)
        return None if s is None else nbytes / GB / s

    rows = []
    for name in FORMATS:
        f = fm[name]
        size = f.get("size")
        rows.append(
            [
                name,
                fmt(f.get("write"), ".2f"),
                fmt(gbps(name, "write"), ".3f"),
                fmt(f.get("write_close"), ".2f"),
                fmt(gbps(name, "write_close"), ".3f"),
                fmt(f.get("open"), ".3f"),
                fmt(f.get("full"), ".2f"),
                fmt(gbps(name, "full"), ".3f"),
                fmt(None if f.get("window") is None else f["window"] * 1e3, ".1f"),
                fmt(f.get("channel"), ".3f"),
                fmt(None if size is None else size / 2**20, ".0f"),
                fmt(ratio(n, size), ".2f"),
                {True: "ok", False: "WRONG", None: "-"}[f.get("correct")],
            ]
        )
    cache = "cold (page cache evicted before each read)" if r["evict"] else "hot (page cache not evicted)"
    print(
        f"  write = until every file is fsynced; close = until the IO closes (data may still be in the page "
        f"cache)\n  reads {cache}; 1s-win = median of {len(r['windows'])} 1 s windows (all channels) at random "
        f"offsets;\n  chan = column {r['channel']} across all time; GB = 1e9 bytes of uncompressed data"
    )
    print(
        table(
            [
                "format",
                "write s",
                "GB/s",
                "close s",
                "GB/s",
                "open s",
                "full s",
                "GB/s",
                "1s-win ms",
                "chan s",
                "MiB",
                "ratio",
                "data",
            ],
            rows,
        )
    )
    c = r["codec"]
    print(
        f"  codec alone (numcodecs blosc-lz4-bitshuffle-5, 4 MiB blocks, 2 threads, best of 3): "
        f"{c['gbps']:.3f} GB/s, ratio {c['ratio']:.2f}"
    )
    print(f"  ours: {r.get('ours_layout', '?')}; HDF5 gzip: chunks {tuple(r['hdf5_chunks'])}, gzip 4")
    if fm["hdmf-zarr 0.14"].get("layout"):
        print(f"  hdmf-zarr 0.14: {fm['hdmf-zarr 0.14']['layout']}")
    print("  ratios (speed of ours / speed of the other; >1 = ours faster; writes include fsync):")
    others = [
        ("HDF5 gzip", "hdf5 gzip"),
        ("HDF5 contiguous", "hdf5 contiguous"),
        ("hdmf-zarr 0.14", "hdmf-zarr 0.14"),
        ("raw disk", "raw"),
    ]
    for key, label in (
        ("write", "write"),
        ("full", "full read"),
        ("window", "1 s window read"),
        ("channel", "one-channel read"),
    ):
        for other, name in others:
            if f"{label} vs {other}" != "full read vs HDF5 gzip":  # (with the targets of issue #19 below)
                print(ratio_line(f"{label} vs {other}", ratio(fm[name].get(key), fm["ours"].get(key))))
    print(ratio_line("write vs codec 2-thread rate", ratio(gbps("ours", "write"), c["gbps"])))
    print(ratio_line("write until close vs codec 2-thread rate", ratio(gbps("ours", "write_close"), c["gbps"])))
    print(
        ratio_line(
            "compression ratio ours / hdmf-zarr 0.14", ratio(fm["hdmf-zarr 0.14"].get("size"), fm["ours"].get("size"))
        )
    )
    print(ratio_line("compression ratio ours / HDF5 gzip", ratio(fm["hdf5 gzip"].get("size"), fm["ours"].get("size"))))
    print("  targets of issue #19, point 5 (writes until close: into the page cache, no fsync):")
    close = fm["ours"].get("write_close")
    print(ratio_line("write until close vs HDF5 gzip", ratio(fm["hdf5 gzip"].get("write_close"), close)))
    print(ratio_line("write until close vs hdmf-zarr 0.14", ratio(fm["hdmf-zarr 0.14"].get("write_close"), close)))
    print(ratio_line("full read vs HDF5 gzip", ratio(fm["hdf5 gzip"].get("full"), fm["ours"].get("full"))))
    window = ratio(fm["ours"].get("window"), fm["hdf5 contiguous"].get("window"))
    print(ratio_line("1 s window ours/HDF5 contiguous", window))
    print(stage_line(r.get("ours_stages"), close))


def stage_line(stages: dict[str, float] | None, close: float | None) -> str:
    """Where the time of our write goes: each stage of the codec path (summed over its threads) and
    the wall time outside it (PyNWB, HDMF, documents)."""
    if not stages or close is None:
        return "  our write by stage: n/a"
    parts = ", ".join(f"{name} {stages[name]:.2f}" for name in ("cut", "encode", "assemble", "store"))
    return (
        f"  our write by stage (s, summed over threads): {parts}; codec path wall {stages['blocks']:.2f} of "
        f"{close:.2f} until close (the rest: PyNWB/HDMF building, documents, closing)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=46.6, help="recording length (46.6 s = 1 GiB)")
    parser.add_argument("--hot", action="store_true", help="do not evict files from the page cache before reads")
    parser.add_argument("--no-rival", action="store_true", help="skip hdmf-zarr 0.14")
    args = parser.parse_args()
    print("(a) bulk ephys write & read")
    report(run(args.seconds, evict=not args.hot, rival=not args.no_rival))


if __name__ == "__main__":
    main()
