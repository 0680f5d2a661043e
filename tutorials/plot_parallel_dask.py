"""
Parallel writes with Dask
=========================

A recording too large for memory, or produced by a computation, can be written from a Dask array:
hdmf_zarr3 hands the array to Dask, which writes it in parallel, one task per stored object. This
tutorial builds a lazy Dask array for an ElectricalSeries, writes it with the default threaded
scheduler and then on a ``distributed`` cluster, and reads it back as a Dask array to compute a mean
per channel without loading the recording.
"""

# %%
# A lazy recording
# ----------------
# Here each block of the recording is made by a function, the way a block would be read from an
# acquisition system's raw files: nothing is computed until the array is written. 20 s of 64
# channels at 30 kHz (73 MiB as int16), in blocks of 100,000 samples.
import datetime
import os
import time
from collections import Counter

import dask.array as da
import numpy as np
import zarr
from dask.utils import key_split
from distributed import Client, LocalCluster, get_task_stream
from pynwb import NWBFile
from pynwb.ecephys import ElectricalSeries

from hdmf_zarr3 import NWBZarrIO, ZarrDataIO

n_samples, n_channels = 600_000, 64


def load_block(block_info=None):
    """The samples of one block: noise seeded by where the block starts, so every call agrees."""
    (start, stop), (first, last) = block_info[None]["array-location"]
    rng = np.random.default_rng(start)
    return rng.normal(0, 50, size=(stop - start, last - first)).astype("int16")


recording = da.map_blocks(load_block, chunks=((100_000,) * 6, (n_channels,)), dtype="int16")
print(recording)


def session(data, identifier):
    """An NWB file holding ``data`` as its ElectricalSeries."""
    nwbfile = NWBFile(
        session_description="dask tutorial",
        identifier=identifier,
        session_start_time=datetime.datetime(2025, 1, 1, 10, 0, tzinfo=datetime.UTC),
    )
    device = nwbfile.create_device(name="probe")
    group = nwbfile.create_electrode_group("shank0", description="a shank", location="CA1", device=device)
    for _ in range(n_channels):
        nwbfile.add_electrode(group=group, location="CA1")
    electrodes = nwbfile.create_electrode_table_region(list(range(n_channels)), "all electrodes")
    nwbfile.add_acquisition(ElectricalSeries(name="ephys", data=data, electrodes=electrodes, rate=30_000.0))
    return nwbfile


# %%
# Write it with Dask
# ------------------
# Wrap the Dask array in :class:`~hdmf_zarr3.ZarrDataIO` (HDMF's own type checks refuse a bare Dask
# array). Here the array is stored in chunks of 1 s and shards of 5 s: four shards, so four objects.
# The writer rechunks the Dask array to the shards and stores it with ``dask.array.store``: each task
# encodes one whole shard and writes it, and no two tasks ever touch the same object, so no locks
# are needed. Without shards, each task writes one chunk.
data = ZarrDataIO(recording, chunks=(30_000, n_channels), shards=(150_000, n_channels))
start = time.perf_counter()
with NWBZarrIO("threads.nwb.zarr", mode="w") as io:
    io.write(session(data, "dask-threads"))
print(f"written with the threaded scheduler in {time.perf_counter() - start:.2f} s")

arr = zarr.open_array("threads.nwb.zarr/acquisition/ephys/data", mode="r")
print("chunks", arr.chunks, "shards", arr.shards)
shard_files = sorted(
    os.path.relpath(os.path.join(folder, name), "threads.nwb.zarr/acquisition/ephys/data")
    for folder, _, names in os.walk("threads.nwb.zarr/acquisition/ephys/data/c")
    for name in names
)
print("stored objects:", shard_files)
assert len(shard_files) == 4

# %%
# Write it on a ``distributed`` cluster
# -------------------------------------
# With a ``distributed`` client active, the same write runs on the cluster's workers. The tasks
# carry only the store, the array's path and its metadata, so they also run on workers in other
# processes or on other machines (with a store that all of them reach, such as S3). Here a small
# in-process cluster with two threads is enough to watch the tasks. The task stream shows the six
# tasks that make the source blocks (``load_block``), the tasks that cut them to the shard grid
# (``rechunk-split``), and one store step per shard (``store-map``). Dask fuses each store step with
# the merge that assembles the shard's samples, so each of the four ``rechunk-merge-store-map``
# tasks builds one whole shard, encodes it and writes it as one object.
with (
    LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster,
    Client(cluster) as client,
):
    print(client)
    with get_task_stream(client) as stream:
        with NWBZarrIO("cluster.nwb.zarr", mode="w") as io:
            io.write(
                session(
                    ZarrDataIO(recording, chunks=(30_000, n_channels), shards=(150_000, n_channels)), "dask-cluster"
                )
            )
    names = Counter(key_split(task["key"]) for task in stream.data)
    print("tasks run:", dict(names))
    print("store steps:", names["store-map"], "for", len(shard_files), "shards")
    assert names["store-map"] == 4

# %%
# Read it back as a Dask array
# ----------------------------
# ``read(dask=True)`` hands out numeric datasets of 64 MiB or more as Dask arrays with one block
# per shard (or per chunk, when unsharded); smaller ones stay the usual lazy datasets. Reductions
# then run block by block, in parallel, without ever holding the whole recording in memory.
with NWBZarrIO("cluster.nwb.zarr", mode="r") as io:
    nwb = io.read(dask=True)
    ephys = nwb.acquisition["ephys"].data
    print(ephys)
    print("the electrode ids stay a", type(nwb.electrodes.id.data).__name__)
    assert not isinstance(nwb.electrodes.id.data, da.Array)
    mean = ephys.mean(axis=0)  # still lazy
    start = time.perf_counter()
    per_channel = mean.compute()
    print(f"mean per channel, computed in {time.perf_counter() - start:.2f} s:", np.round(per_channel[:8], 3))

    assert isinstance(ephys, da.Array) and ephys.chunks[0] == (150_000,) * 4
    np.testing.assert_allclose(per_channel, recording.mean(axis=0).compute())
    np.testing.assert_array_equal(ephys[:1000, :4].compute(), recording[:1000, :4].compute())
