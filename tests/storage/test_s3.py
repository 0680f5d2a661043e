"""Files on S3 (a real S3 API served by moto on 127.0.0.1): what is particular to object stores, and clear
failures. The modes and export run on S3 with every other store (``any_store``, test_stores.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hdmf.backends.errors import UnsupportedOperation
from hdmf.build import DatasetBuilder, GroupBuilder
from nwb_factories import small_nwbfile
from parallel_iterators import ArrayIterator
from pynwb import NWBHDF5IO, TimeSeries
from s3_server import new_bucket, public_file
from writing import write_nwb
from zarr.storage import WrapperStore

from hdmf_zarr3 import CorruptStoreError, NWBZarrIO, ParallelWriteWarning, StoreError, UnsafeLinkError, ZarrIO

pytest.importorskip("moto", reason="the S3 tests need moto (pip install '.[test]')")


def test_write_then_read_with_a_second_client(s3):
    url = f"s3://{new_bucket(s3)}/sessions/a.nwb.zarr"
    write_nwb(url, storage_options=s3["options"])
    keys = [o["Key"] for o in s3["client"]().list_objects_v2(Bucket=url.split("/")[2])["Contents"]]
    assert "sessions/a.nwb.zarr/zarr.json" in keys and "sessions/a.nwb.zarr/acquisition/ts/data/c.0" in keys
    with NWBZarrIO(url, mode="r", storage_options=dict(s3["options"])) as io:
        nwb = io.read()
        assert np.array_equal(nwb.acquisition["ts"].data[:], np.arange(1000.0))
        assert list(nwb.units.to_dataframe()["quality"]) == ["good", "noise"]


def test_parallel_writes_to_s3_are_serial_with_a_warning(s3):
    url = f"s3://{new_bucket(s3)}/f.zarr"
    iterator = ArrayIterator(np.arange(20), chunk_shape=(5,), buffer_shape=(5,))
    with (
        pytest.warns(ParallelWriteWarning, match="object stores reached by URL: /d"),
        ZarrIO(url, mode="w", storage_options=s3["options"]) as io,
    ):
        io.write_builder(GroupBuilder("root", datasets={"d": DatasetBuilder("d", iterator)}), number_of_jobs=2)
    with ZarrIO(url, mode="r", storage_options=s3["options"]) as io:
        assert np.array_equal(io.read_builder()["d"].data[:], np.arange(20))


def test_missing_bucket_is_a_clear_error(s3):
    with pytest.raises(StoreError, match="s3://no-such-bucket-here/f.nwb.zarr"):
        NWBZarrIO("s3://no-such-bucket-here/f.nwb.zarr", mode="r", storage_options=s3["options"])


def test_wrong_credentials_are_a_clear_error(s3, monkeypatch):
    url = f"s3://{new_bucket(s3)}/f.nwb.zarr"
    write_nwb(url, storage_options=s3["options"])
    from moto import settings

    monkeypatch.setattr(settings, "INITIAL_NO_AUTH_ACTION_COUNT", 0)  # moto now checks every signature
    wrong = {**s3["options"], "access_key_id": "AKIAWRONGWRONGWRONG1", "secret_access_key": "wrong"}
    with pytest.raises(StoreError, match=r"cannot access s3://.*/f\.nwb\.zarr"):
        NWBZarrIO(url, mode="r", storage_options=wrong)


def test_a_missing_file_is_a_clear_error(s3):
    url = f"s3://{new_bucket(s3)}/never-written.nwb.zarr"
    with pytest.raises(UnsupportedOperation, match="no Zarr group found"):
        NWBZarrIO(url, mode="r", storage_options=s3["options"])


class DepthStore(WrapperStore):
    """Counts requests and the longest chain of requests that had to wait for one another."""

    def __init__(self, store):
        super().__init__(store)
        self.requests = 0
        self.depth = 0
        self._done = 0  # the deepest request finished so far

    async def _track(self, coroutine):
        self.requests += 1
        level = self._done + 1
        self.depth = max(self.depth, level)
        try:
            return await coroutine
        finally:
            self._done = max(self._done, level)

    async def get(self, key, prototype, byte_range=None):
        return await self._track(super().get(key, prototype, byte_range))

    async def exists(self, key):
        return await self._track(super().exists(key))

    async def get_partial_values(self, prototype, key_ranges):
        return await self._track(super().get_partial_values(prototype, key_ranges))


def _depth_of_read(url, options):
    from hdmf_zarr3.storage.handles.store_opening import open_store

    store = DepthStore(open_store(url, "r", options).store)
    with NWBZarrIO(store, mode="r") as io:
        io.read()
    return store.depth, store.requests


def test_opening_and_reading_costs_a_constant_number_of_sequential_requests(s3):
    depths = {}
    for series in (2, 40):
        nwb = small_nwbfile()
        for i in range(series):
            nwb.add_acquisition(TimeSeries(name=f"s{i}", data=np.arange(10.0), unit="V", rate=1.0))
        url = f"s3://{new_bucket(s3)}/f.nwb.zarr"
        write_nwb(url, nwb, storage_options=s3["options"])
        depths[series] = _depth_of_read(url, s3["options"])
    (small_depth, small_requests), (large_depth, large_requests) = depths[2], depths[40]
    assert large_requests == small_requests  # a TimeSeries' data is fetched when indexed, not by read()
    # the root (with every document, the values of scalars and cached specifications), then the tiny arrays
    assert small_depth == large_depth <= 2, depths


def test_anonymous_reads_need_no_credentials(s3):
    url = public_file(s3)
    anonymous = {
        "endpoint": s3["endpoint"],
        "region": "us-east-1",
        "client_options": {"allow_http": True},
        "anon": True,
    }
    with NWBZarrIO(url, mode="r", storage_options=anonymous) as io:
        assert np.array_equal(io.read().acquisition["ts"].data[:5], np.arange(5.0))


def test_links_between_files_in_a_bucket_resolve_relative_to_the_file(s3, tmp_path):
    bucket = new_bucket(s3)
    raw_url, derived_url = f"s3://{bucket}/raw/r.nwb.zarr", f"s3://{bucket}/derived/d.nwb.zarr"
    write_nwb(raw_url, storage_options=s3["options"])
    with NWBZarrIO(raw_url, mode="r", storage_options=s3["options"]) as raw_io:
        raw = raw_io.read()
        derived = small_nwbfile()
        derived.add_acquisition(TimeSeries(name="linked", data=raw.acquisition["ts"].data, unit="m", rate=1.0))
        with NWBZarrIO(derived_url, mode="w", storage_options=s3["options"]) as io:
            io.write(derived, link_data=True)
    import json

    client = s3["client"]()
    links = json.loads(
        client.get_object(Bucket=bucket, Key="derived/d.nwb.zarr/acquisition/linked/zarr.json")["Body"].read()
    )["attributes"]["zarr_link"]
    assert links[0]["source"] == "../raw/r.nwb.zarr"  # relative to the directory holding the file
    with NWBZarrIO(derived_url, mode="r", storage_options=s3["options"]) as io:
        with pytest.raises(UnsafeLinkError, match="external_roots"):  # it leaves derived/: not by default
            io.read()
    with NWBZarrIO(derived_url, mode="r", storage_options=s3["options"], external_roots=[f"s3://{bucket}"]) as io:
        assert np.array_equal(io.read().acquisition["linked"].data[:], np.arange(1000.0))


def test_cli_converts_inspects_and_validates_files_on_s3(s3, tmp_path, capsys):
    import json

    from hdmf_zarr3.cli import main

    options = json.dumps(s3["options"])
    h5 = tmp_path / "s.nwb"
    with NWBHDF5IO(str(h5), mode="w") as io:
        io.write(small_nwbfile())
    bucket = new_bucket(s3)
    url, tuned = f"s3://{bucket}/s.nwb.zarr", f"s3://{bucket}/tuned.nwb.zarr"
    assert main(["convert", "--no-progress", str(h5), url, "--storage-options", options]) == 0
    assert main(["info", url, "--storage-options", options]) == 0
    assert "ts/  <core:TimeSeries>" in capsys.readouterr().out
    assert main(["validate", url, "--storage-options", options]) == 0
    assert (
        main(
            [
                "convert",
                "--no-progress",
                url,
                tuned,
                "--src-storage-options",
                options,
                "--storage-options",
                options,
                "--codec",
                "zstd:5",
                "--chunk-key-separator",
                ".",
            ]
        )
        == 0
    )
    keys = {o["Key"] for o in s3["client"]().list_objects_v2(Bucket=bucket)["Contents"]}
    assert "tuned.nwb.zarr/acquisition/ts/data/c.0" in keys
    back = tmp_path / "back.nwb"
    assert main(["convert", "--no-progress", tuned, str(back), "--src-storage-options", options]) == 0
    with NWBHDF5IO(str(back), mode="r") as io:
        assert np.array_equal(io.read().acquisition["ts"].data[:], np.arange(1000.0))
    capsys.readouterr()
    assert main(["convert", str(back), f"s3://{bucket}/x.nwb"]) == 1
    assert "HDF5 files are converted from and to local paths only" in capsys.readouterr().err


def test_an_object_larger_than_its_metadata_allows_is_refused_before_its_bytes_are_read(s3):
    """As a local file (tests/backend/test_hostile_chunks.py), an object of an object store is read only when
    it is no larger than one storage object of its array may take, or one node document: its size comes with
    the response, before the body, so a hostile 64 MiB chunk of a 8 KiB array costs nothing to refuse."""
    bucket = new_bucket(s3)
    url = f"s3://{bucket}/a.nwb.zarr"
    write_nwb(url, storage_options=s3["options"])
    client = s3["client"]()
    client.put_object(Bucket=bucket, Key="a.nwb.zarr/acquisition/ts/data/c.0", Body=b"\0" * 64 * 2**20)
    with NWBZarrIO(url, mode="r", storage_options=dict(s3["options"])) as io:
        data = io.read().acquisition["ts"].data
        with pytest.raises(CorruptStoreError, match=r"/acquisition/ts/data: chunk c\.0 is 67108864 bytes, more than"):
            data[:10]


def test_node_documents_downloading_at_once_stay_within_an_allowance(s3, monkeypatch):
    """A file read node by node (not consolidated: here mode ``r-``) asks for every document at once; each is
    within its limit, and together the bodies downloading at once stay within the store's allowance (two
    documents at their limit), while ordinary documents still download side by side."""
    from hdmf_zarr3.storage.remote import allowance
    from hdmf_zarr3.storage.remote.remote_object_store import RemoteObjectStore

    bucket = new_bucket(s3)
    url = f"s3://{bucket}/a.nwb.zarr"
    write_nwb(url, storage_options=s3["options"])
    client = s3["client"]()
    keys = [o["Key"] for o in client.list_objects_v2(Bucket=bucket)["Contents"] if o["Key"].endswith("/zarr.json")]
    padded = [k for k in keys if k.count("/") == 2][:12]  # nodes one level below the root
    for key in padded:
        doc = json.loads(client.get_object(Bucket=bucket, Key=key)["Body"].read())
        doc["attributes"]["pad"] = "x" * 2**20  # 1 MiB: a large, legal document
        client.put_object(Bucket=bucket, Key=key, Body=json.dumps(doc).encode())
    monkeypatch.setattr(allowance, "DOCUMENTS_IN_FLIGHT", 3 * 2**20)
    with ZarrIO(url, mode="r-", storage_options=dict(s3["options"])) as io:
        assert len(io.read_builder()["acquisition"]["ts"]["data"].data) == 1000
        store = io.store_handle.store
        assert isinstance(store, RemoteObjectStore)
        assert 2**20 < store.documents_in_flight.most <= 3 * 2**20


def test_moto_lists_its_modules_once():
    """The S3 tests' server lists moto's package once (``s3_server.list_moto_modules_once``): this fails when
    moto's server no longer asks ``backends.list_of_moto_modules()`` for every request, or answers otherwise."""
    import inspect
    import os

    import moto
    from moto import backends
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication
    from s3_server import list_moto_modules_once

    assert "backends.list_of_moto_modules()" in inspect.getsource(DomainDispatcherApplication.get_backend_for_host)
    list_moto_modules_once()
    package = os.path.dirname(moto.__file__)
    listed = sorted(
        name for name in os.listdir(package) if os.path.isdir(os.path.join(package, name)) and not name.startswith("__")
    )
    assert list(backends.list_of_moto_modules()) == listed and "s3" in listed
    assert backends.list_of_moto_modules() is backends.list_of_moto_modules()  # (listed once, not per call)
