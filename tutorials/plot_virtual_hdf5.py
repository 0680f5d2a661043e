"""
Open an HDF5 NWB file as Zarr without copying its data
======================================================

This tutorial writes an HDF5 NWB file with PyNWB (a compressed, chunked ephys recording), turns it into a
Zarr v3 file, an icechunk repository, whose bulk data stays in the HDF5 file, and reads it back. Only
the metadata, the small datasets and the tables are written; the recording's chunks are byte ranges of
the HDF5 file, read in place. See :doc:`/virtual` for the design and its limits.
"""

# %%
# An HDF5 file, as most NWB files are
# -----------------------------------
# Four seconds of 32 channels at 30 kHz, chunked and compressed with gzip and shuffle as NeuroConv
# would, plus a few trials.
import datetime
import os
import shutil

import numpy as np
from hdmf.backends.hdf5 import H5DataIO
from pynwb import NWBHDF5IO, NWBFile
from pynwb.ecephys import ElectricalSeries

import hdmf_zarr3
from hdmf_zarr3 import NWBZarrIO, SourceChangedError

os.makedirs("virtual_tutorial", exist_ok=True)
SOURCE = os.path.join("virtual_tutorial", "session.nwb")
REPOSITORY = os.path.join("virtual_tutorial", "session.icechunk")
shutil.rmtree(REPOSITORY, ignore_errors=True)  # (a repository is created, never replaced)

recording = np.random.default_rng(0).integers(-500, 500, size=(120_000, 32), dtype=np.int16)
nwbfile = NWBFile(
    session_description="virtual tutorial",
    identifier="virtual-1",
    session_start_time=datetime.datetime(2025, 1, 1, 10, 0, tzinfo=datetime.UTC),
)
probe = nwbfile.create_device(name="probe")
shank = nwbfile.create_electrode_group("shank", description="one shank", location="CA1", device=probe)
for _ in range(32):
    nwbfile.add_electrode(group=shank, location="CA1")
electrodes = nwbfile.create_electrode_table_region(list(range(32)), "all channels")
data = H5DataIO(recording, chunks=(30_000, 32), compression="gzip", compression_opts=4, shuffle=True)
nwbfile.add_acquisition(ElectricalSeries(name="ephys", data=data, electrodes=electrodes, rate=30_000.0))
for start in range(4):
    nwbfile.add_trial(start_time=float(start), stop_time=start + 0.5)
with NWBHDF5IO(SOURCE, "w") as io:
    io.write(nwbfile)

# %%
# Convert it virtually
# --------------------
# ``virtual=True`` writes everything but the large numeric datasets as any conversion does, and makes
# each large dataset an array of virtual chunks. The report says what became of every dataset the
# conversion met, and why a dataset was copied. From a shell: ``hdmf-zarr3 convert --virtual SRC DST``.
report = hdmf_zarr3.convert(SOURCE, REPOSITORY, virtual=True)
for path, what in report.items():
    print(f"{path}: {what}")


def size(path: str) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


print(f"HDF5 file: {os.path.getsize(SOURCE) / 2**20:.1f} MiB; repository: {size(REPOSITORY) / 2**10:.0f} KiB")

# %%
# Read it back
# ------------
# ``NWBZarrIO`` opens the repository by its path. The recording reads exactly as h5py reads it from the
# HDF5 file: a window across all channels, one channel.
with NWBZarrIO(REPOSITORY, mode="r") as io:
    nwb = io.read()
    series = nwb.acquisition["ephys"]
    window = series.data[30_000:60_000, :]
    channel = series.data[:, 5]
    print(window.shape, channel.shape, np.array_equal(window, recording[30_000:60_000]))
    print(nwb.trials.to_dataframe())

# %%
# ``hdmf-zarr3 info`` shows which arrays are virtual and where their bytes live.
from hdmf_zarr3.cli import main  # noqa: E402

main(["info", REPOSITORY])

# %%
# A changed source is refused
# ---------------------------
# The repository records the HDF5 file's size and modification time. If the file changes, its bytes
# may no longer be where the repository says, so opening the repository is refused instead of
# returning wrong data. (Touching the file is enough to show it.)
stat = os.stat(SOURCE)
os.utime(SOURCE, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
try:
    NWBZarrIO(REPOSITORY, mode="r")
except SourceChangedError as err:
    print("refused:", err)

# %%
# To keep the data without the HDF5 file, convert the repository (made again from the file as it is)
# to a native Zarr or HDF5 file: every byte is copied.
shutil.rmtree(REPOSITORY)
hdmf_zarr3.convert(SOURCE, REPOSITORY, virtual=True)
hdmf_zarr3.convert(REPOSITORY, os.path.join("virtual_tutorial", "copy.nwb.zarr"))
print(sorted(os.listdir("virtual_tutorial")))
