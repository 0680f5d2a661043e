"""Each fact once (issue 18, point 4): ArrayView reads an array document's facts in one place, and a
file's dialect is detected once per open."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from hdmf_zarr3.format.documents import zarr_json as docs
from hdmf_zarr3.format.layout import policy
from hdmf_zarr3.format.vocabulary import dtypes
from hdmf_zarr3.format.vocabulary.array_view import VARIABLE_ITEM_BYTES, ArrayView, split_sharding

BLOSC = {
    "name": "blosc",
    "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "bitshuffle", "typesize": 2, "blocksize": 0},
}
BYTES = {"name": "bytes", "configuration": {"endian": "little"}}


def _doc(shape, grid, data_type="int16", codecs=None, **extra):
    return {
        "zarr_format": 3,
        "node_type": "array",
        "shape": list(shape),
        "data_type": data_type,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(grid)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "."}},
        "fill_value": 0,
        "codecs": codecs if codecs is not None else [BYTES, BLOSC],
        "attributes": {},
        **extra,
    }


def test_plain_array():
    view = ArrayView.from_document(_doc((100, 8), (10, 8), dimension_names=["t", None]))
    assert view.zarr_format == 3 and view.shape == (100, 8) and view.data_type == "int16"
    assert view.chunk_grid == view.read_chunks == (10, 8)
    assert not view.sharded and view.shards is None and view.sharding == {}
    assert view.codecs == view.inner_codecs == (BYTES, BLOSC)
    assert view.serializer == BYTES and view.compressors == (BLOSC,) and view.filters == ()
    assert view.fixed_itemsize == view.itemsize == 2
    assert view.fill_value == 0 and view.dimension_names == ("t", None) and view.separator == "."


def test_sharded_array_reads_inner_chunks_with_inner_codecs():
    transpose = {"name": "transpose", "configuration": {"order": [1, 0]}}
    sharding = policy.sharding_codec((10, 8), [transpose, BYTES, BLOSC])
    view = ArrayView.from_document(_doc((1000, 8), (500, 8), codecs=[sharding]))
    assert view.sharded and view.shards == view.chunk_grid == (500, 8)
    assert view.read_chunks == (10, 8)
    assert view.codecs == (sharding,) and view.inner_codecs == (transpose, BYTES, BLOSC)
    assert view.filters == (transpose,) and view.serializer == BYTES and view.compressors == (BLOSC,)
    assert view.sharding["index_location"] == "end"


def test_variable_length_elements_share_one_estimate():
    view = ArrayView.from_document(_doc((5,), (5,), "string", [{"name": "vlen-utf8"}, {"name": "zstd"}]))
    assert view.fixed_itemsize is None and view.itemsize == VARIABLE_ITEM_BYTES
    assert view.serializer == {"name": "vlen-utf8"} and view.compressors == ({"name": "zstd"},)
    # the layout policy sizes chunks of strings with the same estimate
    assert policy.itemsize(dtypes.for_hdmf_dtype("text")) == VARIABLE_ITEM_BYTES == docs.VARIABLE_ITEM_BYTES


def test_struct_item_size_is_the_sum_of_its_fields_unless_one_varies():
    fixed = {
        "name": "struct",
        "configuration": {"fields": [{"name": "a", "data_type": "int32"}, {"name": "b", "data_type": "float64"}]},
    }
    assert ArrayView.from_document(_doc((3,), (3,), fixed)).itemsize == 12
    varying = {
        "name": "struct",
        "configuration": {"fields": [{"name": "a", "data_type": "int32"}, {"name": "b", "data_type": "string"}]},
    }
    assert ArrayView.from_document(_doc((3,), (3,), varying)).itemsize == VARIABLE_ITEM_BYTES


def test_written_documents_read_back_as_written():
    storage = dtypes.for_hdmf_dtype("float32")
    doc = docs.array_document(
        (2000, 4),
        storage,
        {},
        chunks=(1000, 4),
        codecs=[policy.sharding_codec((100, 4), docs.default_codecs(storage))],
        dimension_names=["time", "ch"],
    )
    view = ArrayView.from_document(doc)
    assert (view.chunk_grid, view.read_chunks, view.shards, view.itemsize) == ((1000, 4), (100, 4), (1000, 4), 4)
    assert view.separator == "/" and view.dimension_names == ("time", "ch")


def test_zarr_v2_document():
    view = ArrayView.from_document(
        {
            "zarr_format": 2,
            "shape": [10, 3],
            "chunks": [5, 3],
            "dtype": "<f8",
            "fill_value": None,
            "compressor": None,
            "filters": None,
            "order": "C",
        }
    )
    assert view.zarr_format == 2 and view.chunk_grid == view.read_chunks == (5, 3) and not view.sharded
    assert view.codecs == () and view.itemsize == 8 and view.separator is None
    obj = ArrayView.from_document({"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "|O"})
    assert obj.fixed_itemsize is None and obj.itemsize == VARIABLE_ITEM_BYTES


def test_the_view_is_immutable_and_does_not_copy_or_change_the_document():
    doc = _doc((4,), (4,))
    view = ArrayView.from_document(doc)
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.shape = (5,)  # type: ignore[misc]
    assert view.codecs[0] is doc["codecs"][0]  # read, not copied
    assert doc == _doc((4,), (4,))


def test_split_sharding_of_a_layout():
    sharding = policy.sharding_codec((2,), [BYTES])
    assert split_sharding((8,), (sharding,)) == ((2,), (BYTES,), (8,))
    assert split_sharding((8,), (BYTES,)) == ((8,), (BYTES,), None)


def test_datasets_use_the_view(tmp_path):
    from hdmf_zarr3.backend.datasets.lazy import ZarrDataset

    doc = _doc((1000, 8), (500, 8), codecs=[policy.sharding_codec((10, 8), [BYTES])])
    dataset = ZarrDataset.__new__(ZarrDataset)
    dataset._doc, dataset._facts_of = doc, None
    assert dataset.chunks == (10, 8) and dataset.shards == (500, 8)
    dataset._doc = _doc((1000, 8), (500, 8))  # an append replaces the document: the facts follow it
    assert dataset.chunks == (500, 8) and dataset.shards is None
    assert np.dtype("int16").itemsize == dataset.array_view.itemsize


def test_an_nwb_file_detects_its_dialect_once_per_open(tmp_path, monkeypatch):
    from nwb_factories import small_nwbfile

    from hdmf_zarr3 import NWBZarrIO
    from hdmf_zarr3.format import dialects

    with NWBZarrIO(tmp_path / "f.zarr", mode="w") as io:
        io.write(small_nwbfile())
    calls = []
    detect = dialects.detect
    monkeypatch.setattr(dialects, "detect", lambda *args, **kw: calls.append(args) or detect(*args, **kw))
    with NWBZarrIO(tmp_path / "f.zarr", mode="r") as io:  # namespaces loaded from the file, then opened
        assert io.read().acquisition["ts"].data[3] == 3.0
        assert io.dialect == "hdmf_zarr3"
    assert len(calls) == 1
    calls.clear()
    with NWBZarrIO(tmp_path / "f.zarr", mode="a") as io:  # the same with the write lock held
        io.read()
    assert len(calls) == 1


@pytest.mark.parametrize(
    ("doc", "key"),
    [
        ({"zarr_format": 2, "shape": []}, "0"),
        ({"zarr_format": 2, "shape": [4]}, "0"),
        ({"zarr_format": 2, "shape": [4, 5]}, "0.0"),
        ({"zarr_format": 2, "shape": [4, 5], "dimension_separator": "/"}, "0/0"),
        ({"zarr_format": 3, "shape": []}, "c"),
        ({"zarr_format": 3, "shape": [4, 5], "chunk_key_encoding": docs.chunk_key_encoding("/")}, "c/0/0"),
        ({"zarr_format": 3, "shape": [4, 5], "chunk_key_encoding": docs.chunk_key_encoding(".")}, "c.0.0"),
        ({"zarr_format": 3, "shape": [], "chunk_key_encoding": {"name": "v2"}}, "0"),
        ({"zarr_format": 3, "shape": [4, 5], "chunk_key_encoding": {"name": "v2"}}, "0.0"),
        (
            {"zarr_format": 3, "shape": [4], "chunk_key_encoding": {"name": "v2", "configuration": {"separator": "/"}}},
            "0",
        ),
        ({"zarr_format": 3, "shape": [4], "chunk_key_encoding": {"name": "other"}}, None),
        (
            {"zarr_format": 3, "shape": [4], "chunk_key_encoding": {"name": "v2", "configuration": {"separator": "-"}}},
            None,
        ),
    ],
)
def test_the_key_of_the_first_chunk_follows_the_chunk_key_encoding(doc, key):
    from hdmf_zarr3.format.vocabulary import first_chunk_key

    doc = {"chunk_key_encoding": docs.chunk_key_encoding("/"), **doc}
    assert first_chunk_key(doc) == key


def test_retyped_codecs_give_every_blosc_the_new_element_size_inside_shards_too():
    """Issue #38: an index widened in place keeps its codecs, with blosc shuffling by the new element size."""
    from hdmf_zarr3.format.layout import default_codecs, retyped_codecs
    from hdmf_zarr3.format.vocabulary import from_attribute

    narrow, wide = (from_attribute(t, t, "/i") for t in ("uint8", "uint32"))
    plain = default_codecs(narrow)
    sharded = [{"name": "sharding_indexed", "configuration": {"chunk_shape": [4], "codecs": plain, "index_codecs": []}}]
    for codecs in (plain, sharded):
        retyped = retyped_codecs(codecs, wide)
        inner = retyped[0]["configuration"]["codecs"] if codecs is sharded else retyped
        assert [c["configuration"].get("typesize") for c in inner] == [None, 4]
    assert plain[1]["configuration"]["typesize"] == 1  # (the original is left as it was)
