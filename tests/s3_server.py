"""A real S3 API (moto's server) on 127.0.0.1 for tests; no other network is used."""

from __future__ import annotations

import contextlib
import functools
import uuid
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def s3_server() -> Iterator[dict[str, Any]]:
    """Start moto's S3 server on a free loopback port; yield obstore options and a boto3 client factory."""
    import boto3
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        options = {
            "endpoint": endpoint,
            "access_key_id": "testing",
            "secret_access_key": "testing",
            "region": "us-east-1",
            "client_options": {"allow_http": True},
        }

        @functools.cache
        def client() -> Any:
            # one client for the session (boto3's clients are thread-safe): making one took a quarter of a
            # second, paid by every new bucket of the fault sweeps
            return boto3.client(
                "s3",
                endpoint_url=endpoint,
                aws_access_key_id="testing",
                aws_secret_access_key="testing",
                region_name="us-east-1",
            )

        yield {"options": options, "client": client, "endpoint": endpoint}
    finally:
        server.stop()


def new_bucket(server: dict[str, Any]) -> str:
    name = f"test-{uuid.uuid4().hex[:12]}"
    server["client"]().create_bucket(Bucket=name)
    return name


def public_file(server: dict[str, Any]) -> str:
    """The URL of the small NWB file (``small_nwbfile()``) written to a fresh bucket whose policy lets
    anyone read it (a public dataset)."""
    from writing import write_nwb

    bucket = new_bucket(server)
    url = f"s3://{bucket}/public.nwb.zarr"
    write_nwb(url, storage_options=server["options"])
    make_public(server, bucket)
    return url


def make_public(server: dict[str, Any], bucket: str) -> None:
    """Let anyone read (and list) ``bucket``, as a public dataset's bucket does."""
    import json

    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": "*",
                "Action": ["s3:GetObject", "s3:ListBucket"],
                "Resource": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"],
            }
        ],
    }
    server["client"]().put_bucket_policy(Bucket=bucket, Policy=json.dumps(policy))
