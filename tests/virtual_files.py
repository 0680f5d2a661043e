"""A small HDF5 NWB file with a chunked gzip + shuffle ephys series and a contiguous imaging series, each
just over the 1 MiB from which convert(virtual=True) reads datasets in place (issue #20 tests)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import numpy as np
from dateutil.tz import tzutc
from hdmf.backends.hdf5 import H5DataIO
from pynwb import NWBHDF5IO, NWBFile, TimeSeries
from pynwb.ecephys import ElectricalSeries

RNG = np.random.default_rng(0)
EPHYS = RNG.integers(-2000, 2000, size=(60_000, 16), dtype=np.int16)  # 1.9 MB, chunked gzip + shuffle
IMAGING = RNG.normal(size=(300, 40, 40)).astype(np.float32)  # 1.9 MB, contiguous


def hdf5_source(path: Path) -> Path:
    nwb = NWBFile("virtual", "virtual", datetime(2024, 1, 1, tzinfo=tzutc()))
    device = nwb.create_device("probe")
    group = nwb.create_electrode_group("shank", "a shank", "brain", device)
    for _ in range(16):
        nwb.add_electrode(group=group, location="brain")
    region = nwb.create_electrode_table_region(list(range(16)), "all")
    nwb.add_acquisition(
        ElectricalSeries(
            name="ephys",
            data=H5DataIO(EPHYS, chunks=(10_000, 16), compression="gzip", shuffle=True),
            electrodes=region,
            rate=30_000.0,
        )
    )
    nwb.add_acquisition(TimeSeries(name="imaging", data=IMAGING, unit="a.u.", rate=30.0))
    nwb.add_acquisition(TimeSeries(name="small", data=np.arange(10.0), unit="s", rate=1.0))
    nwb.add_trial(start_time=0.0, stop_time=1.0)
    with NWBHDF5IO(path, "w") as io:
        io.write(nwb)
    return path
