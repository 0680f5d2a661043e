"""Side files beside a file (issue #38, points 1 beside the file and 4): names that always fit, and a lock made
whole at once, never through a name that exists. The room's other side-file functions are tested in
tests/storage/test_paths.py; what the package does with plants at every side file is
tests/storage/test_planted_side_files.py."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from hdmf.build import DatasetBuilder, GroupBuilder
from writing import write_builder

from hdmf_zarr3 import FileLockedError, StoreError, ZarrIO, break_lock, recover
from hdmf_zarr3.errors import CorruptStoreError, UnsafeDataError
from hdmf_zarr3.storage.paths import create_side_file, link_side_file, side_stem

LONGEST = 255
SUFFIX_ROOM = 48  # what a side file's stem leaves for its suffix (storage/paths/side_files.py)


def _tree() -> GroupBuilder:
    return GroupBuilder("root", datasets={"d": DatasetBuilder("d", [0, 1, 2])})


@pytest.mark.parametrize("name", ["f.zarr", "x" * 207, "x" * 208, "é" * 127 + "x", "日本" * 40 + ".nwb.zarr.zip"])
def test_every_side_file_name_fits_whatever_the_name(tmp_path, name):
    """A name near the 255-byte limit gets side files named after a cut stem plus a digest of the whole name;
    shorter names keep ``<name><suffix>``; the stem is the same every time (every writer meets one lock)."""
    if len(name.encode()) > LONGEST:
        pytest.skip("no file system holds this name")
    path = str(tmp_path / name)
    stem = side_stem(path)
    assert stem == side_stem(path) and os.path.dirname(stem) == str(tmp_path)
    if len(name.encode()) <= LONGEST - SUFFIX_ROOM:
        assert stem == path
    else:
        assert stem != path and len(os.fsencode(os.path.basename(stem))) <= LONGEST - SUFFIX_ROOM
    for suffix in (".lock", ".partial", ".appending", ".a1b2c3d4.partial", f".{'0' * 32}.partial"):
        os.close(create_side_file(stem + suffix))  # (ENAMETOOLONG before)
    assert side_stem(str(tmp_path / (name[:-1] + "y"))) != stem


def test_link_side_file_makes_the_name_whole_at_once_and_never_through_a_plant(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"the user's")
    source = tmp_path / "source"
    source.write_bytes(b"all of it")
    link_side_file(source, tmp_path / "made")
    assert (tmp_path / "made").read_bytes() == b"all of it"
    with pytest.raises(FileExistsError):
        link_side_file(source, tmp_path / "made")
    (tmp_path / "out").symlink_to(outside)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    for name, error in [("out", UnsafeDataError), ("dangling", UnsafeDataError), ("fifo", CorruptStoreError)]:
        with pytest.raises(error) as caught:
            link_side_file(source, tmp_path / name)
        assert caught.value.path == str(tmp_path / name)
    with pytest.raises(CorruptStoreError, match="a directory"):
        link_side_file(source, tmp_path / "dir")
    assert outside.read_bytes() == b"the user's" and not Path(tmp_path / "nowhere").exists()


@pytest.mark.parametrize("name", ["f.zarr", "f.zarr.zip"])
@pytest.mark.parametrize("mode", ["a", "r+", "w", "w-new"])
def test_a_full_disk_while_taking_the_lock_is_our_error_with_the_errno(tmp_path, name, mode):
    """ENOSPC as the lock is made (its link into place): a StoreError naming the lock, errno ENOSPC (it was
    None), nothing left beside the file, the file as it was."""
    from faults import installed
    from file_bytes import files

    path = tmp_path / name
    if mode != "w-new":
        write_builder(path, _tree())
    before = files(path) if path.exists() else None
    with installed() as faults, faults.armed(at=1, kind="enospc", where="os.link"):
        with pytest.raises(StoreError) as caught:
            ZarrIO(path, mode=mode.removesuffix("-new"))
    assert faults.fired is not None
    assert caught.value.errno == errno.ENOSPC and caught.value.path == f"{path}.lock"
    assert "cannot create the write lock" in str(caught.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ([name] if before is not None else [])
    assert (files(path) if path.exists() else None) == before


@pytest.mark.parametrize("kind", ["dir", "zip"])
def test_a_file_whose_name_takes_all_255_bytes_is_locked_written_appended_and_recovered(tmp_path, kind):
    """``<name>.lock`` of a 255-byte name cannot exist (ENAMETOOLONG: recover raised a raw OSError); its lock is
    named after a stem that fits, met by every writer of that name."""
    suffix = ".zarr" if kind == "dir" else ".zarr.zip"
    path = tmp_path / ("n" * (LONGEST - len(suffix)) + suffix)
    write_builder(path, _tree())
    with ZarrIO(path, mode="a") as io:
        io.read_builder()["d"].data.append(3)
        with pytest.raises(FileLockedError):
            ZarrIO(path, mode="a")
        (lock,) = [p for p in tmp_path.iterdir() if p.name.endswith(".lock")]
        assert lock.name == os.path.basename(side_stem(str(path))) + ".lock"
    write_builder(path, _tree(), mode="w")  # over the existing one
    assert "nothing to recover" in recover(path)
    assert break_lock(path) is None
    with ZarrIO(path, mode="r") as io:
        assert list(io.read_builder()["d"].data[:]) == [0, 1, 2]
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_a_lock_place_holding_the_users_directory_is_our_error_with_the_errno(tmp_path):
    """``break_lock`` leaves a directory with files in it at the lock's place: a StoreError naming the lock and
    carrying the errno of the refused removal (it carried none)."""
    path = tmp_path / "f.zarr"
    write_builder(path, _tree())
    (tmp_path / "f.zarr.lock").mkdir()
    (tmp_path / "f.zarr.lock" / "notes.txt").write_text("mine")
    with pytest.raises(StoreError, match="directory with files in it") as caught:
        break_lock(path)
    assert caught.value.errno == errno.ENOTEMPTY and caught.value.path == f"{path}.lock"
    assert (tmp_path / "f.zarr.lock" / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("operation", ["a", "recover"])
def test_a_full_disk_while_cutting_back_an_unfinished_zip_update_is_our_error_with_the_errno(tmp_path, operation):
    """The zip cannot be cut back (ENOSPC at its truncation): a StoreError naming the zip with the errno (it was a
    raw OSError), the zip and its record kept, so the next writer or recover cuts it back."""
    from faults import installed

    path = tmp_path / "f.zarr.zip"
    write_builder(path, _tree())
    before = path.read_bytes()
    (tmp_path / "f.zarr.zip.appending").write_text(f'{{"size": {len(before)}}}')
    with open(path, "ab") as f:
        f.write(b"PK\x03\x04 half a member")
    damaged = path.read_bytes()
    call = {"a": lambda: ZarrIO(path, mode="a"), "recover": lambda: recover(path)}[operation]
    with installed() as faults, faults.armed(at=1, kind="enospc", where="os.truncate"):
        with pytest.raises(StoreError) as caught:
            call()
    assert faults.fired is not None
    assert caught.value.errno == errno.ENOSPC and caught.value.path == str(path)
    assert path.read_bytes() == damaged and (tmp_path / "f.zarr.zip.appending").exists()
    assert "cut the zip back" in recover(path) and path.read_bytes() == before


def test_an_hdf5_destination_whose_name_takes_all_255_bytes_is_converted_to(tmp_path):
    """The private directory beside an HDF5 destination is named after a stem that fits (``.<name>.<random>.partial``
    of a 255-byte name could not be made)."""
    from nwb_factories import small_nwbfile
    from pynwb import NWBHDF5IO

    from hdmf_zarr3 import NWBZarrIO, convert

    source = tmp_path / "s.nwb.zarr"
    with NWBZarrIO(source, mode="w") as io:
        io.write(small_nwbfile())
    destination = tmp_path / ("n" * (LONGEST - len(".nwb")) + ".nwb")
    convert(source, destination)
    convert(source, destination)  # over the existing one
    with NWBHDF5IO(str(destination), mode="r") as io:
        assert "ts" in io.read().acquisition
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([source.name, destination.name])
