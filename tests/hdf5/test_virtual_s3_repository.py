"""convert(..., virtual=True) into an icechunk repository on S3 (moto's server on 127.0.0.1): created at an
s3:// prefix, never over anything there, opened by its URL for reading only, its virtual chunks confined
and checked as a local repository's are (issue #20)."""

from __future__ import annotations

import datetime
import json
import logging
import os

import numpy as np
import pytest
from hdmf.backends.errors import UnsupportedOperation
from pynwb import NWBHDF5IO
from s3_server import new_bucket
from virtual_files import EPHYS, IMAGING, hdf5_source

from hdmf_zarr3 import ModeError, NWBZarrIO, SourceChangedError, StoreError, convert

pytest.importorskip("icechunk")


def _keys(s3, bucket, prefix=""):
    listed = s3["client"]().list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])
    return sorted(o["Key"] for o in listed)


@pytest.fixture
def local_to_s3(s3, tmp_path):
    """A local HDF5 file made a repository on S3."""
    src = hdf5_source(tmp_path / "s.nwb")
    bucket = new_bucket(s3)
    dst = f"s3://{bucket}/repos/s.icechunk"
    report = convert(src, dst, virtual=True, storage_options=s3["options"])
    return s3, src, dst, report


@pytest.fixture
def s3_to_s3(s3, tmp_path):
    """An HDF5 file on S3 made a repository beside it (same prefix), with the same options for both."""
    local = hdf5_source(tmp_path / "s.nwb")
    bucket = new_bucket(s3)
    s3["client"]().upload_file(str(local), bucket, "sessions/s.nwb")
    src, dst = f"s3://{bucket}/sessions/s.nwb", f"s3://{bucket}/sessions/s.icechunk"
    convert(src, dst, virtual=True, src_storage_options=s3["options"], storage_options=s3["options"])
    return s3, bucket, local, dst


def _assert_reads_as_hdf5(io, local):
    with NWBHDF5IO(local, "r") as h5_io:
        ours, theirs = io.read(), h5_io.read()
        np.testing.assert_array_equal(ours.acquisition["ephys"].data[:], EPHYS)
        np.testing.assert_array_equal(ours.acquisition["ephys"].data[12_345:15_000, 3], EPHYS[12_345:15_000, 3])
        np.testing.assert_array_equal(ours.acquisition["imaging"].data[:], IMAGING)
        assert ours.trials.to_dataframe().equals(theirs.trials.to_dataframe())
        assert ours.acquisition["ephys"].electrodes.table.to_dataframe().shape == (16, 3)
        assert ours.acquisition["small"].data[:].tolist() == list(range(10))


def test_a_local_file_becomes_a_repository_on_s3_that_reads_as_the_hdf5_file(local_to_s3):
    s3, src, dst, report = local_to_s3
    assert report["/acquisition/ephys/data"].startswith("virtual")
    bucket = dst.split("/")[2]
    keys = _keys(s3, bucket)
    assert "repos/s.icechunk/repo" in keys and all(k.startswith("repos/s.icechunk/") for k in keys)
    with NWBZarrIO(dst, "r", storage_options=s3["options"], external_roots=[src.parent]) as io:
        _assert_reads_as_hdf5(io, src)


def test_an_object_on_s3_becomes_a_repository_beside_it_read_without_external_roots(s3_to_s3):
    s3, bucket, local, dst = s3_to_s3
    with NWBZarrIO(dst, "r", storage_options=s3["options"]) as io:  # the prefix holding the repository
        _assert_reads_as_hdf5(io, local)


def test_chunks_of_a_repository_on_s3_are_read_only_under_the_allowed_prefixes(s3, tmp_path):
    local = hdf5_source(tmp_path / "s.nwb")
    bucket = new_bucket(s3)
    s3["client"]().upload_file(str(local), bucket, "sessions/s.nwb")
    dst = f"s3://{bucket}/repos/s.icechunk"  # the source is not under repos/
    convert(
        f"s3://{bucket}/sessions/s.nwb",
        dst,
        virtual=True,
        src_storage_options=s3["options"],
        storage_options=s3["options"],
    )
    with NWBZarrIO(dst, "r", storage_options=s3["options"]) as io:
        with pytest.raises(SourceChangedError, match="not allowed"):
            io.read().acquisition["ephys"].data[:10]
    with NWBZarrIO(dst, "r", storage_options=s3["options"], external_roots=[f"s3://{bucket}/other/"]) as io:
        with pytest.raises(SourceChangedError, match="not allowed"):
            io.read().acquisition["ephys"].data[:10]
    with NWBZarrIO(dst, "r", storage_options=s3["options"], external_roots=[f"s3://{bucket}/sessions/"]) as io:
        np.testing.assert_array_equal(io.read().acquisition["ephys"].data[:10], EPHYS[:10])


def test_a_local_source_of_a_repository_on_s3_needs_its_directory_allowed(local_to_s3):
    s3, src, dst, _ = local_to_s3
    with NWBZarrIO(dst, "r", storage_options=s3["options"]) as io:
        with pytest.raises(SourceChangedError, match="not allowed"):
            io.read().acquisition["ephys"].data[:10]


def test_an_existing_prefix_is_never_replaced(local_to_s3, tmp_path):
    s3, src, dst, _ = local_to_s3
    bucket = dst.split("/")[2]
    before = _keys(s3, bucket)
    with pytest.raises(StoreError, match="never replaced") as err:  # a repository
        convert(src, dst, virtual=True, storage_options=s3["options"])
    assert err.value.path == dst and _keys(s3, bucket) == before
    s3["client"]().put_object(Bucket=bucket, Key="taken/keep.txt", Body=b"mine")
    with pytest.raises(StoreError, match="never replaced"):  # anything below the prefix
        convert(src, f"s3://{bucket}/taken", virtual=True, storage_options=s3["options"])
    s3["client"]().put_object(Bucket=bucket, Key="file.nwb", Body=b"mine")
    with pytest.raises(StoreError, match="never replaced"):  # an object at the prefix itself
        convert(src, f"s3://{bucket}/file.nwb", virtual=True, storage_options=s3["options"])
    assert _keys(s3, bucket, "taken/") == ["taken/keep.txt"] and _keys(s3, bucket, "file.nwb") == ["file.nwb"]
    assert _keys(s3, bucket, "repos/") == before


def test_a_missing_bucket_is_a_clear_error(s3, tmp_path):
    src = hdf5_source(tmp_path / "s.nwb")
    with pytest.raises(StoreError, match="cannot access") as err:
        convert(src, "s3://no-such-bucket-here/s.icechunk", virtual=True, storage_options=s3["options"])
    assert err.value.path == "s3://no-such-bucket-here/s.icechunk"


def test_other_object_stores_are_refused_for_the_repository(tmp_path):
    src = hdf5_source(tmp_path / "s.nwb")
    with pytest.raises(StoreError, match="local directory or an s3:// prefix"):
        convert(src, "gs://bucket/s.icechunk", virtual=True)


def test_an_unfinished_conversion_on_s3_is_refused_as_incomplete_and_replaced(s3, tmp_path):
    import icechunk

    from hdmf_zarr3 import IncompleteFileError
    from hdmf_zarr3.storage.virtual import repo
    from hdmf_zarr3.storage.virtual.source_files import repository_storage

    src = hdf5_source(tmp_path / "s.nwb")
    dst = f"s3://{new_bucket(s3)}/s.icechunk"
    killed = icechunk.Repository.create(repository_storage(dst, s3["options"]))  # what a killed conversion leaves
    killed.set_metadata(repo.CONVERSION_MARK)
    with pytest.raises(IncompleteFileError, match="convert the HDF5 file again"):
        NWBZarrIO(dst, "r", storage_options=s3["options"])
    convert(src, dst, virtual=True, storage_options=s3["options"])  # replaces it
    with NWBZarrIO(dst, "r", storage_options=s3["options"], external_roots=[tmp_path]) as io:
        assert io.read().acquisition["small"].data[:].tolist() == list(range(10))


def test_an_empty_repository_on_s3_that_no_conversion_made_is_not_replaced(s3, tmp_path):
    import icechunk

    from hdmf_zarr3.storage.virtual.source_files import repository_storage

    src = hdf5_source(tmp_path / "s.nwb")
    dst = f"s3://{new_bucket(s3)}/s.icechunk"
    icechunk.Repository.create(repository_storage(dst, s3["options"]))  # made with icechunk, not by us
    with pytest.raises(UnsupportedOperation, match="no Zarr group found"):
        NWBZarrIO(dst, "r", storage_options=s3["options"])
    with pytest.raises(StoreError, match="remove it first"):
        convert(src, dst, virtual=True, storage_options=s3["options"])


@pytest.mark.parametrize("mode", ["a", "r+", "w"])
@pytest.mark.filterwarnings("ignore:The file path provided")  # (PyNWB's: the name lacks .nwb.zarr)
def test_a_repository_on_s3_opens_by_its_url_for_reading_only(local_to_s3, mode):
    s3, _, dst, _ = local_to_s3
    bucket = dst.split("/")[2]
    before = _keys(s3, bucket)
    with pytest.raises(ModeError, match="mode 'r' only"):
        NWBZarrIO(dst, mode, storage_options=s3["options"])
    assert _keys(s3, bucket) == before  # mode w wrote no Zarr file into the repository


def test_a_changed_object_is_refused_at_open_of_a_repository_on_s3(s3_to_s3):
    s3, bucket, _, dst = s3_to_s3
    s3["client"]().put_object(Bucket=bucket, Key="sessions/s.nwb", Body=b"not the same file")
    with pytest.raises(SourceChangedError, match="changed since the repository was made") as err:
        NWBZarrIO(dst, "r", storage_options=s3["options"])
    assert "ETag" in str(err.value) and err.value.path == dst


def test_a_changed_local_file_is_refused_at_open_of_a_repository_on_s3(local_to_s3):
    s3, src, dst, _ = local_to_s3
    stat = os.stat(src)
    os.utime(src, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2 * 10**9))
    with pytest.raises(SourceChangedError, match="changed since the repository was made"):
        NWBZarrIO(dst, "r", storage_options=s3["options"], external_roots=[src.parent])


def test_a_source_changed_while_a_repository_on_s3_is_open_is_refused_when_read(s3_to_s3):
    s3, bucket, _, dst = s3_to_s3
    with NWBZarrIO(dst, "r", storage_options=s3["options"]) as io:
        data = io.read().acquisition["ephys"].data
        s3["client"]().put_object(Bucket=bucket, Key="sessions/s.nwb", Body=b"not the same file")
        with pytest.raises(SourceChangedError, match="changed since the repository was made"):
            data[:100]


def _requests(caplog, bucket):
    """(method, path and query) of each request moto's server logged (werkzeug's access log)."""
    found = []
    for record in caplog.records:
        message = record.getMessage()
        if record.name == "werkzeug" and "HTTP/1.1" in message:
            method, target = message.split('"')[1].split(" ")[:2]
            found.append((method.lstrip("\x1b[0123456789;m"), target.removeprefix(f"/{bucket}")))
    return found


def test_telling_a_repository_from_a_zarr_file_costs_no_request(s3_to_s3, caplog):
    """A Zarr file on S3 still opens with one request (its root); a repository is recognized from the
    listing made anyway when the root is absent (to tell a missing file from a missing bucket)."""
    from writing import write_nwb

    from hdmf_zarr3.storage.handles.store_opening import open_store

    s3, bucket, _, dst = s3_to_s3
    plain = f"s3://{bucket}/plain.nwb.zarr"
    write_nwb(plain, storage_options=s3["options"])
    caplog.set_level(logging.INFO, logger="werkzeug")
    caplog.clear()
    open_store(plain, "r", s3["options"]).close()
    assert _requests(caplog, bucket) == [("GET", "/plain.nwb.zarr/zarr.json")]
    caplog.clear()
    open_store(dst, "r", s3["options"]).close()
    # ours (obstore's): the root, absent; one listing of the prefix; the source checked. The rest is
    # icechunk's opening of the repository (its SDK marks each request with x-id)
    ours = [r for r in _requests(caplog, bucket) if "x-id=" not in r[1]]
    assert ours == [
        ("GET", "/sessions/s.icechunk/zarr.json"),
        ("GET", "?delimiter=/&list-type=2&prefix=sessions/s.icechunk/"),
        ("HEAD", "/sessions/s.nwb"),
    ], _requests(caplog, bucket)


def test_the_command_converts_into_s3_and_info_shows_the_virtual_arrays(s3, tmp_path, capsys):
    from hdmf_zarr3.cli import main

    local = hdf5_source(tmp_path / "s.nwb")
    bucket = new_bucket(s3)
    s3["client"]().upload_file(str(local), bucket, "sessions/s.nwb")
    src, dst = f"s3://{bucket}/sessions/s.nwb", f"s3://{bucket}/sessions/s.icechunk"
    options = json.dumps(s3["options"])
    argv = ["convert", "--virtual", "--no-progress", src, dst, "--src-storage-options", options]
    assert main([*argv, "--storage-options", options]) == 0
    assert "/acquisition/ephys/data: virtual" in capsys.readouterr().out
    assert main(["info", dst, "--storage-options", options]) == 0
    lines = capsys.readouterr().out.splitlines()
    ephys = next(line for line in lines if line.strip().startswith("data") and "(60000, 16)" in line)
    assert f"virtual: 6 chunks in {src}" in ephys
    assert main([*argv, "--storage-options", options]) == 1  # the prefix is taken now
    assert "never replaced" in capsys.readouterr().err


# --- issue #38: a conversion to S3 cut short at its k-th write request (Ctrl-C as it goes out, or the endpoint
# failing from it on) leaves nothing, the finished repository, or one refused as incomplete that the next
# conversion replaces.
def _cut_short_at(s3, src, tmp_path, fault: str, k: int) -> str:
    """Convert with the fault at write request ``k``; returns what was left: absent, complete or incomplete."""
    import signal
    import threading

    from s3_faults import fault_proxy, through

    from hdmf_zarr3 import HdmfZarrError, IncompleteFileError, break_lock

    dst = f"s3://{new_bucket(s3)}/s.icechunk"
    seen = []

    def at_k(method, path, n):
        if method not in ("PUT", "POST", "DELETE"):
            return None
        seen.append(method)
        if fault == "interrupt":
            if len(seen) == k:
                signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
            return None
        return "5xx" if len(seen) >= k else None

    with fault_proxy(s3, at_k) as proxy:
        try:
            convert(src, dst, virtual=True, storage_options=through(proxy, s3["options"], **FEW_RETRIES))
        except KeyboardInterrupt:
            assert fault == "interrupt", k
        except HdmfZarrError as exc:
            # (ours, naming the destination, or its lock when the lock could not be taken: k = 1)
            assert fault == "5xx" and isinstance(exc, StoreError) and exc.path in (dst, f"{dst}.lock"), (k, exc)
    bucket = dst.split("/")[2]
    if fault == "interrupt":
        assert "s.icechunk.lock" not in _keys(s3, bucket), k
    else:
        break_lock(dst, s3["options"])  # (the endpoint died before the lock could go)
    if not _keys(s3, bucket, "s.icechunk/"):
        left = "absent"
    else:
        try:
            with NWBZarrIO(dst, "r", storage_options=s3["options"], external_roots=[tmp_path]) as io:
                io.read()
            left = "complete"
        except IncompleteFileError:
            left = "incomplete"
    if left != "complete":  # converting again makes the repository (replacing an unfinished one)
        convert(src, dst, virtual=True, storage_options=s3["options"])
    with NWBZarrIO(dst, "r", storage_options=s3["options"], external_roots=[tmp_path]) as io:
        assert io.read().acquisition["small"].data[:].tolist() == list(range(10))
    return left


def _write_requests(s3, src) -> int:
    from s3_faults import fault_proxy, through

    with fault_proxy(s3) as proxy:
        convert(src, f"s3://{new_bucket(s3)}/s.icechunk", virtual=True, storage_options=through(proxy, s3["options"]))
        return len([r for r in proxy.requests if r[0] in ("PUT", "POST", "DELETE")])


def test_a_conversion_to_s3_interrupted_at_a_spread_of_write_requests_leaves_nothing_or_the_repository(s3, tmp_path):
    src = hdf5_source(tmp_path / "s.nwb")
    total = _write_requests(s3, src)
    left = {_cut_short_at(s3, src, tmp_path, "interrupt", k) for k in sorted({1, 2, 3, total // 2, total})}
    assert left == {"absent", "complete"}, left  # (a Ctrl-C never leaves a repository half made)


#: Retries of a failed request while the endpoint fails, for our requests (obstore's) and icechunk's: two tries,
#: 10 ms apart (with the defaults, up to 6 and 10 tries over ~30 s, a run took 30 s).
FEW_RETRIES = {"retry_config": {"max_retries": 1, "backoff": {"init_backoff": datetime.timedelta(milliseconds=10)}}}


@pytest.fixture
def few_icechunk_retries(monkeypatch):
    """icechunk's repositories made with :data:`FEW_RETRIES` (their storage settings; nothing else changed)."""
    import icechunk

    default = icechunk.RepositoryConfig.default

    def with_few_retries():
        config = default()
        retries = icechunk.StorageRetriesSettings(max_tries=2, initial_backoff_ms=10, max_backoff_ms=10)
        config.storage = icechunk.StorageSettings(retries=retries)
        return config

    monkeypatch.setattr(icechunk.RepositoryConfig, "default", staticmethod(with_few_retries))


@pytest.mark.slow
def test_a_conversion_to_s3_cut_short_at_every_write_request_leaves_nothing_or_what_the_next_replaces(
    s3, tmp_path, few_icechunk_retries
):
    src = hdf5_source(tmp_path / "s.nwb")
    total = _write_requests(s3, src)
    left = {_cut_short_at(s3, src, tmp_path, "interrupt", k) for k in range(1, total + 1)}
    assert "incomplete" not in left, left
    # the endpoint failing from k on, with few retries (the defaults wait ~30 s per run); at k = 3 the repository
    # is made, its mark and its removal refused: an empty repository, refused as incomplete and replaced
    left = {_cut_short_at(s3, src, tmp_path, "5xx", k) for k in sorted({1, 2, 3, total // 2, total - 1, total})}
    assert left <= {"absent", "complete", "incomplete"}, left
