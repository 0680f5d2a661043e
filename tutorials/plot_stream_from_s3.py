"""
Write an NWB file to S3 and stream parts of it back
===================================================

This tutorial runs a local S3 API (moto's server, on 127.0.0.1 only), writes a recording to a bucket
with :class:`hdmf_zarr3.NWBZarrIO`, and reads it back the way an analyst reads a file on DANDI:
open it (one request for all metadata), then fetch only the window and the channel you look at.
With a real bucket, drop the server and the ``endpoint`` and ``client_options`` options.
"""

# %%
# Start a local S3 API and make a bucket
# --------------------------------------
import datetime

import boto3
import numpy as np
from moto.server import ThreadedMotoServer
from pynwb import NWBFile
from pynwb.ecephys import ElectricalSeries

from hdmf_zarr3 import NWBZarrIO

server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
host, port = server.get_host_and_port()
endpoint = f"http://{host}:{port}"
boto3.client(
    "s3", endpoint_url=endpoint, aws_access_key_id="testing", aws_secret_access_key="testing", region_name="us-east-1"
).create_bucket(Bucket="lab-data")
storage_options = {
    "endpoint": endpoint,
    "region": "us-east-1",
    "access_key_id": "testing",
    "secret_access_key": "testing",
    "client_options": {"allow_http": True},
}

# %%
# Write a 64-channel recording straight to the bucket
# ---------------------------------------------------
nwbfile = NWBFile(
    session_description="streaming tutorial",
    identifier="s3-1",
    session_start_time=datetime.datetime(2025, 1, 1, 10, 0, tzinfo=datetime.UTC),
)
device = nwbfile.create_device(name="probe")
group = nwbfile.create_electrode_group("shank0", description="a shank", location="CA1", device=device)
for _ in range(64):
    nwbfile.add_electrode(group=group, location="CA1")
rng = np.random.default_rng(0)
data = rng.normal(0, 50, (30_000 * 10, 64)).astype("int16")  # 10 s at 30 kHz
nwbfile.add_acquisition(
    ElectricalSeries(
        name="ephys", data=data, rate=30_000.0, electrodes=nwbfile.create_electrode_table_region(list(range(64)), "all")
    )
)
url = "s3://lab-data/sessions/s3-1.nwb.zarr"
with NWBZarrIO(url, mode="w", storage_options=storage_options) as io:
    io.write(nwbfile)

# %%
# Stream a window and a channel back
# ----------------------------------
# ``read()`` fetches metadata and small values only; indexing the data fetches the chunks it needs.
with NWBZarrIO(url, mode="r", storage_options=storage_options) as io:
    ephys = io.read().acquisition["ephys"]
    window = ephys.data[30_000:60_000, :]  # second 1 to 2, all channels
    channel = ephys.data[:, 5]  # one channel, all of time
    print(window.shape, channel.shape, ephys.data.chunks)
    assert np.array_equal(window, data[30_000:60_000]) and np.array_equal(channel, data[:, 5])

server.stop()
