"""Run every benchmark part (issue #4, part 5) and print their tables and ratios against the targets.

Parts: (a) bulk ephys write & read, (b) many small objects, (c) the (b) file through a store with
latency, (d) peak memory of a streaming write, (e) appends in mode ``a`` (rows and samples), (f) the
bulk array through zarr-python's codec pipelines and zarrs beside our own codec path, (g) an HDF5 file
as a virtual icechunk repository against a full conversion and h5py, (h) bulk reads (whole, window,
channel; warm, cold; sharded, unsharded; local, S3 on moto) beside their limit, (i) the viewer's first
paint of every view of a 1 GiB session in headless Chromium (local, S3 on moto), (j) the viewer's plot
drawing against uPlot's. hdmf-zarr 0.14
runs in a scratch venv created on first use (``_rival.py``); without it its columns print "n/a".
Results also go to ``benchmarks/results/latest.json`` (git-ignored; each run replaces it). Usage::

    python benchmarks/run.py [--parts abcdefghij] [--seconds 46.6] [--hot] [--no-rival] ...
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import traceback
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import _rival
from _common import quiet, workdir

HERE = Path(__file__).resolve().parent
PACKAGES = ("hdmf_zarr3", "zarr", "hdmf", "pynwb", "h5py", "numcodecs", "numpy")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def _ram_gib() -> float | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError):
        return None


def machine(rival: bool) -> dict[str, Any]:
    """Cores, memory, Python and package versions (ours and, if available, the rival venv's)."""
    import tempfile

    def ver(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "-"

    tmp = tempfile.gettempdir()
    disk = os.statvfs(tmp)
    info: dict[str, Any] = {
        "cores": os.cpu_count(),
        "cpu": _cpu_model(),
        "ram_gib": _ram_gib(),
        "os": platform.platform(),
        "python": sys.version.split()[0],
        "packages": {p: ver(p) for p in PACKAGES},
        "tmp": tmp,
        "tmp_free_gib": disk.f_bavail * disk.f_frsize / 2**30,
    }
    info["rival"] = (_rival.call("versions", {}) if rival else None) or {}
    return info


def print_machine(m: dict[str, Any]) -> None:
    """Print the machine description of :func:`machine`."""
    ram = f"{m['ram_gib']:.1f} GiB RAM" if m["ram_gib"] else "RAM ?"
    print(f"machine: {m['cores']} cores ({m['cpu']}), {ram}, {m['os']}")
    print(f"python {m['python']}; temp dir {m['tmp']} ({m['tmp_free_gib']:.0f} GiB free)")
    print("ours:  " + ", ".join(f"{k} {v}" for k, v in m["packages"].items()))
    rival = m["rival"]
    if rival:
        print("rival: " + ", ".join(f"{k} {v}" for k, v in rival.items()) + f"  ({_rival.VENV})")
    else:
        print("rival: hdmf-zarr 0.14 unavailable (n/a)")


def main() -> None:
    quiet()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", default="abcdefghij", help="which parts to run, e.g. 'ab'")
    parser.add_argument("--seconds", type=float, default=46.6, help="(a) recording length; 46.6 s = 1 GiB")
    parser.add_argument("--series", type=int, default=500, help="(b) TimeSeries")
    parser.add_argument("--units", type=int, default=1000, help="(b) units")
    parser.add_argument("--trials", type=int, default=200, help="(b) trials")
    parser.add_argument("--small-rounds", type=int, default=7, help="(b) alternating rounds: median, min–max")
    parser.add_argument("--latency", type=float, default=0.02, help="(c) seconds per store request")
    parser.add_argument("--rival-timeout", type=float, default=150.0, help="(c) kill hdmf-zarr after this long")
    parser.add_argument("--stream-seconds", type=float, default=46.6, help="(d) streamed recording length")
    parser.add_argument("--buffer-mb", type=float, default=256.0, help="(d) iterator buffer size")
    parser.add_argument("--append-sizes", default="1000,10000,60000", help="(e) table sizes, comma-separated")
    parser.add_argument("--append-rows", type=int, default=2000, help="(e) rows added in a loop, one write")
    parser.add_argument("--append-opens", type=int, default=20, help="(e) open + one row + write + close, times")
    parser.add_argument("--append-samples", type=int, default=2000, help="(e) samples appended to a TimeSeries")
    parser.add_argument("--pipeline-seconds", type=float, default=10.0, help="(f) recording length")
    parser.add_argument("--virtual-seconds", type=float, default=46.6, help="(g) recording length (46.6 s: 1 GiB)")
    parser.add_argument("--pipeline-rounds", type=int, default=3, help="(f) runs of each codec path (median)")
    parser.add_argument("--read-seconds", type=float, default=12.0, help="(h) recording length (46.6 s: 1 GiB)")
    parser.add_argument("--read-rounds", type=int, default=3, help="(h) alternating rounds: median, min–max")
    parser.add_argument("--viewer-rounds", type=int, default=3, help="(i) fresh loads of every view: median, min–max")
    parser.add_argument("--viewer-samples", type=int, default=1_400_000, help="(i) samples of the 384-channel session")
    parser.add_argument("--viewer-units", type=int, default=500, help="(i) units of the session")
    parser.add_argument("--plot-rounds", type=int, default=5, help="(j) rounds of draws, each the median of 20")
    parser.add_argument("--no-s3", action="store_true", help="(h) skip the reads from S3 (moto on 127.0.0.1)")
    parser.add_argument("--hot", action="store_true", help="do not evict files from the page cache before reads")
    parser.add_argument("--no-rival", action="store_true", help="skip hdmf-zarr 0.14 and LINDI (their scratch venvs)")
    parser.add_argument("--json", default=str(HERE / "results" / "latest.json"), help="where to write results")
    args = parser.parse_args()

    import appends
    import bulk_ephys
    import latency
    import many_small_objects
    import pipelines
    import plot_drawing
    import read_limit
    import streaming_memory
    import viewer
    import virtual

    t0 = time.perf_counter()
    rival = not args.no_rival and _rival.ensure() is not None
    results: dict[str, Any] = {"args": vars(args), "machine": machine(rival)}
    print_machine(results["machine"])
    evict = not args.hot

    def part(key: str, title: str, fn: Any, report: Any, needed: bool = False) -> Any:
        if key not in args.parts and not needed:
            return None
        print(f"\n({key}) {title}", flush=True)
        start = time.perf_counter()
        try:
            res = fn()
        except Exception:  # one broken part must not hide the others
            traceback.print_exc()
            results[key] = {"error": traceback.format_exc()}
            return None
        res["elapsed_s"] = time.perf_counter() - start
        results[key] = res
        report(res)
        print(f"  [part {key}: {res['elapsed_s']:.0f} s]", flush=True)
        return res

    part("a", "bulk ephys write & read", lambda: bulk_ephys.run(args.seconds, evict, rival), bulk_ephys.report)
    with workdir() as work:
        small = part(
            "b",
            "many small objects",
            lambda: many_small_objects.run(
                work, args.series, args.units, args.trials, evict, rival, rounds=args.small_rounds
            ),
            many_small_objects.report,
            needed="c" in args.parts,
        )
        if small is not None:
            part(
                "c",
                f"latency store ({args.latency * 1e3:.0f} ms per request)",
                lambda: latency.run(small["paths"], args.latency, args.rival_timeout, rival),
                latency.report,
            )
    with workdir() as work:
        part(
            "b-rich",
            "many small objects, the richer file (ophys, icephys, images, a scratch table)",
            lambda: many_small_objects.run(
                work, args.series, args.units, args.trials, evict, rival, rich=True, rounds=args.small_rounds
            ),
            many_small_objects.report,
            needed="b" in args.parts,
        )
    part(
        "d",
        "streaming write peak memory",
        lambda: streaming_memory.run(args.stream_seconds, args.buffer_mb),
        streaming_memory.report,
    )

    with workdir() as work:
        part(
            "e",
            "appends in mode a (rows to trials, samples to a TimeSeries)",
            lambda: appends.run(
                work,
                [int(s) for s in args.append_sizes.split(",")],
                args.append_rows,
                args.append_opens,
                args.append_samples,
                rival,
            ),
            appends.report,
        )
    part(
        "f",
        "codec pipelines on the bulk array (ours, zarr's, zarrs)",
        lambda: pipelines.run(args.pipeline_seconds, evict, args.pipeline_rounds),
        pipelines.report,
    )

    with workdir() as work:
        part(
            "g",
            "virtual copies of an HDF5 file (icechunk) against a full conversion and h5py",
            lambda: virtual.run(work, args.virtual_seconds, evict, args.latency, lindi=not args.no_rival),
            virtual.report,
        )

    part(
        "h",
        "bulk reads beside their limit (whole, window, channel; warm, cold; sharded, unsharded; local, S3)",
        lambda: read_limit.run(args.read_seconds, evict, rival, args.read_rounds, s3=not args.no_s3),
        read_limit.report,
    )

    part(
        "i",
        "the viewer's first paint of every view of a 1 GiB session (500 units, 200 trials; local, S3)",
        lambda: viewer.run(
            args.viewer_rounds,
            s3=not args.no_s3,
            size={"samples": args.viewer_samples, "units": args.viewer_units, "trials": min(200, args.viewer_units)},
        ),
        viewer.report,
    )

    part(
        "j",
        "drawing a window of 64 lanes: the viewer's canvas code against uPlot (headless Chromium)",
        lambda: plot_drawing.run(rounds=args.plot_rounds),
        plot_drawing.report,
    )

    results["total_s"] = time.perf_counter() - t0
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1, default=str))
    print(f"\ntotal {results['total_s']:.0f} s; results in {out}")
    failed = [key for key, res in results.items() if isinstance(res, dict) and "error" in res]
    if failed:
        sys.exit(f"parts that failed: {', '.join(failed)} (tracebacks above)")


if __name__ == "__main__":
    main()
