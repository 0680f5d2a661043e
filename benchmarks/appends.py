"""Benchmark (e): appends to a file read in mode ``a``, ours against NWBHDF5IO and hdmf-zarr 0.14 (issue #19).

At each table size N (a file with N trials and a TimeSeries of N samples):

- **loop**: ``add_trial`` ``--rows`` times on the file read in mode ``a``, then one ``write()``;
- **per open**: ``--opens`` times open in mode ``a`` + ``read()`` + one ``add_trial`` + ``write()`` + close;
- **samples**: ``hdmf.data_utils.append_data`` of ``--samples`` samples to the TimeSeries, one ``write()``.

Each prints milliseconds per row (or sample); equal numbers across sizes mean the cost does not grow
with the table. Ratios are ours/HDF5 (<1: ours faster; the target is at most 1.5). Usage::

    python benchmarks/appends.py [--sizes 1000,10000,60000] [--rows 2000] [--opens 20] [--samples 2000]
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path
from typing import Any

import _rival
from _common import fmt, ratio, ratio_line, table, workdir

BACKENDS = ["ours", "hdf5", "hdmf-zarr 0.14"]
STEPS = ("loop", "per open", "samples")


def base_file(n: int, hdf5: bool) -> Any:
    """An NWB file with ``n`` trials and a TimeSeries of ``n`` samples, both extendable (HDF5: maxshape None)."""
    import datetime

    import numpy as np
    from dateutil.tz import tzutc
    from hdmf.common import ElementIdentifiers, VectorData
    from pynwb import NWBFile, TimeSeries
    from pynwb.epoch import TimeIntervals

    nwb = NWBFile(
        session_description="appends",
        identifier="appends",
        session_start_time=datetime.datetime(2024, 1, 1, tzinfo=tzutc()),
    )
    start = np.arange(n, dtype="float64")
    nwb.trials = TimeIntervals(  # lists: HDF5IO stores them extendable, as add_trial would
        name="trials",
        description="trials",
        id=ElementIdentifiers(name="id", data=list(range(n))),
        columns=[
            VectorData(name="start_time", description="start", data=start.tolist()),
            VectorData(name="stop_time", description="stop", data=(start + 0.5).tolist()),
        ],
    )
    data: Any = np.arange(n, dtype="float64")
    if hdf5:
        from hdmf.backends.hdf5 import H5DataIO

        data = H5DataIO(data, maxshape=(None,))
    nwb.add_acquisition(TimeSeries(name="ts", data=data, unit="V", rate=30.0))
    return nwb


def measure(io_cls: type, path: str, n: int, rows: int, opens: int, samples: int, hdf5: bool = False) -> dict:
    """Seconds per appended row (or sample) of each step at table size ``n``, with ``io_cls``."""
    from hdmf.data_utils import append_data

    out: dict[str, Any] = {}
    with io_cls(path, mode="w") as io:
        io.write(base_file(n, hdf5))
    template = path + ".template"
    _copy(path, template)

    start = time.perf_counter()
    with io_cls(path, mode="a") as io:
        nwb = io.read()
        for i in range(rows):
            nwb.add_trial(start_time=float(n + i), stop_time=float(n + i) + 0.5)
        io.write(nwb)
    out["loop"] = (time.perf_counter() - start) / rows
    _check(io_cls, path, out, "loop", lambda nwb: len(nwb.trials) == n + rows)

    _copy(template, path)
    start = time.perf_counter()
    for i in range(opens):
        with io_cls(path, mode="a") as io:
            nwb = io.read()
            nwb.add_trial(start_time=float(n + i), stop_time=float(n + i) + 0.5)
            io.write(nwb)
    out["per open"] = (time.perf_counter() - start) / opens
    _check(io_cls, path, out, "per open", lambda nwb: len(nwb.trials) == n + opens)

    _copy(template, path)
    start = time.perf_counter()
    with io_cls(path, mode="a") as io:
        nwb = io.read()
        data = nwb.acquisition["ts"].data
        for i in range(samples):
            append_data(data, float(i))
        io.write(nwb)
    out["samples"] = (time.perf_counter() - start) / samples
    _check(io_cls, path, out, "samples", lambda nwb: len(nwb.acquisition["ts"].data) == n + samples)
    return out


def _check(io_cls: type, path: str, out: dict[str, Any], step: str, stored: Any) -> None:
    """A step whose appends are not in the file when it is read again has no time (it prints n/a)."""
    with io_cls(path, mode="r") as io:
        if not stored(io.read()):
            out[step] = None
            out[f"{step} error"] = "the appends are not in the file read again"


def _copy(source: str, target: str) -> None:
    if Path(target).is_dir():
        shutil.rmtree(target)
    if Path(source).is_dir():
        shutil.copytree(source, target)
    else:
        shutil.copyfile(source, target)


def run(work: Path, sizes: list[int], rows: int, opens: int, samples: int, rival: bool = True) -> dict[str, Any]:
    """Every step at every size, with every backend (files in ``work``)."""
    from pynwb import NWBHDF5IO

    from hdmf_zarr3 import NWBZarrIO

    out: dict[str, Any] = {"sizes": sizes, "rows": rows, "opens": opens, "samples": samples, "backends": {}}
    for name, io_cls, suffix in (("ours", NWBZarrIO, ".nwb.zarr"), ("hdf5", NWBHDF5IO, ".nwb")):
        out["backends"][name] = {
            str(n): measure(io_cls, str(work / f"appends_{n}{suffix}"), n, rows, opens, samples, hdf5=name == "hdf5")
            for n in sizes
        }
    res = None
    if rival:
        res = _rival.call(
            "appends",
            {"sizes": sizes, "rows": rows, "opens": opens, "samples": samples, "dir": str(work)},
            timeout=300,
        )
    out["backends"]["hdmf-zarr 0.14"] = res or {}
    return out


def report(r: dict[str, Any]) -> None:
    """Print the table (ms per row or sample) and the ratios ours/HDF5 of one :func:`run`."""
    b = r["backends"]
    print(
        f"  loop: {r['rows']} add_trial + one write; per open: {r['opens']} x (open a + read + add_trial + "
        f"write + close); samples: {r['samples']} appended to a TimeSeries; ms per row or sample"
    )
    rows = []
    for name in BACKENDS:
        for n in r["sizes"]:
            got = b[name].get(str(n)) or {}
            rows.append([f"{name} N={n}", *(fmt(None if got.get(s) is None else got[s] * 1e3) for s in STEPS)])
    print(table(["backend, table size", *(f"{s} ms" for s in STEPS)], rows))
    for name in BACKENDS:
        for n in r["sizes"]:
            for step in STEPS:
                error = (b[name].get(str(n)) or {}).get(f"{step} error") or b[name].get(f"{n} error")
                if error:
                    print(f"  {name} N={n} {step}: n/a ({error})")
    print("  ratios (time of ours / time of HDF5; <1 = ours faster):")
    for step in STEPS:
        for n in r["sizes"]:
            ours, hdf5 = (b[k].get(str(n), {}).get(step) for k in ("ours", "hdf5"))
            print(ratio_line(f"append {step} ours/HDF5", ratio(ours, hdf5), note=f"N={n}"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,60000", help="table sizes, comma-separated")
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--opens", type=int, default=20)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--no-rival", action="store_true", help="skip hdmf-zarr 0.14")
    args = parser.parse_args()
    print("(e) appends")
    sizes = [int(s) for s in args.sizes.split(",")]
    with workdir() as work:
        report(run(work, sizes, args.rows, args.opens, args.samples, not args.no_rival))


if __name__ == "__main__":
    main()
