"""Benchmark (b): an NWB file of many small objects, written and read by NWBZarrIO and NWBHDF5IO.

Builds its own data: N TimeSeries, U units with spike times and electrode regions, 384 electrodes,
T trials. Prints times and ratios measured in one run. Usage:
    python benchmarks/many_small_objects.py [--series 500] [--units 1000] [--trials 200]
"""

from __future__ import annotations

import argparse
import datetime
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from hdmf.common import DynamicTable
from pynwb import NWBHDF5IO, NWBFile, TimeSeries

from hdmf_zarr3 import NWBZarrIO


def build(series: int, units: int, trials: int, electrodes: int = 384) -> NWBFile:
    rng = np.random.default_rng(0)
    nwb = NWBFile(session_description="many small objects", identifier="bench",
                  session_start_time=datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC))
    device = nwb.create_device(name="probe")
    group = nwb.create_electrode_group("shank", description="s", location="CA1", device=device)
    for _ in range(electrodes):
        nwb.add_electrode(group=group, location="CA1")
    for i in range(series):
        nwb.add_acquisition(TimeSeries(name=f"ts{i:04d}", data=rng.random(100), unit="V", rate=10.0))
    for u in range(units):
        nwb.add_unit(spike_times=np.sort(rng.uniform(0, 100, rng.integers(1, 50))), electrodes=[u % electrodes])
    for t in range(trials):
        nwb.add_trial(start_time=float(t), stop_time=t + 0.5)
    return nwb


def tables(nwb: NWBFile) -> int:
    frames = [obj.to_dataframe() for obj in nwb.objects.values() if isinstance(obj, DynamicTable)]
    return sum(len(f) for f in frames)


def measure(io_cls, path: Path, args) -> dict[str, float]:
    nwb = build(args.series, args.units, args.trials)
    t0 = time.perf_counter()
    with io_cls(str(path), mode="w") as io:
        io.write(nwb)
    write = time.perf_counter() - t0
    t0 = time.perf_counter()
    with io_cls(str(path), mode="r") as io:
        back = io.read()
        read = time.perf_counter() - t0
        t0 = time.perf_counter()
        tables(back)
        frames = time.perf_counter() - t0
    return {"write": write, "read": read, "read+tables": read + frames}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--series", type=int, default=500)
    parser.add_argument("--units", type=int, default=1000)
    parser.add_argument("--trials", type=int, default=200)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="hdmf_zarr3_bench_"))
    try:
        zarr = measure(NWBZarrIO, tmp / "f.nwb.zarr", args)
        hdf5 = measure(NWBHDF5IO, tmp / "f.nwb", args)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"many small objects: {args.series} TimeSeries, {args.units} units, 384 electrodes, {args.trials} trials")
    print(f"{'step':<14}{'zarr3 s':>10}{'hdf5 s':>10}{'zarr3/hdf5':>12}")
    for key in zarr:
        print(f"{key:<14}{zarr[key]:>10.2f}{hdf5[key]:>10.2f}{zarr[key] / hdf5[key]:>12.2f}")


if __name__ == "__main__":
    main()
