"""ZarrDataIO takes what hdmf-zarr's ZarrDataIO takes (compressors forms, fillvalue, h5py helpers, links)."""

from __future__ import annotations

import json
import shutil

import h5py
import numcodecs
import numpy as np
import pytest
import zarr
from nwb_factories import small_nwbfile
from writing import nwbfile_with, write_nwb
from zarr.codecs import GzipCodec, ZstdCodec

from hdmf_zarr3 import NWBZarrIO, UnsupportedDataError, ZarrDataIO
from hdmf_zarr3.backend.settings.layout_choice import from_zarr_settings
from hdmf_zarr3.errors import LayoutWarning
from hdmf_zarr3.format.vocabulary import dtypes as D


def _codecs(path, name="x"):
    doc = json.loads((path / "acquisition" / name / "data" / "zarr.json").read_text())
    return doc["codecs"], doc


def _read(path, name="x"):
    with NWBZarrIO(path, mode="r") as io:
        return np.asarray(io.read().acquisition[name].data[:])


VALUES = np.arange(200, dtype="int32")


@pytest.mark.parametrize(
    "compressors, names",
    [
        (ZstdCodec(level=7), ["bytes", "zstd"]),  # a single codec
        ([GzipCodec(level=2), ZstdCodec()], ["bytes", "gzip", "zstd"]),  # a list
        ((GzipCodec(level=2),), ["bytes", "gzip"]),  # a tuple
        (True, ["bytes", "blosc"]),  # the default compressor
        (None, ["bytes", "blosc"]),  # hdmf-zarr's default: the default too
        (False, ["bytes"]),  # none
        ([], ["bytes"]),
    ],
)
def test_compressors_forms(tmp_path, compressors, names):
    f = tmp_path / "f.nwb.zarr"
    write_nwb(f, nwbfile_with(ZarrDataIO(VALUES, compressors=compressors, shards=None)))
    codecs, _ = _codecs(f)
    assert [c["name"] for c in codecs] == names
    assert np.array_equal(_read(f), VALUES)


@pytest.mark.parametrize(
    "codec, stored",
    [
        (
            numcodecs.Blosc(cname="zstd", clevel=3, shuffle=numcodecs.Blosc.BITSHUFFLE),
            {
                "name": "blosc",
                "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle", "typesize": 4, "blocksize": 0},
            },
        ),
        (numcodecs.Zstd(level=4), {"name": "zstd", "configuration": {"level": 4, "checksum": False}}),
        (numcodecs.GZip(level=6), {"name": "gzip", "configuration": {"level": 6}}),
        (numcodecs.Zlib(level=2), {"name": "numcodecs.zlib", "configuration": {"level": 2}}),  # no core v3 codec
    ],
)
def test_numcodecs_compressors_map_to_v3_codecs(tmp_path, codec, stored):
    f = tmp_path / "f.nwb.zarr"
    write_nwb(f, nwbfile_with(ZarrDataIO(VALUES, compressors=codec, shards=None)))
    codecs, _ = _codecs(f)
    assert codecs[1] == stored
    assert np.array_equal(_read(f), VALUES)


def test_numcodecs_filter_is_written_as_zarrs_wrapper(tmp_path):
    f = tmp_path / "f.nwb.zarr"
    write_nwb(
        f, nwbfile_with(ZarrDataIO(VALUES, filters=[numcodecs.Delta(dtype="<i4")], compressors=False, shards=None))
    )
    codecs, _ = _codecs(f)
    assert codecs[0]["name"] == "numcodecs.delta" and codecs[0]["configuration"]["dtype"] == "<i4"
    assert np.array_equal(_read(f), VALUES)


def test_numcodecs_pickle_is_refused():
    from hdmf_zarr3 import UnsafeCodecError

    with pytest.raises(UnsafeCodecError, match="never writes"):  # by name, not by zarr lacking the codec
        ZarrDataIO(np.array(["a"], dtype=object), compressors=numcodecs.Pickle())
    with pytest.raises(UnsafeCodecError, match="never writes"):
        ZarrDataIO(np.arange(3.0), filters=[numcodecs.Pickle()])


# --- io_settings as hdmf-zarr 0.14 spells them; the writer reads write_settings --------------------------
@pytest.mark.parametrize("kwargs", [{}, {"compressors": True}, {"compressors": None}])
def test_io_settings_list_no_defaults(kwargs):
    assert ZarrDataIO(VALUES, **kwargs).io_settings == {}


@pytest.mark.parametrize("off", [False, []])
def test_io_settings_spell_no_compressor_as_none_and_the_writer_writes_none(tmp_path, off):
    dataio = ZarrDataIO(VALUES, compressors=off, shards=None)
    assert dataio.io_settings == {"compressors": None, "shards": None}
    f = tmp_path / "f.nwb.zarr"
    write_nwb(f, nwbfile_with(dataio))
    assert [c["name"] for c in _codecs(f)[0]] == ["bytes"]


def test_io_settings_keep_codecs_and_shapes_as_given():
    from zarr.codecs import TransposeCodec

    filters, zstd = [TransposeCodec(order=(1, 0))], ZstdCodec(level=3)
    values = VALUES.reshape(20, 10)
    dataio = ZarrDataIO(values, compressors=zstd, filters=filters, chunks=(10, 5), shards="auto", fill_value=-1)
    assert dataio.io_settings == {
        "compressors": zstd,
        "filters": filters,
        "chunks": (10, 5),
        "shards": "auto",
        "fill_value": -1,
    }
    assert dataio.write_settings.compressors == [zstd.to_dict()]  # the writer's checked JSON forms
    assert dataio.write_settings.filters == [filters[0].to_dict()]


def test_io_settings_are_a_copy():
    dataio = ZarrDataIO(VALUES, compressors=False)
    dataio.io_settings["compressors"] = [ZstdCodec()]
    assert dataio.io_settings["compressors"] is None


@pytest.mark.parametrize(
    "kwargs",
    [{"compressors": False}, {"compressors": ZstdCodec()}, {"shards": None}, {"chunks": (5,), "shards": (10,)}, {}],
)
def test_get_io_params_recreate_the_same_settings(kwargs):
    """HDMF re-wraps data with ``cls(**get_io_params())``: the settings must mean the same afterwards
    (``compressors=None`` there would be the default compressor, not none)."""
    dataio = ZarrDataIO(VALUES, **kwargs)
    again = ZarrDataIO(data=VALUES, **dataio.get_io_params())
    assert again.write_settings == dataio.write_settings
    assert (again.io_settings.get("compressors", "absent") is None) == (kwargs.get("compressors") is False)


def test_no_compressor_survives_hdmfs_rewrap_of_a_text_dataset(tmp_path):
    """NWBFile.keywords is an untyped text dataset: HDMF converts its strings and re-wraps the
    ZarrDataIO with get_io_params() before the writer sees it."""
    nwb = small_nwbfile()
    nwb.keywords = ZarrDataIO(np.array(["a", "b"], dtype=object), compressors=False)
    f = tmp_path / "f.nwb.zarr"
    with NWBZarrIO(f, mode="w") as io:
        io.write(nwb)
    doc = json.loads((f / "general" / "keywords" / "zarr.json").read_text())
    assert [c["name"] for c in doc["codecs"]] == ["vlen-utf8"]
    with NWBZarrIO(f, mode="r") as io:
        assert list(io.read().keywords[:]) == ["a", "b"]


def test_a_shards_string_other_than_auto_is_a_value_error():
    with pytest.raises(ValueError, match="'shards' must be a shape or 'auto'") as info:
        ZarrDataIO(VALUES, shards="automatic")
    assert isinstance(info.value, UnsupportedDataError) and "'automatic'" in str(info.value)


def test_fillvalue_is_an_alias_of_fill_value(tmp_path):
    f = tmp_path / "f.nwb.zarr"
    write_nwb(f, nwbfile_with(ZarrDataIO(VALUES, fillvalue=-7)))
    assert _codecs(f)[1]["fill_value"] == -7
    assert ZarrDataIO(VALUES, fillvalue=3, fill_value=3).fill_value == 3
    assert ZarrDataIO(np.zeros(3), fillvalue=np.nan, fill_value=float("nan")).io_settings["fill_value"] != 0
    with pytest.raises(UnsupportedDataError, match="fill_value=1 and fillvalue=2 differ"):
        ZarrDataIO(VALUES, fill_value=1, fillvalue=2)


def test_retired_compressor_keyword_names_compressors():
    with pytest.raises(TypeError, match="compressors="):
        ZarrDataIO(VALUES, compressor=numcodecs.Blosc())


def test_unknown_keyword_is_a_type_error():
    with pytest.raises(TypeError, match="nonsense"):
        ZarrDataIO(VALUES, nonsense=1)


def test_shards_without_chunks_get_inner_chunks_that_tile_them(tmp_path):
    f = tmp_path / "f.nwb.zarr"
    values = np.arange(3000 * 4, dtype="float32").reshape(3000, 4)
    write_nwb(f, nwbfile_with(ZarrDataIO(values, shards=(1500, 4))))
    codecs, doc = _codecs(f)
    assert doc["chunk_grid"]["configuration"]["chunk_shape"] == [1500, 4]
    inner = codecs[0]["configuration"]["chunk_shape"]
    assert codecs[0]["name"] == "sharding_indexed" and 1500 % inner[0] == 0 and 4 % inner[1] == 0
    assert np.array_equal(_read(f), values)
    # a shard larger than the default chunk (4 MiB) is split into inner chunks that divide it
    storage = D.for_hdmf_dtype("float32", values)
    settings = ZarrDataIO(np.zeros(1), shards=(3 * 2**21,)).write_settings
    layout = from_zarr_settings("/x", storage, (10**8,), settings)
    assert layout.codecs[0]["configuration"]["chunk_shape"] == [2**20]


def test_shards_policy_by_default_auto_as_zarr_and_others_refused(tmp_path):
    small = np.arange(64, dtype="int32")
    for shards, expected in (("policy", None), ("auto", (4,)), (None, None), ((8,), (8,))):
        f = tmp_path / f"{shards}.nwb.zarr"
        write_nwb(f, nwbfile_with(ZarrDataIO(small, chunks=(2,), shards=shards)))
        assert zarr.open_array(f / "acquisition" / "x" / "data", mode="r").shards == expected
    assert ZarrDataIO(small).shards == "policy" and "shards" not in ZarrDataIO(small).get_io_params()  # the default
    with pytest.raises(ValueError, match="'shards' must be a shape or 'auto'"):
        ZarrDataIO(small, shards="automatic")


# --- h5py datasets --------------------------------------------------------------------------------------
@pytest.fixture
def h5(tmp_path):
    with h5py.File(tmp_path / "src.h5", "w") as f:
        f.create_dataset(
            "gz",
            data=np.arange(1000, dtype="float64"),
            chunks=(100,),
            compression="gzip",
            compression_opts=5,
            fillvalue=-1.0,
        )
        f.create_dataset("plain", data=np.arange(10, dtype="int16"))
        f.create_dataset("lzf", data=np.arange(10, dtype="int16"), compression="lzf")
        f.create_dataset("text", data=np.array(["a", "bc"], dtype=object), dtype=h5py.string_dtype())
    with h5py.File(tmp_path / "src.h5", "r") as f:
        yield f


def test_is_h5py_dataset(h5):
    assert ZarrDataIO.is_h5py_dataset(h5["gz"])
    assert not ZarrDataIO.is_h5py_dataset(h5)
    assert not ZarrDataIO.is_h5py_dataset(np.zeros(3))


def test_hdf5_to_zarr_filters(h5):
    codecs = ZarrDataIO.hdf5_to_zarr_filters(h5["gz"])
    assert [c.to_dict() for c in codecs] == [{"name": "gzip", "configuration": {"level": 5}}]
    assert ZarrDataIO.hdf5_to_zarr_filters(h5["plain"]) == []
    with pytest.warns(LayoutWarning, match="lzf"):
        assert ZarrDataIO.hdf5_to_zarr_filters(h5["lzf"]) == []


def test_from_h5py_dataset_keeps_chunks_fill_value_and_compression(tmp_path, h5):
    f = tmp_path / "f.nwb.zarr"
    write_nwb(f, nwbfile_with(ZarrDataIO.from_h5py_dataset(h5["gz"], shards=None)))
    codecs, doc = _codecs(f)
    assert doc["chunk_grid"]["configuration"]["chunk_shape"] == [100]
    assert doc["fill_value"] == -1.0
    assert codecs == [
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "gzip", "configuration": {"level": 5}},
    ]
    assert np.array_equal(_read(f), h5["gz"][:])


def test_from_h5py_dataset_keywords_override_the_hdf5_settings(tmp_path, h5):
    f = tmp_path / "f.nwb.zarr"
    write_nwb(
        f,
        nwbfile_with(
            ZarrDataIO.from_h5py_dataset(
                h5["gz"], chunks=(250,), fillvalue=0.0, compressors=ZstdCodec(level=1), shards=None
            )
        ),
    )
    codecs, doc = _codecs(f)
    assert doc["chunk_grid"]["configuration"]["chunk_shape"] == [250] and doc["fill_value"] == 0.0
    assert [c["name"] for c in codecs] == ["bytes", "zstd"]


def test_from_h5py_dataset_of_strings(tmp_path, h5):
    f = tmp_path / "f.nwb.zarr"
    nwb = small_nwbfile()
    nwb.add_trial_column("label", "what", data=ZarrDataIO.from_h5py_dataset(h5["text"]))
    with NWBZarrIO(f, mode="w") as io:
        io.write(nwb)
    with NWBZarrIO(f, mode="r") as io:
        assert list(io.read().trials["label"][:]) == ["a", "bc"]


def test_from_h5py_dataset_refuses_other_data():
    with pytest.raises(UnsupportedDataError, match="h5py.Dataset"):
        ZarrDataIO.from_h5py_dataset(np.zeros(3))


# --- link_data with a zarr.Array -------------------------------------------------------------------------
def test_link_data_links_to_an_array_in_another_file(tmp_path):
    base, other = tmp_path / "base.nwb.zarr", tmp_path / "other.nwb.zarr"
    write_nwb(base, nwbfile_with(VALUES))
    source = zarr.open_group(base, mode="r")["acquisition/x/data"]
    write_nwb(other, nwbfile_with(ZarrDataIO(source, link_data=True), "y"))
    assert not (other / "acquisition" / "y" / "data").exists()  # linked, not copied
    attrs = json.loads((other / "acquisition" / "y" / "zarr.json").read_text())["attributes"]
    root_oid = json.loads((base / "zarr.json").read_text())["attributes"]["object_id"]
    assert attrs["zarr_link"] == [
        {
            "name": "data",
            "source": "base.nwb.zarr",
            "path": "/acquisition/x/data",
            "object_id": None,
            "source_object_id": root_oid,
        }
    ]
    assert np.array_equal(_read(other, "y"), VALUES)


def test_link_data_links_to_an_array_in_a_zip(tmp_path):
    base, other = tmp_path / "base.nwb.zarr", tmp_path / "other.nwb.zarr"
    write_nwb(base, nwbfile_with(VALUES))
    shutil.make_archive(str(tmp_path / "base.nwb"), "zip", base)
    store = zarr.storage.ZipStore(tmp_path / "base.nwb.zip", mode="r")
    write_nwb(
        other, nwbfile_with(ZarrDataIO(zarr.open_group(store, mode="r")["acquisition/x/data"], link_data=True), "y")
    )
    store.close()
    link = json.loads((other / "acquisition" / "y" / "zarr.json").read_text())["attributes"]["zarr_link"][0]
    assert (link["source"], link["path"]) == ("base.nwb.zip", "/acquisition/x/data")
    assert np.array_equal(_read(other, "y"), VALUES)


def test_link_data_false_copies_the_array(tmp_path):
    base, other = tmp_path / "base.nwb.zarr", tmp_path / "other.nwb.zarr"
    write_nwb(base, nwbfile_with(VALUES))
    source = zarr.open_group(base, mode="r")["acquisition/x/data"]
    write_nwb(other, nwbfile_with(ZarrDataIO(source), "y"))
    assert (other / "acquisition" / "y" / "data" / "zarr.json").exists()
    assert np.array_equal(_read(other, "y"), VALUES)


def test_link_data_to_an_in_memory_array_is_refused():
    array = zarr.create_array(zarr.storage.MemoryStore(), name="a", shape=(3,), dtype="int32")
    with pytest.raises(UnsupportedDataError, match="MemoryStore.*link_data=False"):
        ZarrDataIO(array, link_data=True)
    assert ZarrDataIO(array).link_data is False  # copying it is fine


def test_link_data_to_the_root_array_of_a_store_is_refused(tmp_path):
    array = zarr.create_array(tmp_path / "a.zarr", shape=(3,), dtype="int32")
    with pytest.raises(UnsupportedDataError, match="root of"):
        ZarrDataIO(array, link_data=True)
