"""Nothing destroys its own source: convert/export onto the source (or inside it, or around it), and mode
'w' on a file this process still reads, are refused before anything is changed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from file_bytes import files
from nwb_factories import small_nwbfile
from pynwb import NWBHDF5IO
from writing import write_nwb
from zarr.storage import LocalStore, MemoryStore

from hdmf_zarr3 import NotZarrError, NWBZarrIO, SelfOverwriteError, convert


@pytest.fixture
def source(tmp_path):
    return write_nwb(tmp_path / "s.nwb.zarr")


def _intact(path: Path, before: dict[str, bytes]) -> None:
    assert files(path) == before
    with NWBZarrIO(path, mode="r") as io:
        assert np.array_equal(io.read().acquisition["ts"].data[:], np.arange(1000.0))


@pytest.mark.parametrize("spelling", ["same", "slash", "relative", "symlink", "file-url"])
@pytest.mark.parametrize("layout", [{}, {"chunks": "auto", "codec": "zstd"}])
def test_convert_onto_itself_is_refused(source, spelling, layout, monkeypatch):
    before = files(source)
    monkeypatch.chdir(source.parent)
    dst = {
        "same": str(source),
        "slash": f"{source}/",
        "relative": f"./{source.name}/",
        "file-url": f"file://{source}",
    }.get(spelling)
    if spelling == "symlink":
        dst = source.parent / "link.nwb.zarr"
        dst.symlink_to(source, target_is_directory=True)
    with pytest.raises(SelfOverwriteError, match="is the source"):
        convert(source, dst, **layout)
    _intact(source, before)


def test_convert_inside_or_around_the_source_is_refused(source):
    before = files(source)
    with pytest.raises(SelfOverwriteError, match="lies inside the source"):
        convert(source, source / "acquisition" / "copy.nwb.zarr")
    with pytest.raises(SelfOverwriteError, match="contains the source"):
        convert(source, source.parent)
    _intact(source, before)


def test_convert_a_zip_or_an_hdf5_file_onto_itself_is_refused(tmp_path):
    zipped, h5 = tmp_path / "s.nwb.zarr.zip", tmp_path / "s.nwb"
    with NWBZarrIO(zipped, mode="w") as io:
        io.write(small_nwbfile())
    with NWBHDF5IO(str(h5), mode="w") as io:
        io.write(small_nwbfile())
    for path in (zipped, h5):
        before = path.read_bytes()
        with pytest.raises(SelfOverwriteError):
            convert(path, Path(str(path)))
        assert path.read_bytes() == before


def test_convert_onto_the_same_url_is_refused_before_any_connection():
    # refused before a store is opened: no server is needed (and none is contacted)
    with pytest.raises(SelfOverwriteError, match="is the source"):
        convert("s3://bucket/a/s.nwb.zarr", "s3://bucket/a/./s.nwb.zarr/")
    with pytest.raises(SelfOverwriteError, match="lies inside"):
        convert("s3://bucket/a/s.nwb.zarr", "s3://bucket/a/s.nwb.zarr/x.nwb.zarr")


def test_convert_between_stores_refuses_the_same_store(source):
    store = LocalStore(source)
    with pytest.raises(SelfOverwriteError):
        convert(store, store)
    with pytest.raises(SelfOverwriteError, match="is the source"):
        convert(source, LocalStore(source))


def test_cli_convert_onto_itself_fails_and_keeps_the_file(source):
    before = files(source)
    done = subprocess.run(
        [sys.executable, "-m", "hdmf_zarr3.cli", "convert", str(source), f"{source}/"], capture_output=True, text=True
    )
    assert done.returncode == 1 and "SelfOverwriteError" in done.stderr, done.stderr
    _intact(source, before)


def test_export_onto_the_file_being_read_is_refused(source):
    before = files(source)
    with NWBZarrIO(source, mode="r") as src_io:
        src_io.read()
        with pytest.raises(SelfOverwriteError, match="is open in this process"):
            NWBZarrIO(source, mode="w")
    _intact(source, before)


def test_mode_w_waits_until_the_readers_of_this_process_are_closed(source, tmp_path):
    reader = NWBZarrIO(source, mode="r")
    data = reader.read().acquisition["ts"].data
    for mode in ("w", "x", "w-"):
        with pytest.raises(SelfOverwriteError, match="Close that file first"):
            NWBZarrIO(source, mode=mode)
    with pytest.raises(NotZarrError):  # a directory of other files is never written into
        NWBZarrIO(tmp_path, mode="w")
    assert np.array_equal(data[:], np.arange(1000.0))  # the reader still reads its data
    reader.close()
    with NWBZarrIO(source, mode="w") as io:  # closed: replacing it is the user's choice
        io.write(small_nwbfile(10))


def test_mode_w_on_a_file_around_an_open_one_is_refused(tmp_path):
    outer = write_nwb(tmp_path / "outer.nwb.zarr")
    inner = write_nwb(outer / "inner.nwb.zarr")
    before = files(outer)
    with NWBZarrIO(inner, mode="r") as reader:
        reader.read()
        with pytest.raises(SelfOverwriteError, match="contains a file that is open"):
            NWBZarrIO(outer, mode="w")
    with NWBZarrIO(outer, mode="r") as reader:
        reader.read()
        with pytest.raises(SelfOverwriteError, match="lies inside a file that is open"):
            NWBZarrIO(outer / "acquisition" / "new.nwb.zarr", mode="w")
    assert files(outer) == before


def test_a_store_object_open_for_reading_is_not_replaced():
    store = MemoryStore()
    with NWBZarrIO(store, mode="w") as io:
        io.write(small_nwbfile())
    with NWBZarrIO(store, mode="r") as reader:
        reader.read()
        with pytest.raises(SelfOverwriteError):
            NWBZarrIO(store, mode="w")


def test_appending_beside_an_open_reader_is_allowed(source):
    """Only replacing is refused: an append changes nothing a reader already sees."""
    with NWBZarrIO(source, mode="r") as reader, NWBZarrIO(source, mode="a") as writer:
        reader.read()
        writer.read()
    assert os.path.isdir(source)


def test_a_reader_nobody_refers_to_does_not_block_a_replacement(source):
    """``read_nwb`` keeps its io inside a reference cycle: once the file it returned is dropped, nothing
    reads the file any more, and mode 'w' goes ahead (a reader still in use is refused, above)."""
    import gc

    gc.disable()  # the cycle stays until the replacement looks for readers
    try:
        nwb = NWBZarrIO.read_nwb(path=str(source))
        assert len(nwb.acquisition["ts"].data) == 1000
        del nwb
        with NWBZarrIO(source, mode="w") as io:
            io.write(small_nwbfile(10))
    finally:
        gc.enable()
    with NWBZarrIO(source, mode="r") as io:
        assert len(io.read().acquisition["ts"].data) == 10
