"""One writer at a time: a second writer on a file open for writing gets FileLockedError naming the
holder (local directories and zips: an exclusively created lock file beside the file; object stores:
a conditional write, If-None-Match); readers are never blocked; a crashed writer's lock is reported as
stale and is broken only explicitly, with break_lock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import zarr
from hdmf.build import DatasetBuilder, GroupBuilder
from s3_server import new_bucket, s3_server

from hdmf_zarr3 import FileLockedError, ZarrIO, break_lock


def _tree(n: int = 3) -> GroupBuilder:
    return GroupBuilder("root", datasets={"d": DatasetBuilder("d", list(range(n)))})


def _write(path, **kwargs) -> None:
    with ZarrIO(path, mode="w", **kwargs) as io:
        io.write_builder(_tree())


@pytest.mark.parametrize("name", ["f.zarr", "f.zarr.zip"])
@pytest.mark.parametrize("second", ["a", "r+", "w"])
def test_a_second_writer_is_refused_while_the_first_is_open(tmp_path, name, second):
    path = tmp_path / name
    _write(path)
    first = ZarrIO(path, mode="a")
    try:
        with pytest.raises(FileLockedError, match=f"open for writing by process {os.getpid()}") as caught:
            ZarrIO(path, mode=second)
        assert str(path) in str(caught.value) and "no longer running" not in str(caught.value)
        with ZarrIO(path, mode="r") as reader:  # readers are not blocked
            assert list(reader.read_builder()["d"].data[:]) == [0, 1, 2]
    finally:
        first.close()
    with ZarrIO(path, mode="a") as again:  # released on close
        again.read_builder()
    assert not Path(str(path) + ".lock").exists()


def test_the_lock_lives_beside_the_file_not_in_it(tmp_path):
    path = tmp_path / "f.zarr"
    with ZarrIO(path, mode="w") as io:
        io.write_builder(_tree())
        assert (tmp_path / "f.zarr.lock").is_file()
        assert not any("lock" in p.name for p in path.rglob("*"))


def _hold(path: Path, ready: str = "ready") -> subprocess.Popen:
    code = textwrap.dedent(f"""
        import sys
        from hdmf_zarr3 import ZarrIO
        io = ZarrIO({str(path)!r}, mode="a")
        print({ready!r}, flush=True)
        sys.stdin.readline()
        io.close()
    """)
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == ready
    return child


def test_a_writer_in_another_process_holds_the_lock_until_it_closes(tmp_path):
    path = tmp_path / "f.zarr"
    _write(path)
    child = _hold(path)
    try:
        with pytest.raises(FileLockedError, match=f"process {child.pid} ") as caught:
            ZarrIO(path, mode="a")
        assert "stale" not in str(caught.value)
    finally:
        child.communicate("\n", timeout=60)
    with ZarrIO(path, mode="a"):
        pass


def test_a_crashed_writer_leaves_a_stale_lock_that_can_be_broken(tmp_path):
    path = tmp_path / "f.zarr"
    _write(path)
    child = _hold(path)
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=60)
    with pytest.raises(FileLockedError, match="no longer running: the lock is stale") as caught:
        ZarrIO(path, mode="a")
    assert "break_lock" in str(caught.value)
    holder = break_lock(path)
    assert holder["pid"] == child.pid and holder["host"]
    assert break_lock(path) is None  # nothing left to break
    with ZarrIO(path, mode="a") as io:
        assert list(io.read_builder()["d"].data[:]) == [0, 1, 2]


def test_a_store_passed_in_is_locked_inside_it():
    store = zarr.storage.MemoryStore()
    _write(store)
    first = ZarrIO(store, mode="a")
    try:
        with pytest.raises(FileLockedError):
            ZarrIO(store, mode="r+")
    finally:
        first.close()
    with ZarrIO(store, mode="a"):
        pass
    assert break_lock(store) is None


def test_object_stores_lock_with_a_conditional_write(tmp_path):
    with s3_server() as server:
        bucket = new_bucket(server)
        url, options = f"s3://{bucket}/session.nwb.zarr", server["options"]
        _write(url, storage_options=options)
        first = ZarrIO(url, mode="a", storage_options=options)
        try:
            keys = [o["Key"] for o in server["client"]().list_objects_v2(Bucket=bucket)["Contents"]]
            assert "session.nwb.zarr.lock" in keys  # beside the file, not inside it
            with pytest.raises(FileLockedError, match=f"process {os.getpid()}"):
                ZarrIO(url, mode="a", storage_options=options)
            with ZarrIO(url, mode="r", storage_options=options) as reader:
                assert list(reader.read_builder()["d"].data[:]) == [0, 1, 2]
        finally:
            first.close()
        # a crashed writer's lock (left behind, as if its process died): refused, then broken explicitly
        stale = ZarrIO(url, mode="a", storage_options=options)
        stale._handle.lock._held = False  # forget it without removing it
        with pytest.raises(FileLockedError):
            ZarrIO(url, mode="a", storage_options=options)
        assert break_lock(url, storage_options=options)["pid"] == os.getpid()
        with ZarrIO(url, mode="a", storage_options=options):
            pass


def test_an_open_that_fails_releases_the_lock(tmp_path):
    from hdmf_zarr3 import ModeError

    path = tmp_path / "f.zarr"
    _write(path)
    with pytest.raises(ModeError, match="new files only"):
        ZarrIO(path, mode="a", convention="hdmf-zarr")
    assert not Path(str(path) + ".lock").exists()
    with ZarrIO(path, mode="a"):
        pass
