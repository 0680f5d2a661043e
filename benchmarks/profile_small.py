"""Where the time of benchmark (b) goes: cProfile of the write and of read + every table, by stage.

Writes the file of ``many_small_objects.py`` with ours (or ``--hdf5``: ``NWBHDF5IO``) under cProfile,
then reads it and turns every table into a DataFrame, and prints the cumulative time of each stage
(HDMF's build and construct, the same for every backend, against our own steps). cProfile adds
overhead to Python-heavy code, so the shares matter more than the seconds. Usage::

    python benchmarks/profile_small.py [--series 500] [--units 1000] [--trials 200] [--hdf5] [--rich] [--top 0]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from pathlib import Path

from _common import workdir
from _data import many_small, tables

#: (stage, file suffix, function name) whose cumulative time is printed; the first match counts.
WRITE_STAGES = [
    ("HDMF build (containers -> builders)", "hdmf/build/manager.py", "build"),
    ("ours: walk the builders into a plan", "hdmf_zarr3/backend/write/writer.py", "_group"),
    ("ours: store the plan", "hdmf_zarr3/backend/write/plan.py", "store_plan"),
    ("  node documents (zarr.json)", "hdmf_zarr3/storage/handles/handle.py", "put_documents"),
    ("  single-chunk arrays", "hdmf_zarr3/storage/stores/nodes.py", "put_keys"),
    ("  other chunk jobs", "hdmf_zarr3/storage/stores/nodes.py", "run_jobs"),
    ("ours: cache the specifications", "hdmf_zarr3/backend/cached_specs/cache.py", "cache_specifications"),
    ("ours: commit (consolidated root)", "hdmf_zarr3/storage/handles/handle.py", "commit"),
    ("HDF5: write_builder", "hdmf/backends/hdf5/h5tools.py", "write_builder"),
]
READ_STAGES = [
    ("ours: open (documents, dialect, specs)", "hdmf_zarr3/backend/zarrio/nwb.py", "__init__"),
    ("ours: read the builders", "hdmf_zarr3/backend/read/reader.py", "read"),
    ("HDMF construct (builders -> containers)", "hdmf/build/manager.py", "construct"),
    ("every table to_dataframe()", "benchmarks/_data.py", "tables"),
    ("HDF5: read_builder", "hdmf/backends/hdf5/h5tools.py", "read_builder"),
]


def missing_stage_files(stages: list[tuple[str, str, str]]) -> list[str]:
    """Stage files of ours that no longer exist (a module moved: its stage would silently read as absent)."""
    import hdmf_zarr3

    root = Path(hdmf_zarr3.__file__).parent.parent
    return [suffix for _, suffix, _ in stages if suffix.startswith("hdmf_zarr3/") and not (root / suffix).is_file()]


def stage_times(stats: pstats.Stats, stages: list[tuple[str, str, str]]) -> list[tuple[str, float]]:
    """The largest cumulative time of each stage's function (recursive calls counted once)."""
    raw = stats.stats  # type: ignore[attr-defined]
    out = []
    for label, suffix, name in stages:
        found = [ct for (file, _, func), (_, _, _, ct, _) in raw.items() if file.endswith(suffix) and func == name]
        if found:
            out.append((label, max(found)))
    return out


def profiled(
    work: Path, hdf5: bool, series: int, units: int, trials: int, rich: bool = False
) -> dict[str, tuple[float, pstats.Stats]]:
    from pynwb import NWBHDF5IO

    from hdmf_zarr3 import NWBZarrIO

    io_cls = NWBHDF5IO if hdf5 else NWBZarrIO
    path = str(work / ("small.nwb" if hdf5 else "small.nwb.zarr"))
    nwb = many_small(series, units, trials, rich=rich)
    out = {}
    for step in ("write", "read+tables"):
        profile = cProfile.Profile()
        start = time.perf_counter()
        profile.enable()
        if step == "write":
            with io_cls(path, mode="w") as io:
                io.write(nwb)
        else:
            with io_cls(path, mode="r") as io:
                tables(io.read())
        profile.disable()
        out[step] = (time.perf_counter() - start, pstats.Stats(profile))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--series", type=int, default=500)
    parser.add_argument("--units", type=int, default=1000)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--hdf5", action="store_true", help="profile NWBHDF5IO instead of ours")
    parser.add_argument("--rich", action="store_true", help="the richer file (ophys, icephys, images, scratch)")
    parser.add_argument("--top", type=int, default=0, help="also print the N functions of most cumulative time")
    args = parser.parse_args()
    moved = missing_stage_files(WRITE_STAGES + READ_STAGES)
    if moved:
        raise SystemExit(f"profile_small.py names modules that are not there: {', '.join(moved)}")
    with workdir() as work:
        results = profiled(work, args.hdf5, args.series, args.units, args.trials, args.rich)
    for step, stages in (("write", WRITE_STAGES), ("read+tables", READ_STAGES)):
        total, stats = results[step]
        print(f"{step}: {total:.2f} s under cProfile")
        for label, seconds in stage_times(stats, stages):
            print(f"  {label:<44}{seconds:7.2f} s  {100 * seconds / total:5.1f} %")
        if args.top:
            stats.sort_stats("cumulative").print_stats(args.top)


if __name__ == "__main__":
    main()
