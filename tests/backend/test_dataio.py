"""ZarrDataIO: chunks, shards, codecs, fill value and dimension names, validated and honoured."""

from __future__ import annotations

import json

import numpy as np
import pytest
import zarr
from nwb_factories import small_nwbfile
from writing import nwbfile_with, write_nwb
from zarr.codecs import BloscCodec, ZstdCodec

from hdmf_zarr3 import NWBZarrIO, UnsupportedDataError, ZarrDataIO


def _written_array(tmp_path, data, name="x"):
    """The stored array of ``data``, written as TimeSeries ``name`` of the small file."""
    path = write_nwb(tmp_path / "f.nwb.zarr", nwbfile_with(data, name))
    return zarr.open_array(path / "acquisition" / name / "data", mode="r")


def test_chunks_shards_and_compressors_are_honoured(tmp_path):
    values = np.arange(1000 * 8, dtype="int16").reshape(1000, 8)
    arr = _written_array(
        tmp_path,
        ZarrDataIO(
            values,
            chunks=(100, 8),
            shards=(400, 8),
            compressors=[ZstdCodec(level=5)],
            fill_value=-1,
            dimension_names=["time", "channel"],
        ),
    )
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
    arr = _written_array(tmp_path, ZarrDataIO(np.arange(100, dtype="float64"), compressors=[BloscCodec(cname="lz4")]))
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
    # completed as zarr-python records it (the blosc spec requires every option)
    assert doc["codecs"][1] == {
        "name": "blosc",
        "configuration": {**blosc["configuration"], "typesize": 1, "blocksize": 0},
    }
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="r") as io:
        assert list(io.read().trials["label"][:]) == list(labels)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(chunks=(10,), shards=(15,)), "whole multiples"),
        (dict(chunks=(0,)), "positive integers"),
        (dict(compressors=[{"name": "no-such-codec"}]), "not registered"),
        (dict(compressors=[{"name": "bytes"}]), "not a BytesBytesCodec"),
        (dict(serializer={"name": "zstd"}), "not a ArrayBytesCodec"),
    ],
)
def test_invalid_settings_are_refused_at_construction(kwargs, message):
    with pytest.raises(UnsupportedDataError, match=message):
        ZarrDataIO(np.arange(10), **kwargs)


def test_chunks_that_do_not_fit_the_data_name_the_dataset(tmp_path):
    with pytest.raises(UnsupportedDataError, match="chunks .* do not fit a 1-d dataset"):
        ZarrDataIO(np.arange(10.0), chunks=(2, 2))  # an array: refused at once
    with pytest.raises(UnsupportedDataError, match="/acquisition/x/data: chunks"):
        # a list: its type is the spec's, known on write
        _written_array(tmp_path, ZarrDataIO([0.0] * 10, chunks=(2, 2)))
    assert not (tmp_path / "f.nwb.zarr").exists()


def test_settings_on_reference_datasets_are_kept(tmp_path):
    from hdmf.common import DynamicTable, VectorData

    nwb = small_nwbfile()
    refs = VectorData(
        name="refs", description="object references", data=ZarrDataIO([nwb.acquisition["ts"]] * 6, chunks=(2,))
    )
    nwb.add_scratch(DynamicTable(name="table", description="d", columns=[refs], id=list(range(6))))
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="w") as io:
        io.write(nwb)
    arr = zarr.open_array(tmp_path / "f.nwb.zarr" / "scratch" / "table" / "refs", mode="r")
    assert arr.attrs["zarr_dtype"] == "object" and arr.chunks == (2,)


STRINGS = np.array(["a", "b", "c"], dtype=object)
MISTAKES = {  # settings zarr could not read back (or would read as something else), with what the error says
    "fill-overflows-int8": (np.arange(3, dtype="int8"), dict(fill_value=300), "fill_value 300 does not fit the int8"),
    "fill-negative-uint": (np.arange(3, dtype="uint16"), dict(fill_value=-1), "fill_value -1 does not fit the uint16"),
    "fill-fraction-int": (np.arange(3, dtype="int16"), dict(fill_value=1.5), "fill_value 1.5 does not fit the int16"),
    "fill-text-float": (np.arange(3.0), dict(fill_value="x"), "fill_value 'x' does not fit the float64"),
    "fill-overflows-float16": (np.arange(3, dtype="float16"), dict(fill_value=1e10), "out of range"),
    "fill-int-bool": (np.ones(3, dtype=bool), dict(fill_value=2), "True or False is needed"),
    "fill-number-string": (STRINGS, dict(fill_value=3), "a string is needed"),
    "fill-list": (np.arange(3.0), dict(fill_value=[1]), "fill_value must be a number"),
    "chunks-rank": (np.arange(3.0), dict(chunks=(1, 1)), r"chunks \(1, 1\) do not fit a 1-d dataset"),
    "shards-rank": (np.arange(4.0).reshape(2, 2), dict(chunks=(1,), shards=(2,)), "do not fit a 2-d dataset"),
    "chunks-numpy-float": (np.arange(3.0), dict(chunks=np.array([1.5])), "positive integers"),
    "dimension-names-rank": (np.arange(3.0), dict(dimension_names=["a", "b"]), "2 dimension names for 1"),
    "dimension-names-string": (np.arange(3.0), dict(dimension_names="time"), "must be a list of strings"),
    "dimension-names-numbers": (np.arange(3.0), dict(dimension_names=[1]), "must be a list of strings"),
    "codec-unknown-option": (
        np.arange(3.0),
        dict(compressors=[{"name": "zstd", "configuration": {"bogus": 1}}]),
        "compressors: codec 'zstd': .*bogus",
    ),
    "codec-bad-option": (
        np.arange(3.0),
        dict(compressors=[{"name": "gzip", "configuration": {"level": 20}}]),
        "compressors: codec 'gzip': .*0, 9",
    ),
    "codec-bad-cname": (
        np.arange(3.0),
        dict(compressors=[{"name": "blosc", "configuration": {"cname": "nope"}}]),
        "cname must be one of",
    ),
    "codec-name-only": (np.arange(3.0), dict(compressors="zstd"), "got the string 'zstd'"),
    "codec-configuration-list": (
        np.arange(3.0),
        dict(compressors=[{"name": "zstd", "configuration": [1]}]),
        "configuration of codec 'zstd' must be a dict",
    ),
    "filter-rank": (
        np.arange(3.0),
        dict(filters=[{"name": "transpose", "configuration": {"order": [1, 0]}}]),
        "zarr cannot store this array with these settings: The `order` tuple",
    ),
    "serializer-for-strings": (
        STRINGS,
        dict(serializer={"name": "bytes", "configuration": {}}),
        "For string dtype, ArrayBytesCodec must be `VLenUTF8Codec`",
    ),
    "link-data-text": (np.arange(3.0), dict(link_data="yes"), "link_data must be True or False"),
}


@pytest.mark.parametrize("data,kwargs,message", MISTAKES.values(), ids=MISTAKES.keys())
def test_settings_the_data_cannot_have_are_refused_at_construction(data, kwargs, message):
    with pytest.raises(UnsupportedDataError, match=message):
        ZarrDataIO(data, **kwargs)


def _tree(path):
    return {p.relative_to(path): p.read_bytes() if p.is_file() else None for p in sorted(path.rglob("*"))}


ON_WRITE = {  # data whose type only the spec decides (lists, iterators): checked when the file is written
    "fill-text-float": ([0.0, 1.0, 2.0], dict(fill_value="x"), "fill_value 'x' does not fit the float64"),
    "fill-fraction-int": ([0, 1, 2], dict(fill_value=1.5), "fill_value 1.5 does not fit the int64"),
    "fill-int-bool": ([True, False, True], dict(fill_value=2), "True or False is needed"),
    "fill-number-string": (["a", "b", "c"], dict(fill_value=3), "a string is needed"),
    "filter-rank": (
        [0.0, 1.0, 2.0],
        dict(filters=[{"name": "transpose", "configuration": {"order": [1, 0]}}]),
        "The `order` tuple",
    ),
    "serializer-for-strings": (
        ["a", "b", "c"],
        dict(serializer={"name": "bytes", "configuration": {}}),
        "ArrayBytesCodec must be `VLenUTF8Codec`",
    ),
}


@pytest.mark.parametrize("wrap", ["list", "iterator"])
@pytest.mark.parametrize("values,kwargs,message", ON_WRITE.values(), ids=ON_WRITE.keys())
def test_settings_checked_on_write_are_refused_before_anything_is_written(tmp_path, values, kwargs, message, wrap):
    """A new file is not created; an append leaves the file as it was (streams included, which are written
    after every other node)."""
    from hdmf.data_utils import DataChunkIterator
    from pynwb.core import ScratchData

    def add(nwb):
        data = ZarrDataIO(values if wrap == "list" else DataChunkIterator(values, buffer_size=2), **kwargs)
        nwb.add_scratch(ScratchData(name="x", description="values", data=data))
        return nwb

    with pytest.raises(UnsupportedDataError, match=f"/scratch/x: .*{message}"):
        with NWBZarrIO(tmp_path / "new.nwb.zarr", mode="w") as io:
            io.write(add(small_nwbfile()))
    assert not (tmp_path / "new.nwb.zarr").exists()
    with NWBZarrIO(tmp_path / "old.nwb.zarr", mode="w") as io:
        io.write(small_nwbfile())
    before = _tree(tmp_path / "old.nwb.zarr")
    with pytest.raises(UnsupportedDataError, match=message), NWBZarrIO(tmp_path / "old.nwb.zarr", mode="a") as io:
        io.write(add(io.read()))
    assert _tree(tmp_path / "old.nwb.zarr") == before


def test_settings_are_stored_complete_and_a_nan_fill_as_json(tmp_path):
    """A partial blosc configuration (the direct encoder needed every option) and a NaN fill value
    (bare NaN is not JSON) are stored as zarr-python records them."""
    arr = _written_array(
        tmp_path,
        ZarrDataIO(
            np.arange(10.0), compressors={"name": "blosc", "configuration": {"cname": "zstd"}}, fill_value=float("nan")
        ),
    )
    doc = json.loads((tmp_path / "f.nwb.zarr" / "acquisition" / "x" / "data" / "zarr.json").read_text())
    assert doc["fill_value"] == "NaN"
    assert doc["codecs"][1] == {
        "name": "blosc",
        "configuration": {"cname": "zstd", "clevel": 5, "shuffle": "shuffle", "typesize": 8, "blocksize": 0},
    }
    assert np.isnan(arr.metadata.fill_value) and np.array_equal(arr[:], np.arange(10.0))


def test_a_setting_that_does_not_fit_is_a_value_error_too():
    """Code written for hdmf-zarr (and h5py) catches ValueError for bad settings and values."""
    import numpy as np

    from hdmf_zarr3 import UnsupportedDataError

    with pytest.raises(ValueError, match="whole multiples") as caught:
        ZarrDataIO(np.zeros((100, 10)), chunks=(10, 3), shards=(50, 10))
    assert isinstance(caught.value, (UnsupportedDataError, TypeError))
