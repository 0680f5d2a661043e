"""Side files beside a file (issue #38, points 1 beside the file and 4): names that always fit, and a lock made
whole at once, never through a name that exists. The room's other side-file functions are tested in
tests/storage/test_paths.py; what the package does with plants at every side file is
tests/storage/test_planted_side_files.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hdmf_zarr3.errors import CorruptStoreError, UnsafeDataError
from hdmf_zarr3.storage.paths import create_side_file, link_side_file, side_stem

LONGEST = 255


@pytest.mark.parametrize("name", ["f.zarr", "x" * 223, "x" * 224, "é" * 127 + "x", "日本" * 40 + ".nwb.zarr.zip"])
def test_every_side_file_name_fits_whatever_the_name(tmp_path, name):
    """A name near the 255-byte limit gets side files named after a cut stem plus a digest of the whole name;
    shorter names keep ``<name><suffix>``; the stem is the same every time (every writer meets one lock)."""
    if len(name.encode()) > LONGEST:
        pytest.skip("no file system holds this name")
    path = str(tmp_path / name)
    stem = side_stem(path)
    assert stem == side_stem(path) and os.path.dirname(stem) == str(tmp_path)
    if len(name.encode()) <= LONGEST - 32:
        assert stem == path
    else:
        assert stem != path and len(os.fsencode(os.path.basename(stem))) <= LONGEST - 32
    for suffix in (".lock", ".partial", ".appending", ".a1b2c3d4.partial", ".0123456789ab.partial.nwb"):
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
