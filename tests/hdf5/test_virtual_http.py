"""convert(..., virtual=True) from an HDF5 file on a web server (tests/http_server.py on 127.0.0.1): the
repository's virtual chunks are ranged GETs of the URL, conditional on its ETag or Last-Modified,
refused once it changed, only read under the http(s) prefixes the reader allows, and redirects are
resolved at the conversion and refused afterwards (issue #20)."""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest
from container_diff import first_difference
from http_server import http_server, touch_later
from pynwb import NWBHDF5IO
from virtual_files import EPHYS, IMAGING, hdf5_source

from hdmf_zarr3 import NWBZarrIO, SourceChangedError, StoreError, convert
from hdmf_zarr3.storage.remote.http_sources import SizeOnlyWarning

pytest.importorskip("icechunk")


@pytest.fixture
def web(tmp_path):
    """A server of ``tmp_path/www`` holding ``sessions/s.nwb``: (base URL, settings and log, the file)."""
    (tmp_path / "www" / "sessions").mkdir(parents=True)
    local = hdf5_source(tmp_path / "www" / "sessions" / "s.nwb")
    with http_server(tmp_path / "www") as (base, served):
        yield base, served, local


def _convert(web, tmp_path, **kwargs):
    base, served, local = web
    dst = tmp_path / "s.icechunk"
    report = convert(f"{base}/sessions/s.nwb", dst, virtual=True, **kwargs)
    return dst, report


def _gets(served, since=0):
    return [r for r in served.requests[since:] if r[0] == "GET"]


@pytest.mark.parametrize("s3_like", [False, True], ids=["strict-if-match", "unquoted-if-match"])
def test_an_hdf5_file_over_http_reads_as_the_local_file_does(web, tmp_path, s3_like):
    """Chunks are ranged GETs of the URL with a condition the server checks: If-Match with the ETag
    where the server honours it as icechunk sends it (unquoted, as S3 does), else If-Unmodified-Since."""
    base, served, local = web
    served.unquoted_if_match = s3_like
    dst, report = _convert(web, tmp_path)
    assert report["/acquisition/ephys/data"] == "virtual: 6 chunks in place"
    assert report["/acquisition/imaging/data"].startswith("virtual")
    assert sum(p.stat().st_size for p in dst.rglob("*") if p.is_file()) < 0.05 * (EPHYS.nbytes + IMAGING.nbytes)
    with NWBZarrIO(dst, "r", external_roots=[f"{base}/sessions/"]) as io, NWBHDF5IO(local, "r") as h5_io:
        ours, theirs = io.read(), h5_io.read()
        assert first_difference(ours, io, theirs, h5_io) is None
        since = len(served.requests)
        np.testing.assert_array_equal(ours.acquisition["ephys"].data[1000:4000, 5], EPHYS[1000:4000, 5])
    chunk_reads = served.headers[since:]
    assert chunk_reads and all(h["range"].startswith("bytes=") for h in chunk_reads)
    condition = "if-match" if s3_like else "if-unmodified-since"
    assert all(condition in h for h in chunk_reads)


def test_opening_and_reading_cost_one_request_to_the_server(web, tmp_path):
    base, served, _ = web
    dst, _ = _convert(web, tmp_path)
    since = len(served.requests)
    with NWBZarrIO(dst, "r", external_roots=[base]) as io:
        nwb = io.read()
        assert nwb.acquisition["small"].data[:].tolist() == list(range(10))
        assert served.requests[since:] == [("HEAD", "/sessions/s.nwb", None)]


def test_the_conversion_reads_the_hdf5_metadata_in_a_few_ranges(web, tmp_path):
    """h5py reads metadata back and forth; the blocks fetched are kept (storage/remote/ranged_file.py)."""
    base, served, local = web
    _convert(web, tmp_path)
    gets = _gets(served)
    fetched = sum(int(b) - int(a) + 1 for a, b in (r.removeprefix("bytes=").split("-") for _, _, r in gets))
    assert len(gets) <= 8 and fetched < local.stat().st_size


def test_the_readers_storage_options_go_with_the_chunk_requests(web, tmp_path):
    from datetime import timedelta

    base, served, _ = web
    dst, _ = _convert(web, tmp_path)
    options = {"headers": {"X-Token": "t"}, "client_options": {"timeout": timedelta(seconds=20)}}
    with NWBZarrIO(dst, "r", external_roots=[base], storage_options=options) as io:
        data = io.read().acquisition["ephys"].data
        since = len(served.requests)
        np.testing.assert_array_equal(data[:10], EPHYS[:10])
    assert served.headers[since:] and all(h.get("x-token") == "t" for h in served.headers[since:])


def test_chunks_are_read_only_under_the_prefixes_the_reader_allows(web, tmp_path):
    base, served, _ = web
    dst, _ = _convert(web, tmp_path)
    for roots in ([], [f"{base}/other/"], [f"{base}/sess"], [base.replace("http:", "https:")]):
        with NWBZarrIO(dst, "r", external_roots=roots) as io:
            since = len(served.requests)
            with pytest.raises(SourceChangedError, match="not allowed"):
                io.read().acquisition["ephys"].data[:10]
            assert served.requests[since:] == []  # neither checked nor read


@pytest.mark.parametrize("etag", [True, False], ids=["etag", "last-modified"])
def test_a_changed_file_is_refused_at_open(web, tmp_path, etag):
    base, served, local = web
    served.etag = etag
    dst, _ = _convert(web, tmp_path)
    touch_later(local)  # the same size, another time: another ETag and Last-Modified
    with pytest.raises(SourceChangedError, match="changed since the repository was made") as err:
        NWBZarrIO(dst, "r", external_roots=[base])
    assert ("ETag" if etag else "Last-Modified") in str(err.value) and "s.nwb" in str(err.value)
    with open(local, "ab") as f:
        f.write(b"more")
    with pytest.raises(SourceChangedError, match="size"):
        NWBZarrIO(dst, "r", external_roots=[base])
    local.unlink()
    with pytest.raises(SourceChangedError, match="gone"):
        NWBZarrIO(dst, "r", external_roots=[base])


@pytest.mark.parametrize("s3_like", [False, True], ids=["strict-if-match", "unquoted-if-match"])
def test_a_file_changed_while_the_repository_is_open_is_refused_by_the_server(web, tmp_path, s3_like):
    base, served, local = web
    served.unquoted_if_match = s3_like
    dst, _ = _convert(web, tmp_path)
    with NWBZarrIO(dst, "r", external_roots=[base]) as io:
        data = io.read().acquisition["ephys"].data
        touch_later(local)
        with pytest.raises(SourceChangedError, match="changed"):
            data[:10]


def test_a_server_sending_neither_etag_nor_last_modified_leaves_the_size_with_a_warning(web, tmp_path):
    base, served, local = web
    served.etag = served.last_modified = False
    with pytest.warns(SizeOnlyWarning, match="neither ETag nor Last-Modified"):
        dst, _ = _convert(web, tmp_path)
    with NWBZarrIO(dst, "r", external_roots=[base]) as io:
        np.testing.assert_array_equal(io.read().acquisition["ephys"].data[:100], EPHYS[:100])
    with open(local, "ab") as f:
        f.write(b"more")
    with pytest.raises(SourceChangedError, match="size"):
        NWBZarrIO(dst, "r", external_roots=[base])


def test_a_server_refusing_head_is_asked_for_its_first_byte(web, tmp_path):
    base, served, local = web
    served.head = False
    dst, _ = _convert(web, tmp_path)
    with NWBZarrIO(dst, "r", external_roots=[base]) as io:
        np.testing.assert_array_equal(io.read().acquisition["ephys"].data[:100], EPHYS[:100])
    touch_later(local)
    with pytest.raises(SourceChangedError, match="changed since"):
        NWBZarrIO(dst, "r", external_roots=[base])
    assert ("GET", "/sessions/s.nwb", "bytes=0-0") in served.requests


def test_a_url_naming_a_directory_or_answering_without_a_size_is_refused(monkeypatch, tmp_path):
    from hdmf_zarr3.storage.remote import http_sources

    monkeypatch.setattr(http_sources, "head", lambda url, headers: (200, {"content-length": "10"}))
    with pytest.raises(StoreError, match="names a directory"):
        http_sources.resolve("http://127.0.0.1:9/files/", None)
    monkeypatch.setattr(http_sources, "head", lambda url, headers: (200, {}))
    with pytest.raises(StoreError, match="no size"):
        http_sources.resolve("http://127.0.0.1:9/files/s.nwb", None)


def test_a_redirect_is_resolved_to_where_the_bytes_are_and_refused_once_it_appears_later(web, tmp_path):
    """As DANDI's asset URLs redirect to a signed S3 URL: the repository records the target without its
    query (the file is served so), the reader allows that prefix, and a recorded URL that starts to
    redirect is refused at open (icechunk would follow it when reading chunks)."""
    base, served, local = web
    (local.parent.parent / "blobs").mkdir()
    shutil.copy(local, local.parent.parent / "blobs" / "abc")
    served.redirects["/api/assets/1/download/"] = "/blobs/abc?X-Amz-Signature=x&X-Amz-Expires=3600"
    dst = tmp_path / "s.icechunk"
    with pytest.warns(UserWarning, match="redirects to"):
        convert(f"{base}/api/assets/1/download/", dst, virtual=True)
    with NWBZarrIO(dst, "r", external_roots=[f"{base}/api/"]) as io:
        with pytest.raises(SourceChangedError, match="not allowed"):
            io.read().acquisition["ephys"].data[:10]
    with NWBZarrIO(dst, "r", external_roots=[f"{base}/blobs/"]) as io:
        np.testing.assert_array_equal(io.read().acquisition["ephys"].data[:], EPHYS)
    served.redirects["/blobs/abc"] = f"{base}/sessions/s.nwb"
    with pytest.raises(SourceChangedError, match="now redirects"):
        NWBZarrIO(dst, "r", external_roots=[f"{base}/blobs/"])


def test_headers_of_the_storage_options_stay_with_the_host_they_were_given_for(web, tmp_path):
    base, served, local = web
    with http_server(local.parent) as (other, elsewhere):
        served.redirects["/asset"] = f"{other}/s.nwb"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            convert(
                f"{base}/asset",
                tmp_path / "s.icechunk",
                virtual=True,
                src_storage_options={"headers": {"Authorization": "token secret"}},
            )
    assert served.headers[0]["Authorization"] == "token secret"
    assert elsewhere.requests and not any("authorization" in map(str.lower, h) for h in elsewhere.headers)


@pytest.mark.parametrize(
    "path",
    [
        "/sessions/s.nwb?version=2",
        "/sessions/../sessions/s.nwb",
        "/sessions/%2E%2E/sessions/s.nwb",
        "/sessions/..%2Fsessions%2Fs.nwb",
    ],
)
def test_urls_with_a_query_or_dot_segments_are_refused(web, tmp_path, path):
    base, served, _ = web
    with pytest.raises(StoreError, match="query|'..' segments|encoded '/'"):
        convert(base + path, tmp_path / "s.icechunk", virtual=True)
    assert served.requests == []
    with pytest.raises(StoreError, match="credentials"):
        convert(base.replace("//", "//user:pw@") + "/sessions/s.nwb", tmp_path / "t.icechunk", virtual=True)


def _crafted(path, prefix, location, **store):
    """A repository (made with icechunk alone) with one virtual chunk of 400 bytes at ``location``."""
    import icechunk
    import zarr

    config = icechunk.RepositoryConfig.default()
    config.set_virtual_chunk_container(icechunk.VirtualChunkContainer(prefix, icechunk.http_store(**store)))
    repo = icechunk.Repository.create(icechunk.local_filesystem_storage(str(path)), config)
    session = repo.writable_session("main")
    zarr.create_array(session.store, name="x", shape=(100,), chunks=(100,), dtype="<i4", compressors=None)
    spec = icechunk.VirtualChunkSpec(index=[0], location=location, offset=0, length=400)
    session.store.set_virtual_refs("x", [spec], validate_containers=False)
    session.commit("crafted")
    return path


def test_a_crafted_container_with_dot_segments_is_never_granted(web, tmp_path):
    """A repository is data: its container ``<allowed>/../`` names a place outside the root allowed.
    icechunk resolves ``..`` in chunk locations, so such a container is not authorized at all."""
    import zarr

    from hdmf_zarr3.storage.virtual import repo as virtual_repo

    base, served, local = web
    (local.parent.parent / "secret.bin").write_bytes(np.arange(100, dtype="<i4").tobytes())
    crafted = f"{base}/sessions/../"
    repo = _crafted(tmp_path / "r", crafted, f"{crafted}secret.bin")
    store = virtual_repo.open_readonly(repo, [f"{base}/sessions/"])
    with pytest.raises(SourceChangedError, match="not allowed"):
        zarr.open_array(store, path="x", mode="r")[:]
    assert _gets(served) == []


def test_a_repositorys_own_container_settings_are_ignored_and_none_of_ours_are_kept(web, tmp_path):
    """Headers are often secrets: the conversion's are not written into the repository, and a reader
    uses its own options, not the headers (or proxy) a crafted repository names."""
    import zarr

    from hdmf_zarr3.storage.virtual import repo as virtual_repo

    base, served, local = web
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dst, _ = _convert(web, tmp_path, src_storage_options={"headers": {"Authorization": "token secret"}})
    assert not any(b"token secret" in p.read_bytes() for p in dst.rglob("*") if p.is_file())
    repo = _crafted(tmp_path / "r", f"{base}/sessions/", f"{base}/sessions/s.nwb", headers={"x-crafted": "1"})
    since = len(served.requests)
    store = virtual_repo.open_readonly(repo, [f"{base}/sessions/"])
    assert len(zarr.open_array(store, path="x", mode="r")[:]) == 100
    assert served.headers[since:] and not any("x-crafted" in h for h in served.headers[since:])


def test_the_command_converts_an_http_url(web, tmp_path, capsys):
    from hdmf_zarr3.cli import main

    base, served, _ = web
    dst = tmp_path / "s.icechunk"
    assert main(["convert", "--virtual", "--no-progress", f"{base}/sessions/s.nwb", str(dst)]) == 0
    assert "/acquisition/ephys/data: virtual" in capsys.readouterr().out
    with NWBZarrIO(dst, "r", external_roots=[f"{base}/sessions/"]) as io:
        np.testing.assert_array_equal(io.read().acquisition["imaging"].data[:], IMAGING)
