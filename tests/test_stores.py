"""Where a file lives: local paths, pathlib, file:// URLs, single-file .zip stores and any zarr Store."""

from __future__ import annotations

import os
import zipfile

import numpy as np
import pytest
from hdmf.backends.errors import UnsupportedOperation
from nwb_factories import small_nwbfile
from pynwb import TimeSeries
from zarr.storage import MemoryStore

from hdmf_zarr3 import FormatError, NWBZarrIO
from hdmf_zarr3.storage import locations


def _check(path, **kwargs):
    with NWBZarrIO(path, mode="r", **kwargs) as io:
        nwb = io.read()
        assert np.array_equal(nwb.acquisition["ts"].data[:], np.arange(1000.0))
        return sorted(nwb.acquisition)


def test_zip_file_is_written_whole_and_read_in_place(tmp_path):
    path = tmp_path / "f.nwb.zarr.zip"
    with NWBZarrIO(path, mode="w") as io:
        io.write(small_nwbfile())
        assert not path.exists()  # written through a working directory until closed
    assert zipfile.is_zipfile(path)
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
    assert "zarr.json" in names and len(names) == len(set(names))  # no duplicate entries
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".partial")]
    assert _check(path) == ["ts"]


@pytest.mark.parametrize("mode", ["a", "r+"])
def test_zip_file_can_be_appended_to(tmp_path, mode):
    path = tmp_path / "f.nwb.zarr.zip"
    with NWBZarrIO(path, mode="w") as io:
        io.write(small_nwbfile())
    with NWBZarrIO(path, mode=mode) as io:
        nwb = io.read()
        nwb.add_acquisition(TimeSeries(name="more", data=[1.0, 2.0], unit="s", rate=1.0))
        io.write(nwb)
    assert _check(path) == ["more", "ts"]


def test_a_failed_zip_write_leaves_the_previous_file(tmp_path):
    path = tmp_path / "f.nwb.zarr.zip"
    with NWBZarrIO(path, mode="w") as io:
        io.write(small_nwbfile())
    before = path.read_bytes()
    with pytest.raises(RuntimeError, match="crash"):
        with NWBZarrIO(path, mode="a") as io:
            nwb = io.read()
            nwb.add_acquisition(TimeSeries(name="more", data=[1.0], unit="s", rate=1.0))
            io.write(nwb)
            io._handle._on_close = None  # the process dies before close() packs the zip
            raise RuntimeError("crash")
    assert path.read_bytes() == before


def test_zip_members_escaping_the_archive_are_refused(tmp_path):
    path = tmp_path / "evil.nwb.zarr.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("zarr.json", '{"zarr_format": 3, "node_type": "group", "attributes": {}}')
        archive.writestr("../outside.txt", "x")
    with pytest.raises(FormatError, match="outside the archive"):
        NWBZarrIO(path, mode="a")
    assert not (tmp_path.parent / "outside.txt").exists()


def test_pathlib_and_file_urls(tmp_path):
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="w") as io:
        io.write(small_nwbfile())
    assert _check(tmp_path / "f.nwb.zarr") == _check(f"file://{tmp_path}/f.nwb.zarr") == ["ts"]


def test_any_zarr_store_including_memory(tmp_path):
    store = MemoryStore()
    with NWBZarrIO(store, mode="w") as io:
        io.write(small_nwbfile())
    assert _check(store) == ["ts"]
    with NWBZarrIO(store, mode="a") as io:  # the caller's store stays open and usable
        nwb = io.read()
        nwb.add_acquisition(TimeSeries(name="more", data=[1.0], unit="s", rate=1.0))
        io.write(nwb)
    assert _check(store) == ["more", "ts"]


def test_missing_zip_in_read_mode(tmp_path):
    with pytest.raises(UnsupportedOperation, match="does not exist"):
        NWBZarrIO(tmp_path / "none.nwb.zarr.zip", mode="r")


@pytest.mark.parametrize(("target", "directory", "expected"), [
    ("/data/a/raw.nwb.zarr", "/data/b", "../a/raw.nwb.zarr"),
    ("s3://bucket/a/raw.nwb.zarr", "s3://bucket/b", "../a/raw.nwb.zarr"),
    ("s3://other/raw.nwb.zarr", "s3://bucket/b", "s3://other/raw.nwb.zarr"),
    ("s3://bucket/raw.nwb.zarr", "/local/dir", "s3://bucket/raw.nwb.zarr"),
])
def test_relative_locations_round_trip(target, directory, expected):
    assert locations.relative_to(target, directory) == expected
    assert locations.join(directory, expected) == target


def test_read_over_plain_https_style_http_without_listing(tmp_path):
    """An HTTP server cannot list: consolidated metadata is what makes the file readable at all."""
    import functools
    import http.server
    import threading

    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="w") as io:
        io.write(small_nwbfile())
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/f.nwb.zarr"
        assert _check(url, storage_options={"client_options": {"allow_http": True}}) == ["ts"]
    finally:
        server.shutdown()
        server.server_close()
