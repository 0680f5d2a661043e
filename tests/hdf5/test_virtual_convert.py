"""convert(..., virtual=True): an HDF5 NWB file as an icechunk repository whose large datasets are read
in place from the HDF5 file (issue #20)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from hdmf.backends.errors import UnsupportedOperation
from pynwb import NWBHDF5IO
from virtual_files import EPHYS, IMAGING, hdf5_source

from hdmf_zarr3 import HdmfZarrError, NWBZarrIO, SourceChangedError, convert

pytest.importorskip("icechunk")


@pytest.fixture
def converted(tmp_path):
    (tmp_path / "data").mkdir()
    src = hdf5_source(tmp_path / "data" / "s.nwb")
    dst = tmp_path / "data" / "s.icechunk"
    report = convert(src, dst, virtual=True)
    return src, dst, report


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def test_large_datasets_become_virtual_and_the_rest_is_copied_with_the_reason(converted):
    src, dst, report = converted
    assert report["/acquisition/ephys/data"].startswith("virtual")
    assert report["/acquisition/imaging/data"].startswith("virtual")
    assert report["/acquisition/small/data"].startswith("copied") and "smaller" in report["/acquisition/small/data"]
    assert _size(dst) < 0.05 * (EPHYS.nbytes + IMAGING.nbytes)  # the bulk stays in the HDF5 file


def test_the_repository_reads_as_the_hdf5_file_does(converted):
    src, dst, _ = converted
    with NWBHDF5IO(src, "r") as h5_io, NWBZarrIO(dst, "r") as io:
        ours, theirs = io.read(), h5_io.read()
        np.testing.assert_array_equal(ours.acquisition["ephys"].data[:], EPHYS)
        np.testing.assert_array_equal(ours.acquisition["ephys"].data[12_345:15_000, 3], EPHYS[12_345:15_000, 3])
        np.testing.assert_array_equal(ours.acquisition["imaging"].data[:], IMAGING)
        np.testing.assert_array_equal(ours.acquisition["imaging"].data[299], IMAGING[299])
        assert ours.acquisition["ephys"].electrodes.table.to_dataframe().shape == (16, 3)
        assert ours.trials.to_dataframe().equals(theirs.trials.to_dataframe())
        assert ours.acquisition["small"].data[:].tolist() == list(range(10))
        assert ours.acquisition["ephys"].rate == theirs.acquisition["ephys"].rate


def _touch(path: Path, seconds: int = 2) -> None:
    stat = os.stat(path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + seconds * 10**9))


def test_a_changed_source_is_refused_at_open_instead_of_giving_wrong_bytes(converted):
    src, dst, _ = converted
    _touch(src)
    with pytest.raises(SourceChangedError, match="changed since the repository was made") as err:
        NWBZarrIO(dst, "r")
    assert err.value.path == str(dst) and "s.nwb" in str(err.value)


def test_a_source_changed_while_the_repository_is_open_is_refused_when_read(converted):
    src, dst, _ = converted
    with NWBZarrIO(dst, "r") as io:
        data = io.read().acquisition["ephys"].data
        _touch(src)
        with pytest.raises(SourceChangedError, match="changed since the repository was made") as err:
            data[:100]
        assert "acquisition/ephys/data" in err.value.path


def test_a_source_gone_is_refused_at_open(converted):
    src, dst, _ = converted
    src.unlink()
    with pytest.raises(SourceChangedError, match="is gone"):
        NWBZarrIO(dst, "r")


def test_virtual_chunks_outside_the_allowed_directories_are_never_read(converted, tmp_path):
    src, dst, _ = converted
    moved = tmp_path / "elsewhere" / "s.icechunk"
    moved.parent.mkdir()
    shutil.move(dst, moved)  # its chunks now point outside its directory: not allowed by default
    with NWBZarrIO(moved, "r") as io:
        with pytest.raises(SourceChangedError, match="not allowed"):
            io.read().acquisition["ephys"].data[:100]
    with NWBZarrIO(moved, "r", external_roots=[src.parent]) as io:
        np.testing.assert_array_equal(io.read().acquisition["ephys"].data[:100], EPHYS[:100])


def test_a_repository_opens_by_its_path_for_reading_only(converted):
    _, dst, _ = converted
    with pytest.raises(Exception, match="mode 'r' only"):
        NWBZarrIO(dst, "a")


def test_an_existing_destination_is_never_replaced(tmp_path):
    (tmp_path / "data").mkdir()
    src = hdf5_source(tmp_path / "data" / "s.nwb")
    dst = tmp_path / "data" / "taken"
    dst.mkdir()
    (dst / "keep.txt").write_text("mine")
    with pytest.raises(Exception, match="never replaced"):
        convert(src, dst, virtual=True)
    assert (dst / "keep.txt").read_text() == "mine"


def test_the_command_converts_virtually_and_says_what_became_of_each_dataset(tmp_path, capsys):
    from hdmf_zarr3.cli import main

    (tmp_path / "data").mkdir()
    src = hdf5_source(tmp_path / "data" / "s.nwb")
    dst = tmp_path / "data" / "s.icechunk"
    assert main(["convert", "--virtual", "--no-progress", str(src), str(dst)]) == 0
    out = capsys.readouterr().out
    assert "/acquisition/ephys/data: virtual" in out and "/acquisition/small/data: copied" in out
    with NWBZarrIO(dst, "r") as io:
        np.testing.assert_array_equal(io.read().acquisition["ephys"].data[:10], EPHYS[:10])


def test_info_shows_which_arrays_are_virtual_and_where_their_bytes_live(converted, capsys):
    from hdmf_zarr3.cli import main

    src, dst, _ = converted
    assert main(["info", str(dst)]) == 0
    lines = capsys.readouterr().out.splitlines()
    ephys = next(line for line in lines if line.strip().startswith("data") and "(60000, 16)" in line)
    assert f"virtual: 6 chunks in {src.resolve().as_uri()}" in ephys
    small = next(line for line in lines if "(10,)" in line and line.strip().startswith("data"))
    assert "virtual" not in small


@pytest.mark.parametrize("suffix", [".nwb.zarr", ".nwb"])
def test_a_virtual_repository_converts_to_a_file_holding_every_byte(converted, suffix):
    src, dst, _ = converted
    out = dst.parent / f"materialized{suffix}"
    convert(dst, out)
    src.unlink()  # the copy no longer needs the HDF5 file
    opener = NWBZarrIO if suffix.endswith("zarr") else NWBHDF5IO
    with opener(str(out), "r") as io:
        nwb = io.read()
        np.testing.assert_array_equal(nwb.acquisition["ephys"].data[:], EPHYS)
        np.testing.assert_array_equal(nwb.acquisition["imaging"].data[:], IMAGING)


def test_plain_zarr_python_and_icechunk_read_the_virtual_arrays(converted):
    import icechunk
    import zarr

    src, dst, _ = converted
    prefix = src.parent.resolve().as_uri() + "/"
    repo = icechunk.Repository.open(
        icechunk.local_filesystem_storage(str(dst)),
        authorize_virtual_chunk_access={prefix: icechunk.credentials.LocalFileSystemAccess},
    )
    root = zarr.open_group(repo.readonly_session("main").store, mode="r")
    np.testing.assert_array_equal(root["acquisition/ephys/data"][:], EPHYS)
    np.testing.assert_array_equal(root["acquisition/imaging/data"][:], IMAGING)


def test_a_crafted_source_record_outside_the_allowed_directories_is_not_probed(converted, tmp_path):
    """The root's record of sources is data: one naming a file elsewhere (here a missing one, which would
    be refused as gone if it were looked at) is ignored; its chunks could not be read anyway."""
    import icechunk

    from hdmf_zarr3.format.vocabulary.names import VIRTUAL_SOURCES_ATTR

    _, dst, _ = converted
    repo = icechunk.Repository.open(icechunk.local_filesystem_storage(str(dst)))
    session = repo.writable_session("main")
    from hdmf_zarr3.storage.stores import nodes

    root = nodes.read_root(session.store)
    root["attributes"][VIRTUAL_SOURCES_ATTR].append(
        {"location": (tmp_path / "nowhere" / "secret").as_uri(), "size": 1, "mtime_ns": 1}
    )
    nodes.put_documents(session.store, {"/": root})
    session.commit("crafted")
    with NWBZarrIO(dst, "r") as io:  # opens: the crafted entry is outside the repository's directory
        assert io.read().acquisition["small"].data[:].tolist() == list(range(10))


def _refused_as_incomplete_and_replaced(src: Path, dst: Path) -> None:
    """Opening ``dst`` is refused as incomplete, naming it; converting ``src`` there replaces what is there."""
    from hdmf_zarr3 import IncompleteFileError

    with pytest.raises(IncompleteFileError, match="convert the HDF5 file again") as err:
        NWBZarrIO(dst, "r")
    assert err.value.path == str(dst)
    convert(src, dst, virtual=True)
    with NWBZarrIO(dst, "r") as io:
        np.testing.assert_array_equal(io.read().acquisition["ephys"].data[:5], EPHYS[:5])


def test_an_unfinished_conversion_is_refused_as_incomplete_and_replaced_by_the_next(tmp_path):
    (tmp_path / "data").mkdir()
    src = hdf5_source(tmp_path / "data" / "s.nwb")
    dst = tmp_path / "data" / "s.icechunk"
    import icechunk

    from hdmf_zarr3.storage.virtual import repo

    storage = icechunk.local_filesystem_storage(str(dst))
    icechunk.Repository.create(storage).set_metadata(repo.CONVERSION_MARK)  # what a killed conversion leaves
    _refused_as_incomplete_and_replaced(src, dst)


def test_an_empty_repository_that_no_conversion_made_is_left_alone(tmp_path):
    (tmp_path / "data").mkdir()
    src = hdf5_source(tmp_path / "data" / "s.nwb")
    dst = tmp_path / "data" / "s.icechunk"
    import icechunk

    icechunk.Repository.create(icechunk.local_filesystem_storage(str(dst)))  # made with icechunk, not by us
    with pytest.raises(UnsupportedOperation, match="no Zarr group found"):  # it opens as empty
        NWBZarrIO(dst, "r")
    with pytest.raises(Exception, match="remove it first"):
        convert(src, dst, virtual=True)
    assert icechunk.Repository.exists(icechunk.local_filesystem_storage(str(dst)))


def test_sources_in_directories_whose_names_need_quoting_in_a_url(tmp_path):
    folder = tmp_path / "lab data #1 (%)"
    folder.mkdir()
    src = hdf5_source(folder / "s e.nwb")
    dst = folder / "s e.icechunk"
    assert convert(src, dst, virtual=True)["/acquisition/ephys/data"].startswith("virtual")
    with NWBZarrIO(dst, "r") as io:
        np.testing.assert_array_equal(io.read().acquisition["ephys"].data[:100], EPHYS[:100])


def test_a_source_removed_while_the_repository_is_open_is_a_typed_error_when_read(converted):
    src, dst, _ = converted
    with NWBZarrIO(dst, "r") as io:
        data = io.read().acquisition["ephys"].data
        src.unlink()
        with pytest.raises(SourceChangedError, match="gone or cannot be read") as err:
            data[:100]
        assert "acquisition/ephys/data" in err.value.path


@pytest.mark.parametrize("late", [0.0, 0.15, 0.5])
def test_a_failed_creation_leaves_nothing_even_where_writes_land_late(tmp_path, monkeypatch, late):
    """icechunk returns a creation at its first failed write while its others may still land (CI, a full disk:
    the initial transaction log came after the removal, a repository nothing could read was left): a write
    landing ``late`` seconds after the failure is removed too."""
    import threading

    import icechunk

    dst = tmp_path / "v.icechunk"
    landed = threading.Event()

    def failing_create(storage, *args, **kwargs):
        (dst / "snapshots").mkdir(parents=True)

        def land():
            try:
                (dst / "transactions").mkdir(parents=True, exist_ok=True)
                (dst / "transactions" / "1CECHNKREP0F1RSTCMT0").write_bytes(b"late")
            except FileNotFoundError:
                pass  # the removal took the directory between the two: this write could not land
            finally:
                landed.set()

        threading.Timer(late, land).start()
        raise icechunk.IcechunkError("No space left on device (os error 28)")

    monkeypatch.setattr(icechunk.Repository, "create", staticmethod(failing_create))
    with pytest.raises(HdmfZarrError):
        convert(hdf5_source(tmp_path / "s.nwb"), dst, virtual=True)
    assert landed.wait(5)
    assert not dst.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["s.nwb"]


def test_what_a_repository_creation_cut_short_leaves_is_refused_as_incomplete_and_replaced(tmp_path):
    """icechunk writes its first snapshot's transaction log and snapshot before the repository's own objects;
    the endpoint failing right after (and the removal with it) left them: not a repository, read as "no Zarr
    group found" and refused by the next conversion as something in the way. Made here from a real creation."""
    import icechunk

    from hdmf_zarr3.storage.virtual import repo

    (tmp_path / "data").mkdir()
    src = hdf5_source(tmp_path / "data" / "s.nwb")
    dst = tmp_path / "data" / "s.icechunk"
    icechunk.Repository.create(icechunk.local_filesystem_storage(str(dst)))
    made = {p.relative_to(dst).as_posix() for p in dst.rglob("*") if p.is_file()}
    assert repo.CREATION_LEFTOVERS <= made, made  # (icechunk's first objects, by the id of its first snapshot)
    for leftovers in ([f"transactions/{repo.FIRST_SNAPSHOT}"], sorted(repo.CREATION_LEFTOVERS)):
        for name in made - set(leftovers):
            (dst / name).unlink()
        _refused_as_incomplete_and_replaced(src, dst)
        shutil.rmtree(dst)
        icechunk.Repository.create(icechunk.local_filesystem_storage(str(dst)))
        made = {p.relative_to(dst).as_posix() for p in dst.rglob("*") if p.is_file()}


def test_leftovers_beside_anything_else_are_left_alone(tmp_path):
    from hdmf_zarr3.storage.virtual import repo

    (tmp_path / "data").mkdir()
    src = hdf5_source(tmp_path / "data" / "s.nwb")
    dst = tmp_path / "data" / "s.icechunk"
    (dst / "transactions").mkdir(parents=True)
    (dst / "transactions" / repo.FIRST_SNAPSHOT).write_bytes(b"")
    (dst / "notes.txt").write_text("mine")
    with pytest.raises(UnsupportedOperation, match="no Zarr group found"):
        NWBZarrIO(dst, "r")
    with pytest.raises(HdmfZarrError, match="remove it first"):
        convert(src, dst, virtual=True)
    assert (dst / "notes.txt").read_text() == "mine"


def test_a_tree_of_many_empty_directories_is_not_walked_to_its_end(tmp_path, monkeypatch):
    """Telling leftovers apart stops after a few directories, files or not (a hostile tree of empty directories
    is not walked whole); such a tree is no unfinished conversion."""
    import os as os_module

    from hdmf_zarr3.storage.virtual import repo

    dst = tmp_path / "s.icechunk"
    (dst / "transactions").mkdir(parents=True)
    (dst / "transactions" / repo.FIRST_SNAPSHOT).write_bytes(b"")
    for n in range(50):
        (dst / f"d{n}").mkdir()
    walked = []
    real_walk = os_module.walk

    def counting_walk(*args, **kwargs):
        for step in real_walk(*args, **kwargs):
            walked.append(step[0])
            yield step

    monkeypatch.setattr(repo.os, "walk", counting_walk)
    assert not repo.unfinished(dst)
    assert len(walked) <= 6, walked
