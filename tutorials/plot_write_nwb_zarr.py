"""
Write an NWB file to Zarr v3 and read it back
=============================================

This tutorial writes a small extracellular electrophysiology session with :class:`hdmf_zarr3.NWBZarrIO`,
reads it back lazily, appends trials to it, and opens one of its arrays with plain ``zarr``.
"""

# %%
# Build an NWB file
# -----------------
import datetime

import numpy as np
import zarr
from pynwb import NWBFile
from pynwb.ecephys import ElectricalSeries

from hdmf_zarr3 import NWBZarrIO

nwbfile = NWBFile(
    session_description="tutorial session",
    identifier="tutorial-1",
    session_start_time=datetime.datetime(2025, 1, 1, 10, 0, tzinfo=datetime.UTC),
)
device = nwbfile.create_device(name="probe")
group = nwbfile.create_electrode_group("shank0", description="a shank", location="CA1", device=device)
for _ in range(8):
    nwbfile.add_electrode(group=group, location="CA1")
electrodes = nwbfile.create_electrode_table_region(list(range(8)), "all electrodes")
traces = np.random.default_rng(0).integers(-500, 500, size=(30_000, 8), dtype="int16")
nwbfile.add_acquisition(ElectricalSeries(name="ephys", data=traces, electrodes=electrodes, rate=30_000.0))
nwbfile.add_trial(start_time=0.0, stop_time=0.5)

# %%
# Write it
# --------
# A Zarr file is a directory; ``.nwb.zarr`` is the conventional name.
with NWBZarrIO("tutorial.nwb.zarr", mode="w") as io:
    io.write(nwbfile)

# %%
# Read it back
# ------------
# Reading fetches the metadata of every node at once; array data is read when it is indexed.
with NWBZarrIO("tutorial.nwb.zarr", mode="r") as io:
    back = io.read()
    data = back.acquisition["ephys"].data
    print(type(data).__name__, data.shape, data.dtype)
    print(data[:3, :4])  # reads one chunk
    print(back.electrodes.to_dataframe().head())

# %%
# Append to it
# ------------
# Mode ``"a"`` adds rows to tables (and new containers) in place.
with NWBZarrIO("tutorial.nwb.zarr", mode="a") as io:
    back = io.read()
    back.add_trial(start_time=0.5, stop_time=1.0)
    io.write(back)
with NWBZarrIO("tutorial.nwb.zarr", mode="r") as io:
    print(io.read().trials.to_dataframe())

# %%
# Any Zarr v3 reader opens the arrays
# -----------------------------------
# The HDMF dtype of every array is recorded in the ``zarr_dtype`` attribute.
arr = zarr.open_array("tutorial.nwb.zarr/acquisition/ephys/data", mode="r")
print(arr.shape, arr.dtype, arr.attrs["zarr_dtype"], arr.chunks)

# %%
# Look at it in the browser
# -------------------------
# ``hdmf-zarr3 view tutorial.nwb.zarr`` opens the file on a local page: the tree by neurodata type, the
# electrodes and trials tables, the ElectricalSeries plotted with pan and zoom (see the viewer's page of
# this documentation). The view models it serves are plain functions too, here the first 100 ms of the
# recording, as the minimum and maximum of 50 pixel columns per channel:
from hdmf_zarr3.view import ViewedFile  # noqa: E402
from hdmf_zarr3.view.series import window  # noqa: E402

opened = ViewedFile("tutorial.nwb.zarr")
shown = window(opened, "/acquisition/ephys", start=0.0, stop=0.1, channels=[0, 1], width=50)
print(shown["decimation"], len(shown["t"]), "points per channel, in", shown["unit"])
opened.close()
