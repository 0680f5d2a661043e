"""
Tune chunks, shards and codecs
==============================

How an array is cut and compressed decides how fast it is written, how fast each kind of read is,
how much space it takes and how many objects it is stored as. This tutorial writes the same
extracellular recording with the default layout and with several
:class:`~hdmf_zarr3.ZarrDataIO` variants, and for each one prints the layout Zarr reports, the
number of objects and bytes stored, and the time to read one channel and one time window.
"""

# %%
# The default layout
# ------------------
# Without a :class:`~hdmf_zarr3.ZarrDataIO`, every array gets a layout chosen by the package's layout
# policy (``hdmf_zarr3.format.layout.policy``; the measurements behind it are in the performance
# notes of the documentation):
#
# - **codec**: ``blosc`` with ``lz4`` and bit-shuffle for numbers, fast to encode with a good ratio
#   on integer ephys data (``zstd`` level 3 for strings);
# - **chunks** of about 4 MiB, the unit of reading. A long 2-d series with more than 128 channels is
#   cut into blocks of 64 channels, so that reading one channel does not read the whole file; arrays
#   of 3 or more dimensions (imaging) keep whole frames in a chunk;
# - **shards**, the unit of storage, only for arrays of 256 MiB or more: about 128 MiB of whole
#   chunks per stored object, spanning all channels. Smaller arrays are not sharded, because reading
#   a chunk of a sharded array costs an extra request for the shard's index.
#
# The policy's functions compute these shapes without writing anything:
import datetime
import os
import time

import numpy as np
import zarr
from pynwb import NWBFile
from pynwb.ecephys import ElectricalSeries
from zarr.codecs import BloscCodec, ZstdCodec

from hdmf_zarr3 import NWBZarrIO, ZarrDataIO, convert
from hdmf_zarr3.format.layout.policy import chunk_shape, shard_shape
from hdmf_zarr3.format.vocabulary.dtypes import for_hdmf_dtype

int16 = for_hdmf_dtype("int16")
for shape in [(300_000, 64), (1_398_000, 384), (20_000, 512, 512)]:
    chunks = chunk_shape(shape, int16)
    print(f"int16 {shape}: chunks {chunks}, shards {shard_shape(shape, chunks, int16)}")

# %%
# A recording to store
# --------------------
# Ten seconds of 64 channels at 30 kHz, as int16 (36.6 MiB): a shared 8 Hz oscillation plus noise, so
# that it compresses about as well as real recordings do.
rng = np.random.default_rng(0)
n_samples, n_channels = 300_000, 64
t = np.arange(n_samples) / 30_000.0
lfp = 200 * np.sin(2 * np.pi * 8 * t)[:, None] * rng.uniform(0.5, 1.0, n_channels)
traces = (lfp + rng.normal(0, 20, size=(n_samples, n_channels))).astype("int16")
print(traces.shape, traces.dtype, f"{traces.nbytes / 2**20:.1f} MiB")


def write(name, data):
    """Write ``data`` as the ElectricalSeries of a new file; return the path and the seconds it took."""
    nwbfile = NWBFile(
        session_description="layout tutorial",
        identifier=name,
        session_start_time=datetime.datetime(2025, 1, 1, 10, 0, tzinfo=datetime.UTC),
    )
    device = nwbfile.create_device(name="probe")
    group = nwbfile.create_electrode_group("shank0", description="a shank", location="CA1", device=device)
    for _ in range(n_channels):
        nwbfile.add_electrode(group=group, location="CA1")
    electrodes = nwbfile.create_electrode_table_region(list(range(n_channels)), "all electrodes")
    nwbfile.add_acquisition(ElectricalSeries(name="ephys", data=data, electrodes=electrodes, rate=30_000.0))
    path = f"{name}.nwb.zarr"
    start = time.perf_counter()
    with NWBZarrIO(path, mode="w") as io:
        io.write(nwbfile)
    return path, time.perf_counter() - start


def codec_names(arr):
    """The compressors of an array (of its inner chunks, when sharded), in short form."""
    names = []
    for codec in arr.compressors:
        config = codec.to_dict().get("configuration", {})
        if codec.to_dict()["name"] == "blosc":
            names.append(f"blosc-{config['cname']}-{config['shuffle']}-{config['clevel']}")
        else:
            names.append(f"{codec.to_dict()['name']}-{config.get('level', '')}".rstrip("-"))
    return "+".join(names) or "none"


def best_time(read, repeat=3):
    """The fastest of ``repeat`` runs of ``read()``, in milliseconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        read()
        times.append(time.perf_counter() - start)
    return 1000 * min(times)


rows = []


def report(name, data=None, written=None):
    """Write one variant (or take one ``written`` as ``(path, seconds)``), check what Zarr reports and
    what reads back, and time two reads."""
    path, seconds = written if written is not None else write(name, data)
    array_path = f"{path}/acquisition/ephys/data"
    arr = zarr.open_array(array_path, mode="r")
    objects = [os.path.join(folder, f) for folder, _, files in os.walk(f"{array_path}/c") for f in files]
    stored = sum(os.path.getsize(f) for f in objects)
    with NWBZarrIO(path, mode="r") as io:
        dataset = io.read().acquisition["ephys"].data
        assert np.array_equal(dataset[:, 5], traces[:, 5])
        assert np.array_equal(dataset[30_000:60_000], traces[30_000:60_000])
        channel_ms = best_time(lambda: dataset[:, 5])  # one channel, all 10 s
        window_ms = best_time(lambda: dataset[30_000:60_000])  # 1 s, all channels
    row = dict(
        name=name,
        chunks=arr.chunks,
        shards=arr.shards,
        codecs=codec_names(arr),
        objects=len(objects),
        mib=stored / 2**20,
        ratio=traces.nbytes / stored,
        write_s=seconds,
        channel_ms=channel_ms,
        window_ms=window_ms,
    )
    rows.append(row)
    print(
        f"{name}: chunks {arr.chunks}, shards {arr.shards}, codecs {row['codecs']}, {len(objects)} objects, "
        f"{row['mib']:.1f} MiB stored ({row['ratio']:.2f}x); write {seconds:.2f} s, "
        f"one channel {channel_ms:.1f} ms, 1 s window {window_ms:.1f} ms"
    )
    return arr


# %%
# Default layout
# --------------
# 36.6 MiB is under the sharding threshold, and 64 channels are not split: ten chunks of 32,768
# samples by all channels, each one object on disk.
arr = report("default", traces)
assert arr.shards is None and arr.chunks == (32_768, 64)

# %%
# Another compressor
# ------------------
# ``compressors`` takes zarr codec objects (or their JSON form). Plain ``zstd`` level 3 is
# hdmf-zarr's default; ``blosc`` with ``zstd`` at level 1 and bit-shuffle compresses a little better
# than the default lz4, which encodes about twice as fast on large recordings (see the performance
# notes). Chunks and shards stay at their defaults.
report("zstd", ZarrDataIO(traces, compressors=[ZstdCodec(level=3)]))
report("blosc-zstd", ZarrDataIO(traces, compressors=[BloscCodec(cname="zstd", clevel=1, shuffle="bitshuffle")]))

# %%
# Small chunks, with and without shards
# -------------------------------------
# Chunks of 0.1 s make short windows cheap to read but create many objects: a hundred here, and tens
# of thousands for a long recording, each one a request on object storage. ``shards`` groups whole
# chunks into one stored object (each dimension a multiple of ``chunks``); every chunk can still be
# read on its own, through the index at the end of the shard. ``shards=None`` turns sharding off;
# the default, ``"policy"``, shards only arrays of 256 MiB or more, and ``"auto"`` always shards, as
# zarr's ``create_array(shards="auto")`` does.
report("small-chunks", ZarrDataIO(traces, chunks=(3_000, 64), shards=None))
arr = report("small-chunks-sharded", ZarrDataIO(traces, chunks=(3_000, 64), shards=(150_000, 64)))
assert arr.chunks == (3_000, 64) and arr.shards == (150_000, 64)

# %%
# Chunks of a few channels
# ------------------------
# If the file is mostly read a channel at a time (spike sorting one electrode, plotting one trace),
# chunks that span few channels and a long time serve that best: a channel read decodes 1/8 of the
# data here, while the 1 s window across all channels reads 8 chunks.
arr = report("channel-blocks", ZarrDataIO(traces, chunks=(30_000, 8), shards=(150_000, 64)))
assert arr.chunks == (30_000, 8) and arr.shards == (150_000, 64)

# %%
# Change the layout of a file already written
# -------------------------------------------
# A file keeps the layout it was written with. :func:`hdmf_zarr3.convert` copies a Zarr file into a
# new one and, with ``chunks``, ``shards`` and ``codec``, gives some or all of its arrays a new
# layout on the way (the other arrays keep theirs); ``"auto"`` means the default layout. The
# command line does the same::
#
#     hdmf-zarr3 convert default.nwb.zarr relaid.nwb.zarr --codec zstd:3 \
#         --chunks /acquisition/ephys/data=30000,8 --shards /acquisition/ephys/data=150000,64
source = "default.nwb.zarr"  # written by the first variant above
start = time.perf_counter()
convert(
    source,
    "relaid.nwb.zarr",
    chunks={"/acquisition/ephys/data": (30_000, 8)},
    shards={"/acquisition/ephys/data": (150_000, 64)},
    codec="zstd:3",
)
arr = report("convert: relaid", written=("relaid.nwb.zarr", time.perf_counter() - start))
assert arr.chunks == (30_000, 8) and arr.shards == (150_000, 64)

# %%
# Summary
# -------
# Timings are of warm reads from a local disk (the fastest of three), so they mostly measure
# decoding; on remote storage the number of requests weighs more. They vary between runs and
# machines: compare them with each other, not with the numbers of another computer.
header = (
    f"{'variant':<22}{'chunks':<14}{'shards':<14}{'codecs':<28}{'objects':>8}{'MiB':>7}{'ratio':>7}"
    f"{'write s':>9}{'channel ms':>12}{'window ms':>11}"
)
print(header)
print("-" * len(header))
for row in rows:
    print(
        f"{row['name']:<22}{str(row['chunks']):<14}{str(row['shards']):<14}{row['codecs']:<28}"
        f"{row['objects']:>8}{row['mib']:>7.1f}{row['ratio']:>7.2f}{row['write_s']:>9.2f}"
        f"{row['channel_ms']:>12.1f}{row['window_ms']:>11.1f}"
    )
