"""Virtual chunks are confined by their real location (issue #27, point 3): a chunk reference naming a path
inside the repository's directory that is, or passes through, a symlink leading out is refused at open, by
``validate`` and by ``convert``, before icechunk reads a byte; a symlink that stays inside is followed."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np
import pytest
from virtual_files import EPHYS, hdf5_source

from hdmf_zarr3 import NWBZarrIO, SourceChangedError, UnsafeLinkError, convert
from hdmf_zarr3.storage.virtual import repo as virtual_repo
from hdmf_zarr3.storage.virtual import source_files as virtual_sources

pytest.importorskip("icechunk")


def _crafted(tmp_path: Path, real: Path, named: Path) -> Path:
    """A repository ``tmp_path/data/s.icechunk`` whose virtual chunks and container name ``named`` as it is
    spelled (not resolved), as a crafted repository may: its bytes are those of ``real``."""
    dst = tmp_path / "data" / "s.icechunk"
    source = dataclasses.replace(virtual_sources.local_source(real), url=named.absolute().as_uri())
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(virtual_sources, "local_source", lambda path: source)
        patch.setattr(virtual_sources, "open_file", lambda source, options: open(real, "rb"))
        patch.setattr(virtual_repo, "_prefix", lambda d: "file://" + os.fspath(d).rstrip(os.sep) + "/")
        convert(real, dst, virtual=True)
    return dst


def _secret(tmp_path: Path) -> Path:
    (tmp_path / "data").mkdir()
    (tmp_path / "secret").mkdir()
    return hdf5_source(tmp_path / "secret" / "s.nwb")  # a file outside the repository's directory


def _beside(tmp_path: Path, secret: Path) -> Path:
    (tmp_path / "data" / "link").symlink_to(secret.parent, target_is_directory=True)
    return tmp_path / "data" / "link" / "s.nwb"


def _file(tmp_path: Path, secret: Path) -> Path:
    (tmp_path / "data" / "s.nwb").symlink_to(secret)
    return tmp_path / "data" / "s.nwb"


def _chain(tmp_path: Path, secret: Path) -> Path:
    (tmp_path / "data" / "b").symlink_to(secret.parent, target_is_directory=True)
    (tmp_path / "data" / "a").symlink_to(tmp_path / "data" / "b", target_is_directory=True)
    return tmp_path / "data" / "a" / "s.nwb"


def _dotdot(tmp_path: Path, secret: Path) -> Path:
    return Path(str(tmp_path / "data") + "/../secret/s.nwb")


@pytest.mark.parametrize("how", [_beside, _file, _chain], ids=["dir-beside", "file", "chain"])
def test_a_virtual_chunk_through_a_symlink_leading_out_is_refused(tmp_path, how):
    secret = _secret(tmp_path)
    dst = _crafted(tmp_path, secret, how(tmp_path, secret))
    with pytest.raises(UnsafeLinkError, match="outside the allowed directories") as err:
        NWBZarrIO(dst, "r")
    assert str(secret.parent.resolve()) in str(err.value) and err.value.path == str(dst)
    # the directory holding the secret, named by the reader, is allowed
    with NWBZarrIO(dst, "r", external_roots=[secret.parent]) as io:
        np.testing.assert_array_equal(io.read().acquisition["ephys"].data[:100], EPHYS[:100])


def test_a_dotdot_in_a_virtual_chunk_location_is_never_read(tmp_path):
    """icechunk normalizes a chunk's URL (``data/../secret`` is ``secret``), which no allowed container then
    matches: refused when read."""
    secret = _secret(tmp_path)
    dst = _crafted(tmp_path, secret, _dotdot(tmp_path, secret))
    with pytest.raises((UnsafeLinkError, SourceChangedError)):
        with NWBZarrIO(dst, "r") as io:
            io.read().acquisition["ephys"].data[:100]


def test_a_symlinked_directory_inside_the_repository_is_refused(tmp_path):
    secret = _secret(tmp_path)
    dst = _crafted(tmp_path, secret, tmp_path / "data" / "s.icechunk" / "link" / "s.nwb")
    (dst / "link").symlink_to(secret.parent, target_is_directory=True)  # shipped inside the repository
    with pytest.raises(UnsafeLinkError, match="outside the allowed directories"):
        NWBZarrIO(dst, "r")


def test_validate_and_convert_refuse_what_reading_refuses(tmp_path, capsys):
    from hdmf_zarr3.cli import main

    secret = _secret(tmp_path)
    dst = _crafted(tmp_path, secret, _beside(tmp_path, secret))
    assert main(["validate", str(dst)]) != 0
    out = capsys.readouterr()
    assert "outside the allowed directories" in out.out + out.err
    for suffix in (".nwb", ".nwb.zarr"):
        out_file = tmp_path / f"copy{suffix}"
        with pytest.raises(UnsafeLinkError):
            convert(dst, out_file)
        assert not out_file.exists()


def test_a_symlink_that_stays_inside_is_followed(tmp_path):
    (tmp_path / "data" / "real").mkdir(parents=True)
    real = hdf5_source(tmp_path / "data" / "real" / "s.nwb")
    (tmp_path / "data" / "link").symlink_to(tmp_path / "data" / "real", target_is_directory=True)
    dst = _crafted(tmp_path, real, tmp_path / "data" / "link" / "s.nwb")
    with NWBZarrIO(dst, "r") as io:
        np.testing.assert_array_equal(io.read().acquisition["ephys"].data[:], EPHYS)


def test_a_virtual_chunk_in_a_fifo_is_refused_without_waiting(tmp_path):
    (tmp_path / "data").mkdir()
    real = hdf5_source(tmp_path / "s.nwb")
    os.mkfifo(tmp_path / "data" / "pipe.nwb")
    dst = _crafted(tmp_path, real, tmp_path / "data" / "pipe.nwb")
    with pytest.raises(UnsafeLinkError, match="not a regular file"):
        NWBZarrIO(dst, "r")


def test_a_crafted_source_record_through_a_symlink_leading_out_is_not_probed(tmp_path):
    """The root's record of sources is looked at (stat) only where chunks may be read: a record naming a file
    through a symlink leading out (here a missing one, refused as gone if it were looked at) is ignored."""
    import icechunk

    from hdmf_zarr3.format.vocabulary.names import VIRTUAL_SOURCES_ATTR
    from hdmf_zarr3.storage.stores import nodes

    (tmp_path / "data").mkdir()
    (tmp_path / "elsewhere").mkdir()
    src = hdf5_source(tmp_path / "data" / "s.nwb")
    dst = tmp_path / "data" / "s.icechunk"
    convert(src, dst, virtual=True)
    (tmp_path / "data" / "link").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    session = icechunk.Repository.open(icechunk.local_filesystem_storage(str(dst))).writable_session("main")
    root = nodes.read_root(session.store)
    root["attributes"][VIRTUAL_SOURCES_ATTR].append(
        {"location": (tmp_path / "data" / "link" / "secret").as_uri(), "size": 1, "mtime_ns": 1}
    )
    nodes.put_documents(session.store, {"/": root})
    session.commit("crafted")
    with NWBZarrIO(dst, "r") as io:
        np.testing.assert_array_equal(io.read().acquisition["ephys"].data[:10], EPHYS[:10])
