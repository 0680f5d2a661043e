"""Benchmark (b): an NWB file of many small objects, written and read by ours, NWBHDF5IO and hdmf-zarr 0.14.

Builds its own data (``_data.many_small``): N TimeSeries, U units with spike times and electrode
regions, 384 electrodes, T trials. Measures the write (until the IO closes), ``read()``, and
``read()`` + ``to_dataframe()`` of every DynamicTable; reads start from a cold page cache unless
``--hot``. ``--rich`` adds ophys (ROIs and their traces), icephys (sweeps in the intracellular
recordings table), images and a scratch table, one tenth of ``--series`` of each. Usage::

    python benchmarks/many_small_objects.py [--series 500] [--units 1000] [--trials 200] [--hot] [--rich]
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import _rival
from _common import Timer, evict_tree, fmt, fmt_spread, quiet, ratio, ratio_line, spread, spread_line, table, workdir
from _data import many_small
from _measure import small_write_read

from hdmf_zarr3.storage.stores.local import WRITER_THREADS

BACKENDS = ["ours", "hdf5", "hdmf-zarr 0.14"]
#: Ours in the other containers a user may choose for a file of many small objects.
STORES = ["ours zip", "ours icechunk"]
FILES = {
    "ours": "small.nwb.zarr",
    "hdf5": "small.nwb",
    "hdmf-zarr 0.14": "small_rival.nwb.zarr",
    "ours zip": "small.nwb.zarr.zip",
    "ours icechunk": "small.icechunk",
}
TIMED = ("write", "read", "read+tables")
#: The file system's floor of our objects: (key, each through a temporary name + rename, threads)
THREADED_FLOOR = "files renamed, threads"
FLOORS = [("files", False, 1), ("files renamed", True, 1), (THREADED_FLOOR, True, WRITER_THREADS)]


def run(
    work: Path,
    series: int = 500,
    units: int = 1000,
    trials: int = 200,
    evict: bool = True,
    rival: bool = True,
    rich: bool = False,
    rounds: int = 7,
    stores: bool = True,
    first: bool = True,
) -> dict[str, Any]:
    """Write and read the file with every backend in ``work`` (the last round's files are left there for part c).

    Each backend first writes and reads a tiny file (imports, HDMF's caches: what the first use in a
    process pays, whichever backend comes first); that first use is measured apart, in a fresh process
    (``first``). Then ours, HDF5 (and, with ``stores``, ours into a zip and into an icechunk repository) take
    ``rounds`` turns, in alternating order, each on a fresh NWBFile written to a new path, the page cache
    synced before each timed step; every round is kept (reported as median and min–max, and the best).
    The floor of the file system, our objects created by a bare loop of ``mkdir``/``open``/``write``, is
    measured in every round too. hdmf-zarr 0.14 runs once (its write takes ~10x as long).
    """
    from pynwb import NWBHDF5IO

    from hdmf_zarr3 import NWBZarrIO

    names = ["ours", "hdf5", *(STORES if stores else [])]
    out: dict[str, Any] = {
        "series": series,
        "units": units,
        "trials": trials,
        "evict": evict,
        "rich": rich,
        "rounds": rounds,
        "paths": {},
        "samples": {name: {} for name in names},
        "backends": {},
        "hdmf": {},
        "first write": {},
    }
    ios = {"ours": NWBZarrIO, "hdf5": NWBHDF5IO, "ours zip": NWBZarrIO}
    for name in ("ours", "hdf5"):  # warm-up, not recorded
        small_write_read(ios[name], many_small(5, 5, 5, rich=rich), work / f"warm.{FILES[name]}", evict=False)
    samples, floor = out["samples"], out["hdmf"]
    for turn in range(max(1, rounds)):
        for name in names if turn % 2 == 0 else reversed(names):
            path = work / f"r{turn}.{FILES[name]}"  # a new path: no tree removed just before
            nwbfile = many_small(series, units, trials, rich=rich)
            if name == "ours icechunk":
                res = icechunk_write_read(nwbfile, path, evict)
            else:
                res = small_write_read(ios[name], nwbfile, path, evict)
            for key, value in res.items():
                samples[name].setdefault(key, []).append(value)
            out["paths"][name] = str(path)
        ours = Path(out["paths"]["ours"])
        for key, rename, threads in FLOORS:
            floor.setdefault(key, []).append(raw_files(ours, work / "raw_files", rename, threads))
    for key, value in hdmf_alone(many_small(series, units, trials, rich=rich), out["paths"]["hdf5"]).items():
        floor[key] = [value]
    for name in names:  # the median of each step, for the parts that read one figure (c, json)
        out["backends"][name] = {k: (spread(v) or [None])[0] if k in TIMED else v[-1] for k, v in samples[name].items()}
    if first:
        for name in ("ours", "hdf5"):
            out["first write"][name] = first_write(name, work / f"first.{FILES[name]}", series, units, trials, rich)
    res = None
    if rival:
        out["paths"]["hdmf-zarr 0.14"] = str(work / FILES["hdmf-zarr 0.14"])
        res = _rival.call(
            "small",
            {
                "series": series,
                "units": units,
                "trials": trials,
                "evict": evict,
                "rich": rich,
                "path": out["paths"]["hdmf-zarr 0.14"],
            },
        )
    out["backends"]["hdmf-zarr 0.14"] = res or {}
    return out


def icechunk_write_read(nwbfile: Any, path: Path, evict: bool) -> dict[str, Any]:
    """:func:`small_write_read` for ours into a new icechunk repository on the local disk (write = until the
    commit; read from a read-only session of ``main``)."""
    import os
    import time

    import icechunk
    from _data import tables

    from hdmf_zarr3 import NWBZarrIO

    out: dict[str, Any] = {}
    repo = icechunk.Repository.create(icechunk.local_filesystem_storage(str(path)))
    session = repo.writable_session("main")
    os.sync()
    with Timer() as t:
        with NWBZarrIO(session.store, mode="w") as io:
            io.write(nwbfile)
        session.commit("write")
    out["write"] = t.seconds
    inside = list(path.rglob("*"))
    out["files"], out["inodes"] = sum(1 for p in inside if p.is_file()), len(inside) + 1
    out["size"] = sum(p.stat().st_size for p in inside if p.is_file())
    if evict:
        evict_tree(path)
    os.sync()
    with Timer() as t:
        with NWBZarrIO(repo.readonly_session(branch="main").store, mode="r") as io:
            back = io.read()
            out["read"] = time.perf_counter() - t.start
            out["rows"] = tables(back)
            out["read+tables"] = time.perf_counter() - t.start
    return out


def first_write(name: str, path: Path, series: int, units: int, trials: int, rich: bool) -> dict[str, Any]:
    """The first write in a fresh interpreter (``_first_write.py``): its imports, and the write itself."""
    import json
    import subprocess
    import sys

    argv = [sys.executable, "_first_write.py", name, str(path), str(series), str(units), str(trials)]
    proc = subprocess.run(
        [*argv, *(["--rich"] if rich else [])], cwd=Path(__file__).parent, capture_output=True, text=True
    )
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1:] or ["failed"]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def hdmf_alone(nwbfile: Any, hdf5_path: str) -> dict[str, float]:
    """The seconds of HDMF's own steps, the same for every backend: ``build`` (containers to builders,
    inside every ``write()``) of ``nwbfile`` and ``construct`` (builders to containers, inside every
    ``read()``) of the builders read from the HDF5 file at ``hdf5_path``. No backend's write or read can
    take less: they bound the ratios to HDF5."""
    from pynwb import NWBHDF5IO, get_manager

    with Timer() as build:
        get_manager().build(nwbfile)
    with NWBHDF5IO(hdf5_path, mode="r") as io:
        builders = io.read_builder()
        with Timer() as construct:
            io.manager.construct(builders)
        with Timer() as again:
            _builders_again(builders)
    return {"build": build.seconds, "construct": construct.seconds, "builders": again.seconds}


def _builders_again(root: Any) -> Any:
    """The builder tree ``root`` made again through HDMF's public builder API (the objects any backend's
    ``read_builder()`` must hand HDMF; their constructors and setters check every argument)."""
    from hdmf.build import DatasetBuilder, GroupBuilder, LinkBuilder

    def group(old: Any) -> Any:
        new = GroupBuilder(old.name, attributes=dict(old.attributes), source=old.source)
        for sub in old.groups.values():
            new.set_group(group(sub))
        for sub in old.datasets.values():
            new.set_dataset(DatasetBuilder(sub.name, data=sub.data, attributes=dict(sub.attributes), source=sub.source))
        for link in old.links.values():
            new.set_link(LinkBuilder(builder=link.builder, name=link.name, source=link.source))
        return new

    return group(root)


def raw_files(tree: Path, scratch: Path, rename: bool = False, threads: int = 1) -> float:
    """Seconds to create ``tree``'s directories and files again under ``scratch`` with plain ``mkdir`` and
    ``open``/``write`` (no zarr): the file system's cost of that many objects; ``rename``: each file
    written to a temporary name and renamed into place, as zarr's ``LocalStore`` and we do so that a key
    that exists is whole even after a SIGKILL; ``threads``: the directories shared among that many threads
    (as our writer stores a large batch), else one loop."""
    import os
    import shutil
    from concurrent.futures import ThreadPoolExecutor

    files = [(p.relative_to(tree), p.read_bytes()) for p in sorted(tree.rglob("*")) if p.is_file()]
    by_directory: dict[Path, list[tuple[Path, bytes]]] = {}
    for rel, data in files:
        by_directory.setdefault(rel.parent, []).append((rel, data))
    shares: list[list[tuple[Path, bytes]]] = [[] for _ in range(threads)]
    for entries in by_directory.values():
        min(shares, key=len).extend(entries)

    def create(share: list[tuple[Path, bytes]]) -> None:
        made: set[Path] = set()
        for rel, data in share:
            target = scratch / rel
            if target.parent not in made:
                os.makedirs(target.parent, exist_ok=True)
                made.add(target.parent)
            with open(f"{target}.partial" if rename else target, "wb") as f:
                f.write(data)
            if rename:
                os.rename(f"{target}.partial", target)

    shutil.rmtree(scratch, ignore_errors=True)
    with Timer() as t:
        if threads == 1:
            create(shares[0])
        else:
            with ThreadPoolExecutor(threads) as pool:
                list(pool.map(create, shares))
    shutil.rmtree(scratch, ignore_errors=True)
    return t.seconds


def report(r: dict[str, Any]) -> None:
    """Print the table and the ratios of one :func:`run`: medians of the rounds with min–max, the best of
    them, the first write in a fresh process, objects and inodes per file."""
    b, samples = r["backends"], r.get("samples", {})
    cache = "cold (page cache evicted before reading)" if r["evict"] else "hot"
    rich = ", ophys, icephys, images, a scratch table" if r.get("rich") else ""
    print(
        f"  {r['series']} TimeSeries, {r['units']} units, 384 electrodes, {r['trials']} trials{rich}; reads {cache}; "
        f"median [min–max] of {r.get('rounds', 1)} alternating rounds, each to a new path (hdmf-zarr 0.14: one run)"
    )
    names = [n for n in ["ours", *STORES, "hdf5", "hdmf-zarr 0.14"] if n in b]

    def cell(name: str, key: str, spec: str = ".2f") -> str:
        series = samples.get(name, {}).get(key)
        return fmt_spread(series, spec) if series else fmt(b[name].get(key), spec)

    first = r.get("first write", {})
    rows = [
        [
            name,
            cell(name, "write"),
            fmt(min(samples[name]["write"]) if samples.get(name, {}).get("write") else None),
            fmt(first.get(name, {}).get("write")),
            cell(name, "read"),
            cell(name, "read+tables"),
            fmt(b[name].get("files"), "d"),
            fmt(b[name].get("inodes"), "d"),
            fmt(None if b[name].get("size") is None else b[name]["size"] / 2**20, ".1f"),
        ]
        for name in names
    ]
    header = ["backend", "write s", "best", "first", "read s", "read+tables s", "objects", "inodes", "MiB"]
    print(table(header, rows))
    if first:
        print(
            "  first: the first write in a fresh process (its imports apart: "
            + ", ".join(f"{n} {fmt(v.get('import'))} s" for n, v in first.items())
            + ")"
        )
    print("  ratios (time of the other / time of ours; >1 = ours faster), median of the rounds [min–max]:")
    for step in TIMED:
        print(spread_line(f"{step} HDF5/ours", _ratios(samples, "hdf5", "ours", step)))
        rival = b.get("hdmf-zarr 0.14", {}).get(step)
        print(ratio_line(f"{step} hdmf-zarr/ours", ratio(rival, b["ours"].get(step)), "(one run of hdmf-zarr)"))
        for store in STORES:
            if store in samples:
                print(spread_line(f"{step} {store}/ours", _ratios(samples, store, "ours", step)))
    hdmf = r.get("hdmf", {})
    build = (spread(hdmf.get("build")) or [None])[0]
    construct = (spread(hdmf.get("construct")) or [None])[0]
    if build is not None:
        print(
            f"  HDMF alone, the same for every backend: build {fmt(build)} s (in every write), "
            f"construct {fmt(construct)} s (in every read); no backend beats these ceilings:"
        )
        print(ratio_line("write ceiling, build alone (HDF5 / build)", ratio(b["hdf5"].get("write"), build)))
        floors = {key: hdmf.get(key) for key, _, _ in FLOORS}
        if floors["files"]:
            print(
                f"  the floor: our {fmt(b['ours'].get('files'), 'd')} objects ({fmt(b['ours'].get('inodes'), 'd')} "
                f"inodes) created by a bare loop of mkdir/open/write, median of the rounds: "
                f"{fmt_spread(floors['files'])} s; each through a temporary name + rename: "
                f"{fmt_spread(floors['files renamed'])} s; renamed, by {WRITER_THREADS} threads as ours: "
                f"{fmt_spread(floors.get(THREADED_FLOOR))} s"
            )
            for label, key in (("", "files"), (" renamed", "files renamed"), (" renamed, threads", THREADED_FLOOR)):
                hdf5 = samples.get("hdf5", {}).get("write") or []
                ceilings = [h / (build + f) for h, f in zip(hdf5, floors[key] or [])]
                print(
                    spread_line(
                        f"write ceiling, build + our objects{label}", ceilings, "(HDF5 / (build + creating them))"
                    )
                )
        if construct is not None:
            print(
                ratio_line(
                    "read+tables ceiling, construct alone",
                    ratio(b["hdf5"].get("read+tables"), construct),
                    "(HDF5 / construct)",
                )
            )
    print("  " + objects_per_file(b))


def _ratios(samples: dict[str, Any], other: str, ours: str, step: str) -> list[float]:
    """The ratio of each round (``other``'s time over ``ours``'s), rounds paired in the order they ran."""
    a, b = samples.get(other, {}).get(step) or [], samples.get(ours, {}).get(step) or []
    return [x / y for x, y in zip(a, b) if x is not None and y]


def objects_per_file(b: dict[str, Any]) -> str:
    """The stored objects (regular files) and inodes of each backend's file."""
    counts = [
        f"{name} {fmt(b[name].get('files'), 'd')} objects / {fmt(b[name].get('inodes'), 'd')} inodes"
        for name in ["ours", *STORES, "hdmf-zarr 0.14"]
        if name in b
    ]
    return "per file: " + ", ".join(counts) + " (an HDF5 file is one object)"


def main() -> None:
    quiet()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--series", type=int, default=500)
    parser.add_argument("--units", type=int, default=1000)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--hot", action="store_true", help="do not evict files from the page cache before reads")
    parser.add_argument("--no-rival", action="store_true", help="skip hdmf-zarr 0.14")
    parser.add_argument("--rich", action="store_true", help="add ophys, icephys, images and a scratch table")
    parser.add_argument("--rounds", type=int, default=7, help="alternating rounds (median and min–max reported)")
    parser.add_argument("--no-stores", action="store_true", help="skip ours into a zip and into icechunk")
    args = parser.parse_args()
    print("(b) many small objects")
    with workdir() as work:
        report(
            run(
                work,
                args.series,
                args.units,
                args.trials,
                not args.hot,
                not args.no_rival,
                args.rich,
                args.rounds,
                not args.no_stores,
            )
        )


if __name__ == "__main__":
    main()
