"""Files on S3 under faults and concurrent writers (issue #27): moto's server on 127.0.0.1, faults injected by a
proxy in front of it (s3_faults.py) or at the lock. Each test failed before its fix."""

from __future__ import annotations

import datetime
import signal
import threading
import time

import numpy as np
import pytest
from hdmf.build import DatasetBuilder, GroupBuilder
from s3_faults import fault_proxy, through
from s3_server import new_bucket
from writing import write_builder

from hdmf_zarr3 import FileLockedError, RemoteStoreError, StoreError, ZarrDataIO, ZarrIO, break_lock
from hdmf_zarr3.storage.remote.remote_object_store import DEFAULT_RETRY
from hdmf_zarr3.storage.safety import locks

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
    write_builder(url, _root("old"), storage_options=options)
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


# --- 6. failed requests: retried with a bound, then our typed error naming the node and the key ---------------
def _chunk(path):
    return path.split("?")[0].endswith(".zarr/d/c.0")


def _file(s3):
    url = f"s3://{new_bucket(s3)}/f.zarr"
    write_builder(url, _root("d"), storage_options=s3["options"])
    return url


def test_transient_server_errors_are_retried(s3):
    url = _file(s3)
    hits = []

    def twice(method, path, n):
        if _chunk(path):
            hits.append(path)
            return "5xx" if len(hits) <= 2 else None
        return None

    with fault_proxy(s3, twice) as proxy:
        with ZarrIO(url, mode="r", storage_options=through(proxy, s3["options"])) as io:
            assert np.array_equal(io.read_builder()["d"].data[:], np.arange(5))
    assert [a for m, p, a in proxy.requests if _chunk(p)] == ["5xx", "5xx", None]


@pytest.mark.parametrize("fault", ["5xx", "reset", "truncate"])
def test_a_read_that_keeps_failing_is_a_remote_store_error_naming_array_and_key(s3, fault):
    url = _file(s3)
    with fault_proxy(s3, lambda method, path, n: fault if _chunk(path) else None) as proxy:
        started = time.monotonic()
        with ZarrIO(url, mode="r", storage_options=through(proxy, s3["options"])) as io:
            data = io.read_builder()["d"].data
            with pytest.raises(RemoteStoreError, match=r"'d/c\.0' \(node /d\)") as caught:
                data[:]
    assert caught.value.path == f"{url}/d/c.0"
    assert time.monotonic() - started < 30
    tries = [p for m, p, a in proxy.requests if _chunk(p)]
    assert 1 < len(tries) <= 1 + DEFAULT_RETRY["max_retries"]  # retried, with a bound


def test_a_write_that_keeps_failing_is_a_remote_store_error_and_releases_the_lock(s3):
    bucket = new_bucket(s3)
    url = f"s3://{bucket}/f.zarr"
    fault = lambda method, path, n: "5xx" if method == "PUT" and _chunk(path) else None  # noqa: E731
    with fault_proxy(s3, fault) as proxy:
        with pytest.raises(RemoteStoreError, match=r"writing of 'd/c\.0' \(node /d\)"):
            write_builder(url, _root("d"), storage_options=through(proxy, s3["options"]))
    assert "f.zarr.lock" not in _keys(s3, bucket)


# --- 7. an endpoint that stops answering: bounded by default, overridable -----------------------------------
def test_requests_have_bounded_retries_by_default(s3):
    from hdmf_zarr3.storage.remote.object_stores import remote_store

    backend = remote_store("s3://bucket/f.zarr", "r", s3["options"]).store
    assert backend.retry_config["max_retries"] <= 5 and backend.retry_config["retry_timeout"].total_seconds() <= 30
    given = {
        **s3["options"],
        "client_options": {"allow_http": True, "timeout": "2s"},
        "retry_config": {"max_retries": 1},
    }
    backend = remote_store("s3://bucket/f.zarr", "r", given).store
    assert backend.client_options["timeout"] == "2s" and backend.retry_config["max_retries"] == 1


@pytest.mark.parametrize("mode", ["r", "a"])
def test_an_endpoint_that_never_answers_fails_in_bounded_time(s3, mode):
    url = _file(s3)
    quick = {
        "client_options": {"allow_http": True, "timeout": "1s", "connect_timeout": "1s"},
        "retry_config": {"max_retries": 1, "retry_timeout": datetime.timedelta(seconds=2)},
    }
    with fault_proxy(s3, lambda method, path, n: "hang") as proxy:
        started = time.monotonic()
        with pytest.raises(StoreError, match=r"s3://.*f\.zarr"):
            ZarrIO(url, mode=mode, storage_options=through(proxy, s3["options"], **quick))
        assert time.monotonic() - started < 15


# --- 8. no multipart upload is left behind --------------------------------------------------------------------
def test_large_chunks_are_single_puts_and_a_failed_one_leaves_no_upload(s3):
    bucket = new_bucket(s3)
    url = f"s3://{bucket}/f.zarr"
    big = np.random.default_rng(0).random(1_000_000)  # one chunk of 8 MB, hardly compressible

    def one_chunk():
        return GroupBuilder("root", datasets={"d": DatasetBuilder("d", ZarrDataIO(big, chunks=(1_000_000,)))})

    root = one_chunk()
    with fault_proxy(s3) as proxy:
        write_builder(url, root, storage_options=through(proxy, s3["options"]))
    assert "f.zarr/d/c.0" in _keys(s3, bucket)
    assert s3["client"]().head_object(Bucket=bucket, Key="f.zarr/d/c.0")["ContentLength"] > 5 * 2**20
    assert not [p for m, p, a in proxy.requests if "uploads" in p or "partNumber" in p]
    with ZarrIO(url, mode="r", storage_options=s3["options"]) as io:
        assert np.array_equal(io.read_builder()["d"].data[:], big)
    fault = lambda method, path, n: "reset" if method == "PUT" and _chunk(path) else None  # noqa: E731
    with fault_proxy(s3, fault) as proxy, pytest.raises(RemoteStoreError, match=r"d/c\.0"):
        write_builder(f"s3://{bucket}/g.zarr", one_chunk(), storage_options=through(proxy, s3["options"]))
    assert not s3["client"]().list_multipart_uploads(Bucket=bucket).get("Uploads")


# --- 9. concurrent processes: no acknowledged write lost, no mixed version read, a second writer refused ---------
_WORKER = r"""
import json, os, sys, time
import numpy as np
from hdmf.build import DatasetBuilder, GroupBuilder
from hdmf_zarr3 import FileLockedError, IncompleteFileError, ZarrIO

url, options, role, name, rendezvous, count = sys.argv[1:7]
options, count = json.loads(options), int(count)
open(os.path.join(rendezvous, name + ".ready"), "w").close()
while len([f for f in os.listdir(rendezvous) if f.endswith(".ready")]) < count:  # start together
    time.sleep(0.005)
refused, seen = 0, []
if role == "reader":  # read until every writer is done, and once more
    while True:
        last = len([f for f in os.listdir(rendezvous) if f.endswith(".done")]) == count - 1
        try:
            with ZarrIO(url, mode="r", storage_options=options) as io:
                builder = io.read_builder()
                seen.append({n: builder[n].data[:].tolist() for n in builder.datasets})
        except IncompleteFileError:
            seen.append("incomplete")
        if last:
            break
    print(json.dumps({"seen": seen}))
    sys.exit(0)
for attempt in range(1000):
    try:
        with ZarrIO(url, mode=role, storage_options=options) as io:
            io.write_builder(GroupBuilder("root", datasets={name: DatasetBuilder(name, np.arange(5) + len(name))}))
        break
    except FileLockedError:
        refused += 1
        time.sleep(0.01)
open(os.path.join(rendezvous, name + ".done"), "w").close()
print(json.dumps({"done": attempt < 999, "refused": refused}))
"""


def _run_together(s3, url, jobs, rendezvous):
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    options = json.dumps(s3["options"])
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, url, options, role, name, str(rendezvous), str(len(jobs))],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for role, name in jobs
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err[-3000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def _expected(name):
    return (np.arange(5) + len(name)).tolist()


def test_two_appending_processes_lose_nothing_and_a_reader_never_sees_a_mix(s3, tmp_path):
    url = f"s3://{new_bucket(s3)}/f.zarr"
    write_builder(
        url,
        GroupBuilder("root", datasets={"base": DatasetBuilder("base", np.arange(5) + 4)}),
        storage_options=s3["options"],
    )
    results = _run_together(s3, url, [("a", "first"), ("a", "second!"), ("reader", "-")], tmp_path)
    assert results[0]["done"] and results[1]["done"]
    with ZarrIO(url, mode="r", storage_options=s3["options"]) as io:
        builder = io.read_builder()
        assert set(builder.datasets) == {"base", "first", "second!"}
        for name in builder.datasets:
            assert builder[name].data[:].tolist() == _expected(name)
    versions = [v for v in results[2]["seen"] if v != "incomplete"]
    assert versions  # the reader read whole versions, each dataset with its own values, never fill values
    for version in versions:
        assert "base" in version
        assert all(values == _expected(name) for name, values in version.items()), version


def test_a_rewriting_process_and_an_appending_one_leave_one_whole_file(s3, tmp_path):
    url = f"s3://{new_bucket(s3)}/f.zarr"
    write_builder(
        url,
        GroupBuilder("root", datasets={"old": DatasetBuilder("old", np.arange(5) + 3)}),
        storage_options=s3["options"],
    )
    results = _run_together(s3, url, [("w", "new"), ("a", "added")], tmp_path)
    assert results[0]["done"] and results[1]["done"]
    with ZarrIO(url, mode="r", storage_options=s3["options"]) as io:
        builder = io.read_builder()
        names = set(builder.datasets)
        # the append came before the rewrite (then replaced with the old file, as w does) or after it
        assert names in ({"new"}, {"new", "added"})
        for name in names:
            assert builder[name].data[:].tolist() == _expected(name)


# --- 1 (S3 harness). The endpoint fails from the k-th write request of an append on: typed error; the file is
# the previous one, or incomplete until `recover` puts the previous one back (or the append had committed).
def _snapshot(url, options):
    with ZarrIO(url, mode="r", storage_options=options) as io:
        builder = io.read_builder()
        return {name: builder[name].data[:].tolist() for name in builder.datasets}


def test_an_append_whose_endpoint_fails_at_every_write_request_is_undone_or_recovered(s3):
    from hdmf_zarr3 import HdmfZarrError, IncompleteFileError, recover

    fast = {"retry_config": {"max_retries": 1, "backoff": {"init_backoff": datetime.timedelta(milliseconds=10)}}}
    writes = ("PUT", "POST", "DELETE")
    counting = []
    url = _file(s3)
    with fault_proxy(s3) as proxy:
        with ZarrIO(url, mode="a", storage_options=through(proxy, s3["options"])) as io:
            io.write_builder(_root("d", "e"))
        counting = [r for r in proxy.requests if r[0] in writes]
    assert len(counting) >= 4
    for k in range(1, len(counting) + 1):
        url = _file(s3)
        before = _snapshot(url, s3["options"])
        dead = []

        def from_k(method, path, n, k=k, dead=dead):
            if method in writes and not dead:
                counting_now = sum(1 for m, p, a in proxy.requests if m in writes) + 1
                if counting_now >= k:
                    dead.append(True)
            return "5xx" if dead else None

        with fault_proxy(s3, from_k) as proxy:
            try:
                with ZarrIO(url, mode="a", storage_options=through(proxy, s3["options"], **fast)) as io:
                    io.write_builder(_root("d", "e"))
            except HdmfZarrError as exc:
                assert isinstance(exc, StoreError), (k, exc)
        try:
            after = _snapshot(url, s3["options"])
        except IncompleteFileError:
            recover(url, s3["options"], break_lock=True)
            after = _snapshot(url, s3["options"])
        assert after in (before, {**before, "e": (np.arange(5) + 1).tolist()}), (k, after)


@pytest.mark.parametrize("mode", ["w", "w-"])
def test_a_write_whose_endpoint_fails_at_every_write_request_is_complete_or_detected(s3, mode):
    from hdmf_zarr3 import HdmfZarrError, IncompleteFileError

    fast = {"retry_config": {"max_retries": 1, "backoff": {"init_backoff": datetime.timedelta(milliseconds=10)}}}
    writes = ("PUT", "POST", "DELETE")

    def target():
        if mode == "w":
            return _file(s3)  # a previous file, replaced in place
        return f"s3://{new_bucket(s3)}/f.zarr"

    with fault_proxy(s3) as proxy:
        write_builder(target(), _root("n", "m"), mode=mode, storage_options=through(proxy, s3["options"]))
        total = sum(1 for r in proxy.requests if r[0] in writes)
    new = {"n": (np.arange(5)).tolist(), "m": (np.arange(5) + 1).tolist()}
    for k in range(1, total + 1):
        url = target()
        before = _snapshot(url, s3["options"]) if mode == "w" else None
        dead = []

        def from_k(method, path, n, k=k, dead=dead):
            if method in writes and not dead and sum(1 for r in proxy.requests if r[0] in writes) + 1 >= k:
                dead.append(True)
            return "5xx" if dead else None

        with fault_proxy(s3, from_k) as proxy:
            try:
                write_builder(url, _root("n", "m"), mode=mode, storage_options=through(proxy, s3["options"], **fast))
            except HdmfZarrError as exc:
                assert isinstance(exc, StoreError), (k, exc)
        break_lock(url, s3["options"])
        try:
            after = _snapshot(url, s3["options"])
        except IncompleteFileError:
            continue  # detected: never read as a file
        except Exception as exc:  # nothing there yet: a new file refused as missing
            assert mode == "w-" and "no Zarr group" in str(exc), (k, exc)
            continue
        assert after in (before, new), (k, after)


# --- In-place edits on S3 (issue #38): the endpoint fails from the k-th write request on, or a Ctrl-C comes with
# it; the file is the old one or the finished edit, every object byte for byte, never a mix.
EDITS = {
    "slice": lambda data: data.__setitem__(slice(3, 37), -np.arange(34.0)),
    "index": lambda data: data.__setitem__([0, 17, 39], [100.0, 117.0, 139.0]),
    "scalar": lambda data: data.__setitem__(21, 42.0),
}


def _objects(s3, url):
    """Every object of the file at ``url`` (its prefix), byte for byte."""
    bucket, prefix = url.removeprefix("s3://").split("/", 1)
    client = s3["client"]()
    keys = [o["Key"] for o in client.list_objects_v2(Bucket=bucket, Prefix=prefix + "/").get("Contents", [])]
    return {key: client.get_object(Bucket=bucket, Key=key)["Body"].read() for key in sorted(keys)}


def _edit_file(s3):
    url = f"s3://{new_bucket(s3)}/f.zarr"
    root = GroupBuilder("root", datasets={"d": DatasetBuilder("d", ZarrDataIO(np.arange(40.0), chunks=(4,)))})
    write_builder(url, root, storage_options=s3["options"])
    return url


def _edit(url, options, selection):
    with ZarrIO(url, mode="r+", storage_options=options) as io:
        EDITS[selection](io.read_builder()["d"].data)


def _s3_edit_sweep(s3, selection, fault, every):
    from hdmf_zarr3 import HdmfZarrError, IncompleteFileError, recover

    fast = {"retry_config": {"max_retries": 1, "backoff": {"init_backoff": datetime.timedelta(milliseconds=10)}}}
    writes = ("PUT", "POST", "DELETE")
    url = _edit_file(s3)
    with fault_proxy(s3) as proxy:
        _edit(url, through(proxy, s3["options"]), selection)
        total = len([r for r in proxy.requests if r[0] in writes])
    finished = _objects(s3, url)
    assert total >= 4
    failures = []
    for k in range(1, total + 1) if every else sorted({1, 2, total // 2, total - 1, total}):
        url = _edit_file(s3)
        before = _objects(s3, url)
        seen = []

        def at_k(method, path, n, k=k, seen=seen):
            if method not in writes:
                return None
            seen.append(method)
            if fault == "interrupt":  # Ctrl-C as the k-th write request goes out (it goes on)
                if len(seen) == k:
                    signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
                return None
            return "5xx" if len(seen) >= k else None

        with fault_proxy(s3, at_k) as proxy:
            try:
                _edit(url, through(proxy, s3["options"], **fast), selection)
            except KeyboardInterrupt:
                if fault != "interrupt":
                    failures.append(f"{k}: KeyboardInterrupt")
            except HdmfZarrError as exc:
                if fault == "interrupt" or not isinstance(exc, StoreError) or url not in str(exc):
                    failures.append(f"{k}: {type(exc).__name__}: {exc}")
        if fault == "5xx":  # the endpoint died: the undo (or the journal's deletion after the commit) could not
            recover(url, s3["options"], break_lock=True)  # run; recover does it (or deletes the stale journal)
        try:
            with ZarrIO(url, mode="r", storage_options=s3["options"]) as io:
                io.read_builder()
        except IncompleteFileError:
            failures.append(f"{k}: left incomplete")
            continue
        after = _objects(s3, url)
        if after not in (before, finished):
            changed = sorted(key for key in set(before) | set(after) if before.get(key) != after.get(key))
            failures.append(f"{k}: neither the old file nor the finished edit: {changed[:6]}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("fault", ["5xx", "interrupt"])
@pytest.mark.parametrize("selection", list(EDITS))
def test_an_in_place_edit_failing_at_a_spread_of_write_requests_is_undone_or_finished(s3, selection, fault):
    _s3_edit_sweep(s3, selection, fault, every=False)


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["5xx", "interrupt"])
@pytest.mark.parametrize("selection", list(EDITS))
def test_an_in_place_edit_failing_at_every_write_request_is_undone_or_finished(s3, selection, fault):
    _s3_edit_sweep(s3, selection, fault, every=True)
