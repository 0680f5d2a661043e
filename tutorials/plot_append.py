"""
Append to a file
================

This tutorial writes a small NWB file, reopens it with mode ``"a"`` to add a processing module, a
units table and more trials, and reads back the old and the new data together. It also shows what
protects a file while it is being changed: a second writer is refused with
:class:`~hdmf_zarr3.FileLockedError`, and an append that fails is undone.
"""

# %%
# Write a first version
# ---------------------
# A lick sensor recorded at 100 Hz, and two trials.
import datetime
import os

import numpy as np
from hdmf.data_utils import DataChunkIterator
from pynwb import NWBFile, TimeSeries
from pynwb.behavior import Position, SpatialSeries

from hdmf_zarr3 import FileLockedError, NWBZarrIO

PATH = "session.nwb.zarr"

nwbfile = NWBFile(
    session_description="append tutorial",
    identifier="append-1",
    session_start_time=datetime.datetime(2025, 1, 1, 10, 0, tzinfo=datetime.UTC),
)
lick = np.random.default_rng(0).random(200).astype("float32")
nwbfile.add_acquisition(TimeSeries(name="lick", data=lick, unit="V", rate=100.0))
nwbfile.add_trial(start_time=0.0, stop_time=1.0)
nwbfile.add_trial(start_time=1.0, stop_time=2.0)

with NWBZarrIO(PATH, mode="w") as io:
    io.write(nwbfile)

# %%
# Reopen it for appending
# -----------------------
# Mode ``"a"`` (or ``"r+"``) opens an existing file for reading and writing. ``read()`` gives the
# file's containers; anything added to them is written by the next ``write()``. While the file is
# open for writing it holds a lock, a small ``session.nwb.zarr.lock`` file *beside* the Zarr
# directory, so that two writers can never interleave their changes.
io = NWBZarrIO(PATH, mode="a")
print("files in the directory:", sorted(os.listdir(".")))

# %%
# A second writer is refused
# --------------------------
# Another ``NWBZarrIO`` in a writing mode, from this process or any other, gets
# :class:`~hdmf_zarr3.FileLockedError`, naming the process and host that hold the lock. Readers
# are not locked out, but from the first change an append makes to the file (rows added to a table
# already in the file are written at once) until its ``write()`` returns, the file is marked as being
# written, and a reader opening it then gets :class:`~hdmf_zarr3.IncompleteFileError` instead of a
# half-written file. The lock goes away when the writer closes the file; a writer that crashed
# leaves it behind, and it is removed only on purpose, with :func:`hdmf_zarr3.break_lock`.
try:
    NWBZarrIO(PATH, mode="a")
except FileLockedError as error:
    print("second writer refused:", str(error).split(". ")[0])

with NWBZarrIO(PATH, mode="r") as reader:
    print("a reader still opens it:", list(reader.read().acquisition))

# %%
# Add containers and rows
# -----------------------
# New containers (a processing module with a position series, a units table) are written as new
# groups; rows added to a table already in the file (the trials) are appended to its columns.
nwb = io.read()
behavior = nwb.create_processing_module(name="behavior", description="processed behavioral data")
xy = np.cumsum(np.random.default_rng(1).normal(0, 0.01, size=(500, 2)), axis=0)
position = Position(name="position")
position.add_spatial_series(SpatialSeries(name="xy", data=xy, reference_frame="arena center", rate=50.0))
behavior.add(position)
nwb.add_trial(start_time=2.0, stop_time=3.0)
nwb.add_unit(spike_times=[0.12, 0.57, 1.31, 2.40])
nwb.add_unit(spike_times=[0.88, 2.05])
io.write(nwb)
io.close()  # releases the lock
print("files in the directory:", sorted(os.listdir(".")))

# %%
# Read old and new data together
# ------------------------------
with NWBZarrIO(PATH, mode="r") as io:
    nwb = io.read()
    print("acquisition:", list(nwb.acquisition), "processing:", list(nwb.processing))
    assert np.array_equal(nwb.acquisition["lick"].data[:], lick)  # the first version's data
    stored_xy = nwb.processing["behavior"]["position"]["xy"].data
    assert np.array_equal(stored_xy[:], xy)
    print("position:", stored_xy.shape, stored_xy.dtype)
    print(nwb.trials.to_dataframe())
    print(nwb.units.to_dataframe())
    assert nwb.trials["start_time"][:].tolist() == [0.0, 1.0, 2.0]

# %%
# A failed append is undone
# -------------------------
# If ``write()`` fails part way, say a data source raises while its values are being streamed into
# the file, everything the append had already written is removed again, rows appended to existing
# tables included, and the file reads exactly as before. Here a series is streamed from a generator
# that fails after its first block.


def samples_from_a_flaky_device():
    yield np.zeros(100)
    raise OSError("the acquisition device went away")


with NWBZarrIO(PATH, mode="a") as io:
    nwb = io.read()
    nwb.add_acquisition(
        TimeSeries(name="flaky", data=DataChunkIterator(samples_from_a_flaky_device()), unit="V", rate=1000.0)
    )
    nwb.add_trial(start_time=3.0, stop_time=4.0)
    try:
        io.write(nwb)
    except OSError as error:
        print("append failed:", error)

with NWBZarrIO(PATH, mode="r") as io:
    nwb = io.read()
    print("after the failed append:", list(nwb.acquisition), "trials:", len(nwb.trials))
    assert "flaky" not in nwb.acquisition and len(nwb.trials) == 3

# %%
# Extend a dataset in place
# -------------------------
# Datasets read in mode ``"a"`` or ``"r+"`` can also be extended directly, along their first axis,
# with ``append`` (one element) and ``extend`` (several): here 100 more lick samples.
more = np.random.default_rng(2).random(100).astype("float32")
with NWBZarrIO(PATH, mode="r+") as io:
    data = io.read().acquisition["lick"].data
    data.extend(more)
with NWBZarrIO(PATH, mode="r") as io:
    data = io.read().acquisition["lick"].data
    print("lick samples:", data.shape)
    assert np.array_equal(data[:], np.concatenate([lick, more]))
