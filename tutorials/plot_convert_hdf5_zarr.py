"""
Convert between HDF5 and Zarr
=============================

This tutorial writes a small NWB file to HDF5 with PyNWB, converts it to Zarr v3 with
:func:`hdmf_zarr3.convert`, checks that the chunk shape and compression of the HDF5 dataset carried
over, converts the Zarr file back to HDF5 and compares the data. It ends with the same conversion on
the command line and the ``info`` command, which prints the layout of every array.
"""

# %%
# Write an HDF5 NWB file with a chunked, compressed dataset
# ---------------------------------------------------------
# :class:`hdmf.backends.hdf5.H5DataIO` sets the HDF5 storage of one dataset: here chunks of 10,000
# samples by all 16 channels, gzip level 4 with the byte shuffle filter (the usual NWB setting).
import datetime
import json

import h5py
import numpy as np
import zarr
from hdmf.backends.hdf5 import H5DataIO
from pynwb import NWBHDF5IO, NWBFile
from pynwb.ecephys import ElectricalSeries

from hdmf_zarr3 import NWBZarrIO, convert
from hdmf_zarr3.cli import main

nwbfile = NWBFile(
    session_description="conversion tutorial",
    identifier="convert-1",
    session_start_time=datetime.datetime(2025, 1, 1, 10, 0, tzinfo=datetime.UTC),
)
device = nwbfile.create_device(name="probe")
group = nwbfile.create_electrode_group("shank0", description="a shank", location="CA1", device=device)
for _ in range(16):
    nwbfile.add_electrode(group=group, location="CA1")
electrodes = nwbfile.create_electrode_table_region(list(range(16)), "all electrodes")
traces = np.random.default_rng(0).normal(0, 50, size=(60_000, 16)).astype("int16")  # 2 s at 30 kHz
compressed = H5DataIO(traces, chunks=(10_000, 16), compression="gzip", compression_opts=4, shuffle=True)
nwbfile.add_acquisition(ElectricalSeries(name="ephys", data=compressed, electrodes=electrodes, rate=30_000.0))
nwbfile.add_trial(start_time=0.0, stop_time=1.0)
nwbfile.add_trial(start_time=1.0, stop_time=2.0)

with NWBHDF5IO("session.nwb", mode="w") as io:
    io.write(nwbfile)

with h5py.File("session.nwb", "r") as f:
    dset = f["acquisition/ephys/data"]
    print(
        "HDF5:",
        dset.shape,
        dset.dtype,
        "chunks",
        dset.chunks,
        dset.compression,
        dset.compression_opts,
        "shuffle" if dset.shuffle else "no shuffle",
    )

# %%
# Convert it to Zarr
# ------------------
# :func:`~hdmf_zarr3.convert` picks the direction from the two paths: a destination ending in
# ``.zarr`` (or ``.zarr.zip``) is written as Zarr, anything else as HDF5. Arrays are copied block by
# block, so memory use does not depend on the size of the file; ``progress=True`` shows a progress
# bar for large datasets.
convert("session.nwb", "session.nwb.zarr")

# %%
# The layout carried over
# -----------------------
# The chunk shape is kept, and HDF5's shuffle-then-deflate becomes the closest core Zarr v3 codec:
# ``blosc`` using ``zlib`` at the same level with byte ``shuffle``. Any Zarr v3 reader sees it, in the
# array's ``zarr.json`` or through ``zarr.open_array``.
arr = zarr.open_array("session.nwb.zarr/acquisition/ephys/data", mode="r")
print("Zarr: ", arr.shape, arr.dtype, "chunks", arr.chunks, "shards", arr.shards)

with open("session.nwb.zarr/acquisition/ephys/data/zarr.json") as f:
    document = json.load(f)
for key in ("shape", "data_type", "chunk_grid", "codecs"):
    print(f"zarr.json {key}: {json.dumps(document[key])}")

assert arr.chunks == (10_000, 16)
blosc = arr.compressors[0].to_dict()["configuration"]
assert (blosc["cname"], blosc["clevel"], blosc["shuffle"]) == ("zlib", 4, "shuffle")
assert np.array_equal(arr[:], traces)

# %%
# Read the Zarr file with PyNWB
# -----------------------------
# :class:`~hdmf_zarr3.NWBZarrIO` reads it like ``NWBHDF5IO`` reads the original; tables and object
# references (such as the electrode table's ``group`` column) come through.
with NWBZarrIO("session.nwb.zarr", mode="r") as io:
    read_back = io.read()
    print(read_back.acquisition["ephys"].data[:2, :6])
    print(read_back.trials.to_dataframe())
    print(read_back.electrodes.to_dataframe()[["location", "group_name"]].head(3))

# %%
# Convert back to HDF5
# --------------------
# Going back, :func:`~hdmf_zarr3.convert` writes each array with the chunk shape of the Zarr array and
# the HDF5 filters matching its codecs (``blosc`` with ``zlib`` and byte shuffle becomes gzip with
# shuffle again); arrays are also made appendable along their first axis.
convert("session.nwb.zarr", "roundtrip.nwb")

with h5py.File("roundtrip.nwb", "r") as f:
    dset = f["acquisition/ephys/data"]
    print(
        "HDF5 again:",
        dset.shape,
        "chunks",
        dset.chunks,
        dset.compression,
        dset.compression_opts,
        "shuffle" if dset.shuffle else "no shuffle",
        "maxshape",
        dset.maxshape,
    )
    assert dset.chunks == (10_000, 16) and dset.compression == "gzip" and dset.shuffle

with NWBHDF5IO("session.nwb", mode="r") as original, NWBHDF5IO("roundtrip.nwb", mode="r") as roundtrip:
    a, b = original.read(), roundtrip.read()
    assert np.array_equal(a.acquisition["ephys"].data[:], b.acquisition["ephys"].data[:])
    assert a.trials.to_dataframe().equals(b.trials.to_dataframe())
    assert a.object_id == b.object_id  # object ids are kept too
    print("round trip: data, trials and object ids are identical")

# %%
# The same on the command line
# ----------------------------
# The package installs an ``hdmf-zarr3`` command. In a shell, the conversion above is
#
# .. code-block:: console
#
#    $ hdmf-zarr3 convert session.nwb session.nwb.zarr
#    $ hdmf-zarr3 info session.nwb.zarr
#
# Here we call the same entry point from Python; :func:`hdmf_zarr3.cli.main` takes the argument
# list and returns the exit status. ``info`` prints every group with its neurodata type and every
# array with its shape, HDMF dtype, chunks, shards, codecs and its size in memory and on disk.
status = main(["convert", "--no-progress", "session.nwb", "cli.nwb.zarr"])
assert status == 0
status = main(["info", "cli.nwb.zarr"])
assert status == 0
