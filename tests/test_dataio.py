"""ZarrDataIO: chunks, shards, codecs, fill value and dimension names, validated and honoured."""

from __future__ import annotations

import json

import numpy as np
import pytest
import zarr
from nwb_factories import small_nwbfile
from pynwb import TimeSeries
from zarr.codecs import BloscCodec, ZstdCodec

from hdmf_zarr3 import NWBZarrIO, UnsupportedDataError, ZarrDataIO


def _write(tmp_path, data, name="x"):
    nwb = small_nwbfile()
    nwb.add_acquisition(TimeSeries(name=name, data=data, unit="V", rate=1.0))
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="w") as io:
        io.write(nwb)
    return zarr.open_array(tmp_path / "f.nwb.zarr" / "acquisition" / name / "data", mode="r")


def test_chunks_shards_and_compressors_are_honoured(tmp_path):
    values = np.arange(1000 * 8, dtype="int16").reshape(1000, 8)
    arr = _write(tmp_path, ZarrDataIO(values, chunks=(100, 8), shards=(400, 8), compressors=[ZstdCodec(level=5)],
                                      fill_value=-1, dimension_names=["time", "channel"]))
    meta = arr.metadata.to_dict()
    assert list(meta["chunk_grid"]["configuration"]["chunk_shape"]) == [400, 8]
    sharding = meta["codecs"][0]
    assert sharding["name"] == "sharding_indexed" and list(sharding["configuration"]["chunk_shape"]) == [100, 8]
    assert [c["name"] for c in sharding["configuration"]["codecs"]] == ["bytes", "zstd"]
    assert meta["fill_value"] == -1 and arr.metadata.dimension_names == ("time", "channel")
    assert np.array_equal(arr[:], values)  # plain zarr reads it
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="r") as io:
        data = io.read().acquisition["x"].data
        assert np.array_equal(data[150:250, 3], values[150:250, 3])
        html = io.generate_dataset_html(data)
        assert "Shard shape" in html and "(400, 8)" in html and "(100, 8)" in html


def test_blosc_typesize_follows_the_dtype(tmp_path):
    arr = _write(tmp_path, ZarrDataIO(np.arange(100, dtype="float64"), compressors=[BloscCodec(cname="lz4")]))
    blosc = arr.metadata.to_dict()["codecs"][1]
    assert blosc["name"] == "blosc" and blosc["configuration"]["typesize"] == 8


def test_blosc_on_strings_records_typesize_one(tmp_path):
    """The blosc spec requires ``typesize`` whenever it shuffles; readers such as TensorStore rely on it."""
    blosc = {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 5, "shuffle": "shuffle"}}
    nwb = small_nwbfile()
    labels = np.array(["lick", "reward", "lick"][: len(nwb.trials)], dtype=object)
    nwb.add_trial_column("label", "what happened", data=ZarrDataIO(labels, compressors=[blosc]))
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="w") as io:
        io.write(nwb)
    doc = json.loads((tmp_path / "f.nwb.zarr" / "intervals" / "trials" / "label" / "zarr.json").read_text())
    assert doc["codecs"][1] == {"name": "blosc", "configuration": {**blosc["configuration"], "typesize": 1}}
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="r") as io:
        assert list(io.read().trials["label"][:]) == list(labels)


@pytest.mark.parametrize("kwargs,message", [
    (dict(chunks=(10,), shards=(15,)), "whole multiples"),
    (dict(shards=(10,)), "whole multiples"),
    (dict(chunks=(0,)), "positive integers"),
    (dict(compressors=[{"name": "no-such-codec"}]), "not registered"),
    (dict(compressors=[{"name": "bytes"}]), "not a BytesBytesCodec"),
    (dict(serializer={"name": "zstd"}), "not a ArrayBytesCodec"),
])
def test_invalid_settings_are_refused_at_construction(kwargs, message):
    with pytest.raises(UnsupportedDataError, match=message):
        ZarrDataIO(np.arange(10), **kwargs)


def test_chunks_that_do_not_fit_the_data_name_the_dataset(tmp_path):
    with pytest.raises(UnsupportedDataError, match="/acquisition/x/data: chunks"):
        _write(tmp_path, ZarrDataIO(np.arange(10.0), chunks=(2, 2)))


def test_settings_on_reference_datasets_are_kept(tmp_path):
    from hdmf.common import DynamicTable, VectorData

    nwb = small_nwbfile()
    refs = VectorData(name="refs", description="object references", data=ZarrDataIO([nwb.acquisition["ts"]] * 6,
                                                                                  chunks=(2,)))
    nwb.add_scratch(DynamicTable(name="table", description="d", columns=[refs], id=list(range(6))))
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="w") as io:
        io.write(nwb)
    arr = zarr.open_array(tmp_path / "f.nwb.zarr" / "scratch" / "table" / "refs", mode="r")
    assert arr.attrs["zarr_dtype"] == "object" and arr.chunks == (2,)
