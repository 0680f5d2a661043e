"""convert(..., virtual=True) from an HDF5 file on S3 (moto's server on 127.0.0.1): the repository's
virtual chunks are ranged reads of the object, refused once it changed, and only read from the
s3:// prefixes the reader allows (issue #20, points 3 and 4)."""

from __future__ import annotations

import numpy as np
import pytest
from s3_server import new_bucket
from virtual_files import EPHYS, IMAGING, hdf5_source

from hdmf_zarr3 import NWBZarrIO, SourceChangedError, convert

pytest.importorskip("icechunk")


@pytest.fixture
def on_s3(s3, tmp_path):
    local = hdf5_source(tmp_path / "s.nwb")
    bucket = new_bucket(s3)
    s3["client"]().upload_file(str(local), bucket, "sessions/s.nwb")
    url = f"s3://{bucket}/sessions/s.nwb"
    dst = tmp_path / "s.icechunk"
    report = convert(url, dst, virtual=True, src_storage_options=s3["options"])
    return s3, bucket, url, dst, report


def test_an_hdf5_file_on_s3_becomes_a_repository_reading_its_chunks_in_place(on_s3):
    s3, bucket, url, dst, report = on_s3
    assert report["/acquisition/ephys/data"].startswith("virtual")
    assert report["/acquisition/imaging/data"].startswith("virtual")
    roots = [f"s3://{bucket}/sessions/"]
    with NWBZarrIO(dst, "r", storage_options=s3["options"], external_roots=roots) as io:
        nwb = io.read()
        np.testing.assert_array_equal(nwb.acquisition["ephys"].data[:], EPHYS)
        np.testing.assert_array_equal(nwb.acquisition["ephys"].data[1000:4000, 5], EPHYS[1000:4000, 5])
        np.testing.assert_array_equal(nwb.acquisition["imaging"].data[:], IMAGING)
        assert nwb.trials.to_dataframe().shape == (1, 2)


def test_s3_chunks_are_read_only_under_the_prefixes_the_reader_allows(on_s3):
    s3, bucket, url, dst, _ = on_s3
    with NWBZarrIO(dst, "r", storage_options=s3["options"]) as io:  # no s3:// root allowed
        with pytest.raises(SourceChangedError, match="not allowed"):
            io.read().acquisition["ephys"].data[:10]
    with NWBZarrIO(dst, "r", storage_options=s3["options"], external_roots=[f"s3://{bucket}/other/"]) as io:
        with pytest.raises(SourceChangedError, match="not allowed"):
            io.read().acquisition["ephys"].data[:10]


def test_a_changed_object_is_refused_at_open(on_s3, tmp_path):
    s3, bucket, url, dst, _ = on_s3
    s3["client"]().put_object(Bucket=bucket, Key="sessions/s.nwb", Body=b"not the same file")
    with pytest.raises(SourceChangedError, match="changed since the repository was made") as err:
        NWBZarrIO(dst, "r", storage_options=s3["options"], external_roots=[f"s3://{bucket}/"])
    assert "ETag" in str(err.value)


def test_a_public_object_is_virtualized_and_read_anonymously(s3, tmp_path):
    """A public dataset's bucket (DANDI's is one): no credentials, unsigned requests, {"anon": True}."""
    from s3_server import make_public

    local = hdf5_source(tmp_path / "s.nwb")
    bucket = new_bucket(s3)
    s3["client"]().upload_file(str(local), bucket, "public/s.nwb")
    make_public(s3, bucket)
    anonymous = {
        "endpoint": s3["endpoint"],
        "region": "us-east-1",
        "anon": True,
        "client_options": {"allow_http": True},
    }
    dst = tmp_path / "s.icechunk"
    convert(f"s3://{bucket}/public/s.nwb", dst, virtual=True, src_storage_options=anonymous)
    with NWBZarrIO(dst, "r", storage_options=anonymous, external_roots=[f"s3://{bucket}/public/"]) as io:
        np.testing.assert_array_equal(io.read().acquisition["ephys"].data[:500], EPHYS[:500])


def test_opening_and_reading_the_repository_costs_one_request_to_the_source(on_s3, monkeypatch):
    """Open checks the object once (a HEAD); read() builds every container from the repository alone, so
    its requests to the source do not grow with the file: with the object gone right after the open,
    read() still succeeds, and only reading the bulk data reaches for it."""
    import obstore

    s3, bucket, url, dst, _ = on_s3
    heads = []
    real_head = obstore.head
    monkeypatch.setattr(obstore, "head", lambda *a, **k: heads.append(a[1]) or real_head(*a, **k))
    roots = [f"s3://{bucket}/"]
    with NWBZarrIO(dst, "r", storage_options=s3["options"], external_roots=roots) as io:
        assert heads == ["sessions/s.nwb"]
        s3["client"]().delete_object(Bucket=bucket, Key="sessions/s.nwb")
        nwb = io.read()
        assert nwb.acquisition["small"].data[:].tolist() == list(range(10))
        assert nwb.trials.to_dataframe().shape == (1, 2)
        with pytest.raises(SourceChangedError, match="gone"):  # the bulk data is the object's, which is gone
            nwb.acquisition["ephys"].data[:10]
