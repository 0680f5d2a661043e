"""A zip opened to be changed is read in place and changed in proportion to the change (issue #19)."""

from __future__ import annotations

import os
import zipfile

import pytest
from nwb_factories import small_nwbfile

from hdmf_zarr3 import IncompleteFileError, NWBZarrIO, recover
from hdmf_zarr3.storage.zip import zipped


def _zip(tmp_path):
    path = tmp_path / "f.nwb.zarr.zip"
    with NWBZarrIO(path, mode="w") as io:
        io.write(small_nwbfile())
    return path


def _working_files(path):
    """Files in the working directories beside the zip (``<zip>.<random>.partial/``)."""
    return [
        os.path.join(base, name)
        for entry in os.scandir(path.parent)
        if entry.is_dir() and entry.name.startswith(path.name + ".")
        for base, _, names in os.walk(entry.path)
        for name in names
    ]


@pytest.mark.parametrize("mode", ["a", "r+"])
def test_opening_a_zip_to_change_it_extracts_nothing_and_closing_without_a_change_leaves_it(tmp_path, mode):
    path = _zip(tmp_path)
    before, mtime = path.read_bytes(), path.stat().st_mtime_ns
    with NWBZarrIO(path, mode=mode) as io:
        nwb = io.read()
        assert nwb.trials["start_time"][:].tolist() == [0.0, 1.0]
        assert _working_files(path) == []  # the zip is read in place, not extracted
    assert path.read_bytes() == before and path.stat().st_mtime_ns == mtime
    assert zipped.leftovers(str(path)) == []


def test_an_append_adds_to_the_zip_without_rewriting_it(tmp_path):
    path = _zip(tmp_path)
    before = path.read_bytes()
    with NWBZarrIO(path, mode="a") as io:
        nwb = io.read()
        nwb.add_trial(start_time=2.0, stop_time=3.0)
        io.write(nwb)
    after = path.read_bytes()
    assert after.startswith(before)  # the old archive is untouched: only the change is added after it
    assert len(after) - len(before) < len(before)
    with zipfile.ZipFile(path) as archive:
        assert archive.testzip() is None
        names = archive.namelist()
        assert len(names) == len(set(names))  # each member listed once: the new version
    with NWBZarrIO(path, mode="r") as io:
        assert io.read().trials["start_time"][:].tolist() == [0.0, 1.0, 2.0]


def test_old_versions_of_members_are_dropped_before_they_take_half_the_zip(tmp_path):
    path = _zip(tmp_path)
    for i in range(12):
        with NWBZarrIO(path, mode="a") as io:
            nwb = io.read()
            nwb.add_trial(start_time=2.0 + i, stop_time=3.0 + i)
            io.write(nwb)
    with zipfile.ZipFile(path) as archive:
        live = sum(30 + len(i.filename) + len(i.extra) + i.compress_size for i in archive.infolist())
    assert path.stat().st_size <= 2 * live + 65536 + 46 * len(archive.infolist()) * 2
    with NWBZarrIO(path, mode="r") as io:
        assert io.read().trials["start_time"][:].tolist() == [0.0, 1.0] + [2.0 + i for i in range(12)]


def test_an_update_killed_before_it_finished_is_undone_by_the_next_writer(tmp_path):
    path = _zip(tmp_path)
    before = path.read_bytes()
    # what a writer killed inside update_zip leaves: the record of the length, and bytes after it
    (tmp_path / (path.name + zipped.APPENDING)).write_text(f'{{"size": {len(before)}}}')
    with open(path, "ab") as f:
        f.write(b"PK\x03\x04 half a member")
    with NWBZarrIO(path, mode="a") as io:
        assert io.read().trials["start_time"][:].tolist() == [0.0, 1.0]
    assert path.read_bytes() == before
    assert zipped.leftovers(str(path)) == []


def test_a_failed_write_leaves_the_zip_as_it_was(tmp_path):
    path = _zip(tmp_path)
    before = path.read_bytes()
    with pytest.raises(RuntimeError, match="boom"), NWBZarrIO(path, mode="a") as io:
        nwb = io.read()
        nwb.add_trial(start_time=2.0, stop_time=3.0)
        io.write(nwb)
        nwb.add_trial(start_time=3.0, stop_time=4.0)
        raise RuntimeError("boom")
    # the first write committed: its rows are added; the second row was undone with the error
    with NWBZarrIO(path, mode="r") as io:
        assert io.read().trials["start_time"][:].tolist() == [0.0, 1.0, 2.0]
    assert path.read_bytes().startswith(before)


def test_an_update_killed_after_it_finished_but_before_its_record_was_removed_is_kept(tmp_path):
    path = _zip(tmp_path)
    before = len(path.read_bytes())
    with NWBZarrIO(path, mode="a") as io:
        nwb = io.read()
        nwb.add_trial(start_time=2.0, stop_time=3.0)
        io.write(nwb)
    finished = path.read_bytes()
    (tmp_path / (path.name + zipped.APPENDING)).write_text(f'{{"size": {before}}}')
    with NWBZarrIO(path, mode="a") as io:
        assert io.read().trials["start_time"][:].tolist() == [0.0, 1.0, 2.0]
    assert path.read_bytes() == finished
    assert zipped.leftovers(str(path)) == []


def test_a_reader_of_a_zip_whose_update_did_not_finish_is_told_so(tmp_path):
    """Readers take no lock: one that opens a zip while a change is half added (or after its writer was
    killed) gets IncompleteFileError naming recover, not a zip error; recover gives back the zip as it was."""
    path = _zip(tmp_path)
    before = path.read_bytes()
    (tmp_path / (path.name + zipped.APPENDING)).write_text(f'{{"size": {len(before)}}}')
    with open(path, "ab") as f:  # more than zip readers search for an end record: the zip reads as none
        f.write(b"PK\x03\x04" + bytes(100_000))
    with pytest.raises(IncompleteFileError, match=r"a change being added to the zip did not finish.*recover") as err:
        NWBZarrIO(path, mode="r")
    assert err.value.path == str(path)
    assert recover(path).endswith("cut the zip back to what it was before a change that did not finish")
    assert path.read_bytes() == before and zipped.leftovers(str(path)) == []
    with NWBZarrIO(path, mode="r") as io:
        assert io.read().trials["start_time"][:].tolist() == [0.0, 1.0]
