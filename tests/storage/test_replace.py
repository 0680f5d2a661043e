"""Mode 'w' over an existing file replaces it only when the new write finishes: closing without a write,
an error before or during the write, leave the old file as it was (directories and zips, byte for byte);
on object stores and Store objects the old file stays until the first node is written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from file_bytes import files, series_length
from hdmf.data_utils import DataChunkIterator
from nwb_factories import small_nwbfile
from pynwb import TimeSeries
from writing import write_nwb

from hdmf_zarr3 import IncompleteFileError, NWBZarrIO


def _beside(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p.name != path.name)


def _failing_nwbfile():
    def blocks():
        yield np.arange(100, dtype="f8")
        raise OSError("the acquisition device went away")

    nwb = small_nwbfile(10)
    nwb.add_acquisition(TimeSeries(name="broken", data=DataChunkIterator(blocks(), buffer_size=1), unit="V", rate=1.0))
    return nwb


@pytest.fixture(params=[".nwb.zarr", ".nwb.zarr.zip"])
def existing(request, tmp_path):
    return write_nwb(tmp_path / f"f{request.param}")


def _unchanged(path: Path, before: dict[str, bytes]) -> None:
    assert files(path) == before
    assert _beside(path) == []  # no working copy, no lock left behind
    assert series_length(path) == 1000


def test_closing_without_a_write_keeps_the_old_file(existing):
    before = files(existing)
    io = NWBZarrIO(existing, mode="w")
    io.close()
    _unchanged(existing, before)


def test_an_error_before_the_write_keeps_the_old_file(existing):
    before = files(existing)
    with pytest.raises(KeyError), NWBZarrIO(existing, mode="w"):
        raise KeyError("the user's own mistake")
    _unchanged(existing, before)


def test_a_failed_write_keeps_the_old_file(existing):
    before = files(existing)
    with NWBZarrIO(existing, mode="w") as io, pytest.raises(OSError, match="went away"):
        io.write(_failing_nwbfile())
    _unchanged(existing, before)


def test_a_finished_write_replaces_the_old_file(existing):
    write_nwb(existing, small_nwbfile(10))
    assert _beside(existing) == [] and series_length(existing) == 10


def test_the_new_file_is_in_place_once_write_returns(tmp_path):
    path = write_nwb(tmp_path / "f.nwb.zarr")
    with NWBZarrIO(path, mode="w") as io:
        io.write(small_nwbfile(10))
        assert series_length(path) == 10  # committed and swapped before close()


def test_a_symlinked_file_is_replaced_at_its_target(tmp_path):
    target = write_nwb(tmp_path / "real.nwb.zarr")
    link = tmp_path / "link.nwb.zarr"
    link.symlink_to(target, target_is_directory=True)
    write_nwb(link, small_nwbfile(10))
    assert link.is_symlink() and target.is_dir() and series_length(target) == 10


def test_appends_after_a_replacing_write_go_to_the_new_file(tmp_path):
    path = write_nwb(write_nwb(tmp_path / "f.nwb.zarr"), small_nwbfile(10))
    with NWBZarrIO(path, mode="a") as io:
        nwb = io.read()
        nwb.add_trial(start_time=5.0, stop_time=6.0)
        io.write(nwb)
    with NWBZarrIO(path, mode="r") as io:
        assert len(io.read().trials) == 3
    assert _beside(path) == []


# --- stores that cannot swap files: the old file stays until the first node is written ----------------
@pytest.mark.parametrize("any_store", ["s3", "memory"], indirect=True)
def test_in_place_stores_keep_the_old_file_until_the_first_node_is_written(any_store):
    def read_length():
        with any_store.open("r") as io:
            return len(io.read().acquisition["ts"].data)

    any_store.write()
    any_store.open("w").close()  # no write
    with pytest.raises(KeyError), any_store.open("w"):
        raise KeyError("before the write")
    assert read_length() == 1000
    # once the new file's first node is written the old one is gone: a failure then leaves it incomplete
    with any_store.open("w") as io, pytest.raises(OSError, match="went away"):
        io.write(_failing_nwbfile())
    with pytest.raises(IncompleteFileError, match="a write started"):
        read_length()
    any_store.write(small_nwbfile(10))
    assert read_length() == 10


def test_without_an_atomic_exchange_the_swap_renames_twice_and_leaves_nothing_behind(tmp_path, monkeypatch):
    """Where renameat2 is missing (not Linux, some network file systems) the old file is renamed aside and
    the new one into place; both steps done, nothing is left beside the file."""
    from hdmf_zarr3.storage.safety import replacing

    monkeypatch.setattr(replacing, "_exchange", lambda a, b: False)
    path = write_nwb(tmp_path / "f.nwb.zarr")
    write_nwb(path, small_nwbfile(10))
    assert series_length(path) == 10 and _beside(path) == []
