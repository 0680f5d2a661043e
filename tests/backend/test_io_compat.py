"""hdmf-zarr 0.14's ZarrIO / NWBZarrIO API on ours: code written for hdmf-zarr runs unchanged."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest
from hdmf.backends.errors import UnsupportedOperation
from nwb_factories import small_nwbfile
from pynwb import NWBHDF5IO
from writing import write_nwb

from hdmf_zarr3 import ClosedFileError, NotZarrError, NWBZarrIO, read_nwb


def _root(path):
    with open(os.path.join(path, "zarr.json")) as f:
        return json.load(f)


# --- force_overwrite ------------------------------------------------------------------------------
def test_force_overwrite_replaces_an_hdf5_file_that_mode_w_refuses(tmp_path):
    path = tmp_path / "f.nwb.zarr"
    with NWBHDF5IO(path, mode="w") as io:
        io.write(small_nwbfile())
    with pytest.raises(NotZarrError, match="HDF5"):
        NWBZarrIO(path, mode="w")
    write_nwb(path, force_overwrite=True)
    with NWBZarrIO(path, mode="r") as io:
        assert np.array_equal(io.read().acquisition["ts"].data[:], np.arange(1000.0))


def test_force_overwrite_replaces_a_directory_of_other_files(tmp_path):
    path = tmp_path / "f.nwb.zarr"
    path.mkdir()
    (path / "notes.txt").write_text("not zarr")
    with pytest.raises(NotZarrError, match="other files"):
        NWBZarrIO(path, mode="w")
    write_nwb(path, force_overwrite=True)
    assert not (path / "notes.txt").exists()
    assert read_nwb(path).identifier == "TEST123"


def test_force_overwrite_means_nothing_outside_mode_w(tmp_path):
    path = tmp_path / "f.nwb.zarr"
    path.mkdir()
    (path / "notes.txt").write_text("not zarr")
    with pytest.raises(NotZarrError):
        NWBZarrIO(path, mode="a", force_overwrite=True)
    assert (path / "notes.txt").read_text() == "not zarr"


# --- mode r- --------------------------------------------------------------------------------------
def test_mode_r_minus_reads_the_store_not_the_consolidated_metadata(tmp_path):
    path = tmp_path / "f.nwb.zarr"
    write_nwb(path)
    node = path / "acquisition" / "ts" / "zarr.json"
    doc = json.loads(node.read_text())
    doc["attributes"]["comments"] = "changed on disk only"  # the consolidated copy in the root still says the old
    node.write_text(json.dumps(doc))
    with NWBZarrIO(path, mode="r") as io:
        assert io.read().acquisition["ts"].comments == "no comments"
    with NWBZarrIO(path, mode="r-") as io:
        assert io.mode == "r-"
        nwb = io.read()
        assert nwb.acquisition["ts"].comments == "changed on disk only"
        with pytest.raises(UnsupportedOperation, match="mode 'r-'"):
            io.write(nwb)


# --- consolidate_metadata and the parallel keywords ----------------------------------------------
def test_export_with_and_without_consolidated_metadata(tmp_path):
    with NWBHDF5IO(tmp_path / "a.nwb", mode="w") as io:
        io.write(small_nwbfile())
    for flag in (True, False):
        dst = tmp_path / f"{flag}.nwb.zarr"
        with NWBHDF5IO(tmp_path / "a.nwb", mode="r") as src, NWBZarrIO(dst, mode="w") as io:
            io.export(src_io=src, write_args={"link_data": False}, consolidate_metadata=flag)
        assert ("consolidated_metadata" in _root(dst)) is flag
        assert np.array_equal(read_nwb(dst).acquisition["ts"].data[:], np.arange(1000.0))


def test_write_without_consolidated_metadata(tmp_path):
    path = tmp_path / "f.nwb.zarr"
    write_nwb(path)
    assert "consolidated_metadata" in _root(path)
    with NWBZarrIO(path, mode="w") as io:
        io.write(small_nwbfile(), consolidate_metadata=False)
    assert "consolidated_metadata" not in _root(path)
    assert "completion" not in json.dumps(_root(path))  # complete, just not consolidated
    assert np.array_equal(read_nwb(path).acquisition["ts"].data[:], np.arange(1000.0))


def test_parallel_keywords_are_accepted_and_checked(tmp_path):
    """Files without GenericDataChunkIterators are written as always (test_parallel_write.py has the rest)."""
    path = tmp_path / "f.nwb.zarr"
    write_nwb(path)
    with NWBZarrIO(path, mode="w") as io:
        io.write(small_nwbfile(), number_of_jobs=4, max_threads_per_process=2, multiprocessing_context="spawn")
    with NWBZarrIO(path, mode="w") as io, pytest.raises(ValueError, match="number_of_jobs must be a positive int"):
        io.write(small_nwbfile(), number_of_jobs=0)
    with NWBHDF5IO(tmp_path / "a.nwb", mode="w") as io:
        io.write(small_nwbfile())
    with NWBHDF5IO(tmp_path / "a.nwb", mode="r") as src, NWBZarrIO(tmp_path / "b.nwb.zarr", mode="w") as io:
        io.export(src_io=src, write_args={"link_data": False}, number_of_jobs=2, multiprocessing_context="spawn")
    assert read_nwb(tmp_path / "b.nwb.zarr").identifier == "TEST123"
    with (
        NWBHDF5IO(tmp_path / "a.nwb", mode="r") as src,
        NWBZarrIO(tmp_path / "c.nwb.zarr", mode="w") as io,
        pytest.raises(ValueError, match="multiprocessing_context must be None or one of"),
    ):
        io.export(src_io=src, write_args={"link_data": False}, multiprocessing_context="threads")
    assert read_nwb(path).identifier == "TEST123"  # the refused write changed nothing


# --- get_written, get_builder_exists_on_disk, get_builder_disk_path -------------------------------
def test_written_on_disk_and_disk_path(tmp_path):
    path = tmp_path / "f.nwb.zarr"
    nwb = small_nwbfile()
    with NWBZarrIO(path, mode="w") as io:
        io.write(nwb)
        builder = io.manager.get_builder(nwb.acquisition["ts"])
        assert io.get_written(builder) and io.get_written(builder, check_on_disk=True)
        assert io.get_builder_exists_on_disk(builder)
        assert io.get_builder_disk_path(builder) == os.path.join(str(path), "acquisition", "ts")
        assert io.get_builder_disk_path(builder, filepath="/elsewhere/x.zarr") == "/elsewhere/x.zarr/acquisition/ts"
        shutil.rmtree(path / "acquisition" / "ts")
        assert io.get_written(builder) and not io.get_written(builder, check_on_disk=True)
        assert not io.get_builder_exists_on_disk(builder)


# --- path, abspath, is_remote ---------------------------------------------------------------------
def test_path_abspath_and_is_remote(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with NWBZarrIO("f.nwb.zarr", mode="w") as io:
        assert io.path == "f.nwb.zarr"
        assert io.abspath == str(tmp_path / "f.nwb.zarr")
        assert io.is_remote() is False
        io.write(small_nwbfile())
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="r") as io:
        assert io.path == str(tmp_path / "f.nwb.zarr")


# --- closed files ---------------------------------------------------------------------------------
def test_a_dataset_of_a_closed_file_is_a_clear_error(tmp_path):
    path = tmp_path / "f.nwb.zarr"
    write_nwb(path)
    with NWBZarrIO(path, mode="r") as io:
        data = io.read().acquisition["ts"].data
    with pytest.raises(ClosedFileError, match="was closed") as caught:
        data[:10]
    assert caught.value.path == "/acquisition/ts/data"


@pytest.mark.parametrize("route", ["write", "export"])
def test_a_dataset_of_a_closed_file_can_be_linked_to(tmp_path, route):
    """A link needs only the target's file and path, which a closed file's dataset still knows: writing
    (or exporting) a container that uses it links to it, without reading it."""
    from pynwb import TimeSeries

    write_nwb(tmp_path / "a.nwb.zarr")
    with NWBZarrIO(tmp_path / "a.nwb.zarr", mode="r") as io_a:
        data = io_a.read().acquisition["ts"].data
    nwb = small_nwbfile()
    if route == "write":
        nwb.add_acquisition(TimeSeries(name="linked", data=data, unit="m", rate=30.0))
        with NWBZarrIO(tmp_path / "b.nwb.zarr", mode="w") as io:
            io.write(nwb)
    else:
        with NWBZarrIO(tmp_path / "plain.nwb.zarr", mode="w") as io:
            io.write(nwb)
        with NWBZarrIO(tmp_path / "plain.nwb.zarr", mode="r") as src:
            read = src.read()
            read.add_acquisition(TimeSeries(name="linked", data=data, unit="m", rate=30.0))
            with NWBZarrIO(tmp_path / "b.nwb.zarr", mode="w") as dst:
                dst.export(src_io=src, container=read)
    with pytest.raises(ClosedFileError, match="was closed"):  # its values still cannot be read
        data[:10]
    doc = _root(tmp_path / "b.nwb.zarr")["consolidated_metadata"]["metadata"]["acquisition/linked"]
    assert doc["attributes"]["zarr_link"][0]["source"] == "a.nwb.zarr"  # a link beside it, not a copy
    assert not (tmp_path / "b.nwb.zarr" / "acquisition" / "linked" / "data").exists()
    with NWBZarrIO(tmp_path / "b.nwb.zarr", mode="r") as io:
        linked = io.read().acquisition["linked"].data
        assert np.array_equal(linked[:], np.arange(1000.0))
        assert os.path.samefile(linked.store.root, tmp_path / "a.nwb.zarr")


def test_a_dataset_of_a_closed_file_is_not_copied(tmp_path):
    """link_data=False asks for the values, which a closed file does not give (HDMF's build may probe
    them; the writer may not read them)."""
    from pynwb import TimeSeries

    write_nwb(tmp_path / "a.nwb.zarr")
    with NWBZarrIO(tmp_path / "a.nwb.zarr", mode="r") as io_a:
        data = io_a.read().acquisition["ts"].data
    nwb = small_nwbfile()
    nwb.add_acquisition(TimeSeries(name="copied", data=data, unit="m", rate=30.0))
    with pytest.raises(ClosedFileError, match="was closed"):
        with NWBZarrIO(tmp_path / "b.nwb.zarr", mode="w") as io:
            io.write(nwb, link_data=False)


# --- S3: read_nwb is anonymous by default ---------------------------------------------------------
def test_a_file_on_s3_is_remote(s3):
    from s3_server import new_bucket

    url = f"s3://{new_bucket(s3)}/f.nwb.zarr"
    write_nwb(url, storage_options=s3["options"])
    with NWBZarrIO(url, mode="r", storage_options=s3["options"]) as io:
        assert io.is_remote() and io.abspath == url and io.path == url


def test_read_nwb_on_s3_is_anonymous(s3, monkeypatch):
    import obstore.store
    from s3_server import new_bucket

    bucket = new_bucket(s3)
    url = f"s3://{bucket}/f.nwb.zarr"
    write_nwb(url, storage_options=s3["options"])
    s3["client"]().put_bucket_policy(
        Bucket=bucket,
        Policy=json.dumps(
            {
                "Statement": [  # a public data set
                    {
                        "Effect": "Allow",
                        "Principal": "*",
                        "Action": ["s3:GetObject", "s3:ListBucket"],
                        "Resource": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"],
                    }
                ]
            }
        ),
    )
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3["endpoint"])  # the local moto server, found as obstore finds it
    monkeypatch.setenv("AWS_ALLOW_HTTP", "true")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    real, seen = obstore.store.from_url, []

    def unsigned_only(target, **options):
        # checked before any store exists: a signed client would first look for credentials (the
        # instance metadata service, off this machine)
        assert options.get("skip_signature") is True, options
        seen.append(target)
        return real(target, **options)

    monkeypatch.setattr(obstore.store, "from_url", unsigned_only)
    nwb = NWBZarrIO.read_nwb(url)
    assert np.array_equal(nwb.acquisition["ts"].data[:], np.arange(1000.0))
    nwb.get_read_io().close()
    assert seen and all(t == url for t in seen)
