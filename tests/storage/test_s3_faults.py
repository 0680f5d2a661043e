"""Files on S3 under faults and concurrent writers (issue #27): moto's server on 127.0.0.1, faults injected by a
proxy in front of it (s3_faults.py) or at the lock. Each test failed before its fix."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from hdmf.build import DatasetBuilder, GroupBuilder
from s3_server import new_bucket
from writing import write_builder, write_nwb

from hdmf_zarr3 import FileLockedError, StoreError, ZarrIO
from hdmf_zarr3.storage import locks

pytest.importorskip("moto", reason="the S3 tests need moto (pip install '.[test]')")


def _keys(s3, bucket):
    return sorted(o["Key"] for o in s3["client"]().list_objects_v2(Bucket=bucket).get("Contents", []))


def _root(*names):
    return GroupBuilder("root", datasets={n: DatasetBuilder(n, np.arange(5) + i) for i, n in enumerate(names)})


def _s3store(s3, bucket, prefix):
    import obstore.store

    o = s3["options"]
    return obstore.store.S3Store(
        bucket,
        prefix=prefix,
        endpoint=o["endpoint"],
        access_key_id=o["access_key_id"],
        secret_access_key=o["secret_access_key"],
        region=o["region"],
        client_options=o["client_options"],
    )


# --- 1. mode w at a bucket root keeps its own lock -----------------------------------------------------------
def test_w_at_a_bucket_root_keeps_its_lock_while_it_clears_the_old_file(s3):
    bucket = new_bucket(s3)
    url, options = f"s3://{bucket}", s3["options"]
    write_nwb(url, storage_options=options)
    with ZarrIO(url, mode="w", storage_options=options) as io:
        io.write_builder(_root("d"))  # the old file is cleared when the first node is written
        assert locks.IN_STORE_KEY in _keys(s3, bucket)
        with pytest.raises(FileLockedError):
            ZarrIO(url, mode="a", storage_options=options)
    assert locks.IN_STORE_KEY not in _keys(s3, bucket)
    with ZarrIO(url, mode="r", storage_options=options) as io:
        assert np.array_equal(io.read_builder()["d"].data[:], np.arange(5))


# --- 2. an appender reads the root only once it holds the lock ----------------------------------------------
def test_an_appender_whose_lock_is_slow_loses_no_other_appenders_write(s3, monkeypatch):
    url, options = f"s3://{new_bucket(s3)}/f.zarr", s3["options"]
    write_builder(url, _root("base"), storage_options=options)
    original = locks.WriteLock.acquire.__func__
    slowed = []

    def slow_acquire(cls, place, location, writer, _retry=True):
        if not slowed:  # the first appender's lock PUT is slow: the second appends and closes meanwhile
            slowed.append(True)
            with ZarrIO(url, mode="a", storage_options=options) as other:
                other.write_builder(_root("base", "second"))
        return original(cls, place, location, writer, _retry)

    monkeypatch.setattr(locks.WriteLock, "acquire", classmethod(slow_acquire))
    with ZarrIO(url, mode="a", storage_options=options) as io:
        io.write_builder(_root("base", "first"))
    monkeypatch.undo()
    with ZarrIO(url, mode="r", storage_options=options) as io:
        names = set(io.read_builder().datasets)
    assert names == {"base", "first", "second"}


# --- 3. one lock for one file, however it is spelled --------------------------------------------------------
@pytest.mark.parametrize("first", ["url", "store"])
def test_a_file_opened_by_url_and_by_s3store_has_one_lock(s3, first):
    bucket = new_bucket(s3)
    url, options = f"s3://{bucket}/dir/f.zarr", s3["options"]
    write_builder(url, _root("base"), storage_options=options)
    spellings = {
        "url": lambda: ZarrIO(url, mode="a", storage_options=options),
        "store": lambda: ZarrIO(_s3store(s3, bucket, "dir/f.zarr"), mode="a"),
    }
    second = "store" if first == "url" else "url"
    io = spellings[first]()
    try:
        with pytest.raises(FileLockedError):
            spellings[second]()
    finally:
        io.close()
    with spellings[second]() as again:  # released: the other spelling gets it now
        again.write_builder(_root("base", "x"))
    assert not [k for k in _keys(s3, bucket) if k.endswith(".lock") or k.endswith(locks.IN_STORE_KEY)]


# --- 4. mode w refuses a prefix holding objects that are no Zarr file ---------------------------------------
@pytest.mark.parametrize("where", ["prefix", "bucket"])
@pytest.mark.parametrize("mode", ["w", "a", "w-"])
def test_a_write_into_a_prefix_of_other_objects_is_refused(s3, where, mode):
    bucket = new_bucket(s3)
    s3["client"]().put_object(Bucket=bucket, Key="data/notes/readme.txt", Body=b"mine")
    url = f"s3://{bucket}/data" if where == "prefix" else f"s3://{bucket}"
    with pytest.raises(StoreError, match=r"other objects.*data/notes/readme\.txt") as caught:
        ZarrIO(url, mode=mode, storage_options=s3["options"])
    assert caught.value.path.rstrip("/") == url
    assert _keys(s3, bucket) == ["data/notes/readme.txt"]


def test_w_over_a_previous_file_at_a_prefix_is_still_allowed(s3):
    bucket = new_bucket(s3)
    url, options = f"s3://{bucket}/data", s3["options"]
    write_builder(url, _root("old"), storage_options=options)
    write_builder(url, _root("new"), storage_options=options)
    with ZarrIO(url, mode="r", storage_options=options) as io:
        assert set(io.read_builder().datasets) == {"new"}
    assert not [k for k in _keys(s3, bucket) if "/old/" in k]
