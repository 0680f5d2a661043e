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
from _common import Timer, fmt, quiet, ratio, ratio_line, table, workdir
from _data import many_small
from _measure import small_write_read

BACKENDS = ["ours", "hdf5", "hdmf-zarr 0.14"]
FILES = {"ours": "small.nwb.zarr", "hdf5": "small.nwb", "hdmf-zarr 0.14": "small_rival.nwb.zarr"}


def run(
    work: Path,
    series: int = 500,
    units: int = 1000,
    trials: int = 200,
    evict: bool = True,
    rival: bool = True,
    rich: bool = False,
    rounds: int = 3,
) -> dict[str, Any]:
    """Write and read the file with every backend in ``work`` (files are left there for part c).

    Each backend first writes and reads a tiny file (imports, HDMF's caches: what the first use in a
    process pays, whichever backend comes first), then ours and HDF5 take ``rounds`` turns, in
    alternating order, each on a fresh NWBFile; each step keeps its best time. hdmf-zarr 0.14 runs once
    (its write takes ~10x as long).
    """
    import shutil

    from pynwb import NWBHDF5IO

    from hdmf_zarr3 import NWBZarrIO

    out: dict[str, Any] = {
        "series": series,
        "units": units,
        "trials": trials,
        "evict": evict,
        "rich": rich,
        "rounds": rounds,
        "paths": {name: str(work / f) for name, f in FILES.items()},
        "backends": {},
        "hdmf": {},
    }
    ios = {"ours": NWBZarrIO, "hdf5": NWBHDF5IO}
    for name, io_cls in ios.items():  # warm-up, not recorded
        small_write_read(io_cls, many_small(5, 5, 5, rich=rich), work / f"warm.{FILES[name]}", evict=False)
    best: dict[str, dict[str, Any]] = {name: {} for name in ios}
    for turn in range(max(1, rounds)):
        for name in ios if turn % 2 == 0 else reversed(list(ios)):
            path = Path(out["paths"][name])
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()
            res = small_write_read(ios[name], many_small(series, units, trials, rich=rich), path, evict)
            for key, value in res.items():
                kept = best[name].get(key)
                timed = key in ("write", "read", "read+tables")
                best[name][key] = min(value, kept) if timed and kept is not None else value
        shared = hdmf_alone(many_small(series, units, trials, rich=rich), out["paths"]["hdf5"])
        shared["files"] = raw_files(Path(out["paths"]["ours"]), work / "raw_files")
        shared["files renamed"] = raw_files(Path(out["paths"]["ours"]), work / "raw_files", rename=True)
        for key, value in shared.items():
            out["hdmf"][key] = min(value, out["hdmf"].get(key, value))
    out["backends"].update(best)
    res = None
    if rival:
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


def raw_files(tree: Path, scratch: Path, rename: bool = False) -> float:
    """Seconds to create ``tree``'s directories and files again under ``scratch``, one after another, with
    plain ``mkdir`` and ``open``/``write`` (no zarr): the file system's cost of that many objects; ``rename``: each file
    written to a temporary name and renamed into place, as zarr's ``LocalStore`` and we do so that a key
    that exists is whole even after a SIGKILL."""
    import os
    import shutil

    files = [(p.relative_to(tree), p.read_bytes()) for p in sorted(tree.rglob("*")) if p.is_file()]
    shutil.rmtree(scratch, ignore_errors=True)
    with Timer() as t:
        made: set[Path] = set()
        for rel, data in files:
            target = scratch / rel
            if target.parent not in made:
                os.makedirs(target.parent, exist_ok=True)
                made.add(target.parent)
            with open(f"{target}.partial" if rename else target, "wb") as f:
                f.write(data)
            if rename:
                os.rename(f"{target}.partial", target)
    shutil.rmtree(scratch, ignore_errors=True)
    return t.seconds


def report(r: dict[str, Any]) -> None:
    """Print the table and the ratios of one :func:`run`."""
    b = r["backends"]
    cache = "cold (page cache evicted before reading)" if r["evict"] else "hot"
    rich = ", ophys, icephys, images, a scratch table" if r.get("rich") else ""
    rounds = f"; ours and HDF5 best of {r['rounds']} alternating rounds" if r.get("rounds", 1) > 1 else ""
    print(
        f"  {r['series']} TimeSeries, {r['units']} units, 384 electrodes, {r['trials']} trials{rich}; "
        f"reads {cache}{rounds}"
    )
    rows = [
        [
            name,
            fmt(b[name].get("write")),
            fmt(b[name].get("read")),
            fmt(b[name].get("read+tables")),
            fmt(b[name].get("rows"), "d"),
            fmt(b[name].get("files"), "d"),
            fmt(None if b[name].get("size") is None else b[name]["size"] / 2**20, ".1f"),
        ]
        for name in BACKENDS
    ]
    print(table(["backend", "write s", "read s", "read+tables s", "rows", "files", "MiB"], rows))
    print("  ratios (time of the other / time of ours; >1 = ours faster):")
    for step in ("write", "read", "read+tables"):
        print(ratio_line(f"{step} HDF5/ours", ratio(b["hdf5"].get(step), b["ours"].get(step))))
        print(ratio_line(f"{step} hdmf-zarr/ours", ratio(b["hdmf-zarr 0.14"].get(step), b["ours"].get(step))))
    hdmf = r.get("hdmf", {})
    if hdmf:
        print(
            f"  HDMF alone, the same for every backend: build {fmt(hdmf.get('build'))} s (in every write), "
            f"construct {fmt(hdmf.get('construct'))} s (in every read); no backend beats these ceilings:"
        )
        print(ratio_line("write ceiling, build alone (HDF5 / build)", ratio(b["hdf5"].get("write"), hdmf.get("build"))))
        if hdmf.get("files") is not None and hdmf.get("build") is not None:
            print(
                f"  our {fmt(b['ours'].get('files'), 'd')} objects created one by one with plain mkdir/open/write: "
                f"{fmt(hdmf['files'])} s, each through a temporary name + rename: {fmt(hdmf.get('files renamed'))} s"
            )
            for label, files in (("", hdmf["files"]), (" renamed", hdmf.get("files renamed"))):
                print(
                    ratio_line(
                        f"write ceiling, build + our objects{label}",
                        ratio(b["hdf5"].get("write"), None if files is None else hdmf["build"] + files),
                        "(HDF5 / (build + creating them))",
                    )
                )
        print(
            ratio_line(
                "read+tables ceiling, construct alone",
                ratio(b["hdf5"].get("read+tables"), hdmf.get("construct")),
                "(HDF5 / construct)",
            )
        )
        if hdmf.get("builders") is not None and hdmf.get("construct") is not None:
            print(
                ratio_line(
                    "read+tables ceiling, construct + builders",
                    ratio(b["hdf5"].get("read+tables"), hdmf["construct"] + hdmf["builders"]),
                    f"(HDF5 / (construct + making the builders, {fmt(hdmf['builders'])} s))",
                )
            )
    print("  " + objects_per_file(b))


def objects_per_file(b: dict[str, Any]) -> str:
    """The stored objects (regular files) of each backend's file, e.g. ``objects per file: ours 2599, ...``."""
    counts = [f"{name} {fmt(b[name].get('files'), 'd')}" for name in BACKENDS]
    return "objects per file: " + ", ".join(counts) + " (an HDF5 file is one object)"


def main() -> None:
    quiet()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--series", type=int, default=500)
    parser.add_argument("--units", type=int, default=1000)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--hot", action="store_true", help="do not evict files from the page cache before reads")
    parser.add_argument("--no-rival", action="store_true", help="skip hdmf-zarr 0.14")
    parser.add_argument("--rich", action="store_true", help="add ophys, icephys, images and a scratch table")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of ours and HDF5 (best kept)")
    args = parser.parse_args()
    print("(b) many small objects")
    with workdir() as work:
        report(run(work, args.series, args.units, args.trials, not args.hot, not args.no_rival, args.rich, args.rounds))


if __name__ == "__main__":
    main()
