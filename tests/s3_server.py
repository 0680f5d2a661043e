"""A real S3 API (moto's server) on 127.0.0.1 for tests; no other network is used."""

from __future__ import annotations

import contextlib
import functools
import uuid
from collections.abc import Iterator
from typing import Any


def list_moto_modules_once() -> None:
    """Make moto's server list its own package once, not at every request.

    For every request, moto's server asks ``moto.backends.list_of_moto_modules()`` whether the host names one
    of its services, which lists moto's package directory and stats each of its ~190 entries: a third of the
    server's time in our S3 tests (profiled: 1.25 of 3.3 s). The list cannot change while the server runs.
    ``tests/storage/test_s3.py::test_moto_lists_its_modules_once`` fails when moto stops calling it so.
    """
    from moto import backends

    if getattr(backends.list_of_moto_modules, "listed_once", False):
        return
    modules = tuple(backends.list_of_moto_modules())

    def listed() -> tuple[str, ...]:
        return modules

    listed.listed_once = True  # type: ignore[attr-defined]
    backends.list_of_moto_modules = listed


@contextlib.contextmanager
def s3_server() -> Iterator[dict[str, Any]]:
    """Start moto's S3 server on a free loopback port; yield obstore options and a boto3 client factory."""
    import boto3
    from moto.server import ThreadedMotoServer

    list_moto_modules_once()

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
