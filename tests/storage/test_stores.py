"""Where a file lives: local paths, pathlib, file:// URLs, single-file .zip stores and any zarr Store."""

from __future__ import annotations

import json
import os
import re
import zipfile

import numpy as np
import pytest
from hdmf.backends.errors import UnsupportedOperation
from nwb_factories import small_nwbfile
from pynwb import NWBHDF5IO, TimeSeries
from zarr.storage import MemoryStore

from hdmf_zarr3 import FormatError, NWBZarrIO, StoreError
from hdmf_zarr3.storage.stores import locations


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
            io.store_handle._on_close = None  # the process dies before close() packs the zip
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


# --- every store: local directory, zip, memory, S3 (the any_store fixture) -------------------------------
def test_round_trip(any_store):
    any_store.write()
    with any_store.open("r") as io:
        nwb = io.read()
        assert np.array_equal(nwb.acquisition["ts"].data[:], np.arange(1000.0))
        assert list(nwb.units.to_dataframe()["quality"]) == ["good", "noise"]


@pytest.mark.parametrize("mode", ["a", "r+"])
def test_append(any_store, mode):
    any_store.write()
    with any_store.open(mode) as io:
        nwb = io.read()
        nwb.add_acquisition(TimeSeries(name="more", data=[1.0, 2.0, 3.0], unit="s", rate=1.0))
        nwb.units.add_unit(spike_times=[9.0], quality="good")
        io.write(nwb)
    with any_store.open("r") as io:
        nwb = io.read()
        assert sorted(nwb.acquisition) == ["more", "ts"]
        assert list(nwb.acquisition["more"].data[:]) == [1.0, 2.0, 3.0] and len(nwb.units) == 3


def test_create_modes(any_store):
    with any_store.open("w-") as io:
        io.write(small_nwbfile())
    with pytest.raises(UnsupportedOperation, match="already exists"):
        any_store.open("x")
    nwb = small_nwbfile()
    nwb.add_acquisition(TimeSeries(name="only_in_second", data=[1.0], unit="s", rate=1.0))
    any_store.write(nwb)  # 'w' replaces what was there
    with any_store.open("r") as io:
        assert "only_in_second" in io.read().acquisition


def test_export_from_hdf5(any_store, tmp_path):
    with NWBHDF5IO(tmp_path / "a.nwb", mode="w") as io:
        io.write(small_nwbfile())
    with NWBHDF5IO(tmp_path / "a.nwb", mode="r") as src:
        NWBZarrIO.export_io(path=any_store.location, src_io=src, **any_store.io_kwargs())
    with any_store.open("r") as io:
        assert np.array_equal(io.read().acquisition["ts"].data[:], np.arange(1000.0))


def test_missing_zip_in_read_mode(tmp_path):
    with pytest.raises(UnsupportedOperation, match="does not exist"):
        NWBZarrIO(tmp_path / "none.nwb.zarr.zip", mode="r")


@pytest.mark.parametrize(
    ("target", "directory", "expected"),
    [
        ("/data/a/raw.nwb.zarr", "/data/b", "../a/raw.nwb.zarr"),
        ("s3://bucket/a/raw.nwb.zarr", "s3://bucket/b", "../a/raw.nwb.zarr"),
        ("s3://other/raw.nwb.zarr", "s3://bucket/b", "s3://other/raw.nwb.zarr"),
        ("s3://bucket/raw.nwb.zarr", "/local/dir", "s3://bucket/raw.nwb.zarr"),
    ],
)
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
        # fsspec's anon=True, as code written for hdmf-zarr passes it: HTTP is anonymous anyway
        assert _check(url, storage_options={"anon": True, "client_options": {"allow_http": True}}) == ["ts"]
    finally:
        server.shutdown()
        server.server_close()


MODES = ["r", "r+", "a", "w", "w-", "x"]


def _listing(directory):
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


@pytest.fixture
def hdf5_file(tmp_path):
    from pynwb import NWBHDF5IO

    with NWBHDF5IO(tmp_path / "s.nwb", mode="w") as io:
        io.write(small_nwbfile())
    return tmp_path / "s.nwb"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["s.nwb", "s.nwb.zarr", "s.nwb.zarr.zip"])
def test_an_hdf5_file_says_to_use_nwbhdf5io_or_convert(hdf5_file, name, mode):
    from hdmf_zarr3 import NotZarrError, ZarrIO

    path = hdf5_file.rename(hdf5_file.parent / name)
    content, before = path.read_bytes(), _listing(path.parent)
    for cls in (NWBZarrIO, ZarrIO):
        with pytest.raises(
            NotZarrError,
            match=r"HDF5 file, not Zarr: read it with pynwb.NWBHDF5IO, or convert it "
            rf"with hdmf_zarr3.convert\('{name}'",
        ) as raised:
            cls(path, mode=mode)
        assert raised.value.path == str(path)
    assert path.read_bytes() == content and _listing(path.parent) == before  # untouched, no lock left


def test_an_hdf5_file_with_a_user_block_is_recognised(tmp_path):
    import h5py

    from hdmf_zarr3 import NotZarrError

    with h5py.File(tmp_path / "u.h5", "w", userblock_size=1024) as f:
        f["x"] = [1, 2]
    with pytest.raises(NotZarrError, match="HDF5 file"):
        NWBZarrIO(tmp_path / "u.h5", mode="r")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "name,content,message",
    [
        ("notes.txt", b"hello", "this is a file, not a Zarr store"),
        ("s.nwb.zarr.zip", b"hello", "this is not a zip file"),
    ],
)
def test_another_file_where_a_zarr_store_belongs_is_named(tmp_path, name, content, message, mode):
    from hdmf_zarr3 import NotZarrError

    (tmp_path / name).write_bytes(content)
    with pytest.raises(NotZarrError, match=message):
        NWBZarrIO(tmp_path / name, mode=mode)
    assert _listing(tmp_path) == [name] and (tmp_path / name).read_bytes() == content


@pytest.mark.parametrize("mode", ["r+", "a", "w", "w-", "x"])
def test_writing_into_a_directory_of_other_files_is_refused(tmp_path, mode):
    """A mistyped path naming, say, a folder of raw data: writing there would mix the new file in, and a
    later mode 'w' would delete everything in it."""
    from hdmf_zarr3 import NotZarrError

    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "recording.bin").write_bytes(b"precious")
    with pytest.raises(NotZarrError, match="holds other files and no Zarr store"):
        NWBZarrIO(tmp_path / "raw", mode=mode)
    assert _listing(tmp_path) == ["raw", "raw/recording.bin"]
    (tmp_path / "empty.nwb.zarr").mkdir()
    if mode != "r+":
        with NWBZarrIO(tmp_path / "empty.nwb.zarr", mode=mode) as io:  # an empty directory is fine
            io.write(small_nwbfile())
        assert _check(tmp_path / "empty.nwb.zarr") == ["ts"]


@pytest.mark.parametrize("name", ["s.nwb.zarr", "s.nwb.zarr.zip"])
def test_mode_a_in_a_missing_directory_is_refused(tmp_path, name):
    """'a' opens a file or creates one beside others: a missing directory means a mistyped path. It is not
    created; 'a' on a missing file in an existing directory creates the file, as NWBHDF5IO does."""
    from hdmf_zarr3 import StoreError

    with pytest.raises(
        StoreError, match=re.escape(f"the directory {tmp_path / 'typo'} does not exist (a mistyped path?)")
    ) as raised:
        NWBZarrIO(tmp_path / "typo" / name, mode="a")
    assert raised.value.path == str(tmp_path / "typo" / name) and _listing(tmp_path) == []
    with NWBZarrIO(tmp_path / name, mode="a") as io:
        io.write(small_nwbfile())
    assert _check(tmp_path / name) == ["ts"]


@pytest.mark.parametrize("mode", ["w", "w-", "x"])
@pytest.mark.parametrize("name", ["s.nwb.zarr", "s.nwb.zarr.zip"])
def test_creating_modes_create_missing_directories(tmp_path, name, mode):
    with NWBZarrIO(tmp_path / "new" / "dir" / name, mode=mode) as io:
        io.write(small_nwbfile())
    assert _check(tmp_path / "new" / "dir" / name) == ["ts"]


@pytest.mark.parametrize("mode", ["a", "w", "w-", "x"])
@pytest.mark.parametrize("below", ["", "dir/"])
def test_a_new_file_below_a_file_is_refused(tmp_path, mode, below):
    from hdmf_zarr3 import StoreError

    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(
        StoreError, match=re.escape(f"cannot create the file: {tmp_path / 'notes.txt'} is a file, not a directory")
    ):
        NWBZarrIO(tmp_path / "notes.txt" / f"{below}s.nwb.zarr", mode=mode)
    assert _listing(tmp_path) == ["notes.txt"]


@pytest.mark.parametrize("mode", ["r", "r+"])
@pytest.mark.parametrize("name", ["s.nwb.zarr", "s.nwb.zarr.zip", "typo/s.nwb.zarr"])
def test_reading_a_missing_file_names_it(tmp_path, name, mode):
    with pytest.raises(
        UnsupportedOperation,
        match=re.escape(f"Unable to open file {tmp_path / name} in '{mode}' mode. File does not exist."),
    ):
        NWBZarrIO(tmp_path / name, mode=mode)
    assert _listing(tmp_path) == []


def test_the_document_cache_reads_a_store_once_and_takes_what_it_is_given():
    import zarr
    from zarr.storage import MemoryStore

    from hdmf_zarr3.storage.stores.document_cache import DocumentCache

    store = MemoryStore()
    zarr.open_group(store, mode="w").create_group("g")
    assert DocumentCache({}).load(store) == {}  # a file being created: nothing is read
    cache = DocumentCache()
    assert cache.loaded is None
    assert set(cache.load(store)) == {"/", "/g"}
    cache.replace({"/": {"node_type": "group"}})
    assert cache.load(store) == {"/": {"node_type": "group"}}


def test_a_rollback_without_a_journal_cannot_undo_and_ends_empty():
    from hdmf_zarr3.storage.safety.rollback import Rollback

    rollback = Rollback()
    assert not rollback.active
    rollback.begin({"/": {}}, {"write": "marker"})
    assert rollback.active and rollback.marker == {"write": "marker"} and not rollback.journaled
    rollback.storing(["/a"], "zarr.json")  # nothing to journal: no error
    with pytest.raises(RuntimeError, match="cannot be undone"):
        rollback.undo()
    rollback.finish()
    assert not rollback.active and rollback.marker is None


# --- issue #38: URLs checked where they enter ----------------------------------------------------------------
def test_a_file_url_is_percent_decoded(tmp_path):
    """``file:`` URLs spell a space ``%20``: the file is the directory ``u r l.nwb.zarr``, not ``u%20r%20l``;
    bytes that are not UTF-8 are the file system's own bytes (``%ff``); a ``%00`` names no file."""
    (tmp_path / "d").mkdir()
    url = (tmp_path / "d").as_uri() + "/u%20r%20l.nwb.zarr"
    with NWBZarrIO(url, mode="w") as io:
        io.write(small_nwbfile(3))
    assert sorted(os.listdir(tmp_path / "d")) == ["u r l.nwb.zarr"]
    with NWBZarrIO(tmp_path / "d" / "u r l.nwb.zarr", mode="r") as io:
        assert io.read().identifier == "TEST123"
    with NWBZarrIO((tmp_path / "d").as_uri() + "/%ff.nwb.zarr", mode="w") as io:
        io.write(small_nwbfile(3))
    assert b"\xff.nwb.zarr" in os.listdir(os.fsencode(tmp_path / "d"))
    with pytest.raises(StoreError, match="NUL"):
        NWBZarrIO((tmp_path / "d").as_uri() + "/a%00b.nwb.zarr", mode="w")
    assert len(os.listdir(tmp_path / "d")) == 2


@pytest.mark.parametrize("mode", ["r", "w", "a"])
@pytest.mark.parametrize(
    "url", ["s3://bucket/x.nwb.zarr.zip", "https://example.invalid/x.nwb.zarr.ZIP", "gs://b/x.zip/"]
)
def test_a_zip_on_an_object_store_is_refused_saying_so(url, mode, monkeypatch):
    """A prefix ending ``.zip`` was written as loose objects; a real zip object was read as "no Zarr group found".
    Refused before any store is made (no request)."""
    from hdmf_zarr3.storage.handles import store_opening as opening

    monkeypatch.setattr(opening, "remote_store", lambda *a: pytest.fail("a store was made"))
    with pytest.raises(StoreError, match="zip file on an object store or web server is not supported"):
        NWBZarrIO(url, mode=mode)


MALFORMED_URLS = ["https://[::1/x.nwb.zarr", "s3://b/x y.nwb.zarr", "s3://b/x\x00.nwb.zarr", "https://h:99999/x.zarr"]


@pytest.mark.parametrize("url", MALFORMED_URLS)
@pytest.mark.parametrize("mode", ["r", "w"])
def test_a_url_no_store_opens_is_our_error(url, mode, monkeypatch):
    from hdmf_zarr3.storage.handles import store_opening as opening

    monkeypatch.setattr(opening, "remote_store", lambda *a: pytest.fail("a store was made"))
    with pytest.raises(StoreError, match="URL"):
        NWBZarrIO(url, mode=mode)


def test_a_malformed_endpoint_is_our_error_with_no_foreign_backtrace(tmp_path):
    """obstore parses an endpoint at its first request, and its Rust code panicked on these, printing a backtrace
    to stderr before our error: checked before obstore sees them (run in a process of its own to see stderr)."""
    import subprocess
    import sys

    endpoints = ["not a url", "http://[::1", "http://local host:9000", "://x", "http://:99999", "", "ftp://x"]
    script = (
        "import sys\n"
        "from hdmf_zarr3 import NWBZarrIO, StoreError\n"
        "for endpoint in sys.argv[1:]:\n"
        "    try:\n"
        "        NWBZarrIO('s3://bucket/x.nwb.zarr', 'r', storage_options={'endpoint_url': endpoint, 'anon': True})\n"
        "    except StoreError as exc:\n"
        "        print('typed', repr(str(exc)))\n"
    )
    import hdmf_zarr3

    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(hdmf_zarr3.__file__))}  # this checkout's
    done = subprocess.run(
        [sys.executable, "-c", script, *endpoints], capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env
    )
    assert done.returncode == 0, done.stderr
    assert "panicked" not in done.stderr and "backtrace" not in done.stderr, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == len(endpoints) and all("the endpoint" in line for line in lines), done.stdout


@pytest.mark.parametrize("name", ["a\x00b", "\ud800"], ids=["nul", "surrogate"])
def test_a_listed_node_no_writer_names_so_is_refused(tmp_path, name):
    """Object stores and stores passed in may hold any key: a node path with a NUL or a lone surrogate (no node
    name holds one, ``names.check_name``) is ``CorruptStoreError``, as from the consolidated copy."""
    from hdmf.build import GroupBuilder
    from writing import write_builder
    from zarr.core.buffer import default_buffer_prototype

    from hdmf_zarr3 import CorruptStoreError, ZarrIO
    from hdmf_zarr3.storage.stores import sync

    write_builder(tmp_path / "f.zarr", GroupBuilder("root", groups={"g": GroupBuilder("g")}))
    store = MemoryStore()
    buffer = default_buffer_prototype().buffer
    for file in (tmp_path / "f.zarr").rglob("zarr.json"):
        key = file.relative_to(tmp_path / "f.zarr").as_posix()
        sync(store.set(key, buffer.from_bytes(file.read_bytes())))
    root = json.loads((tmp_path / "f.zarr" / "g" / "zarr.json").read_text())
    sync(store.set(f"{name}/zarr.json", buffer.from_bytes(json.dumps(root).encode())))
    with pytest.raises(CorruptStoreError, match="node path holds"):
        ZarrIO(store, mode="r-").read_builder()  # (r-: listed, whatever the root's copy says)
