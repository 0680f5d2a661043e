"""Small NWB files shared by tests."""

from __future__ import annotations

import datetime

import numpy as np
from dateutil.tz import tzutc
from pynwb import NWBFile, TimeSeries


def small_nwbfile(n_samples: int = 1000) -> NWBFile:
    nwb = NWBFile(
        session_description="test session",
        identifier="TEST123",
        session_start_time=datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=tzutc()),
    )
    nwb.add_acquisition(TimeSeries(name="ts", data=np.arange(n_samples, dtype="float64"), unit="m", rate=30.0))
    nwb.add_unit_column("quality", "a text column")
    nwb.add_unit(spike_times=[0.1, 0.2, 0.3], quality="good")
    nwb.add_unit(spike_times=[1.5], quality="noise")
    nwb.add_trial(start_time=0.0, stop_time=1.0)
    nwb.add_trial(start_time=1.0, stop_time=2.0)
    return nwb
