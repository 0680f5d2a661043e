"""Rows appended to several arrays at once without zarr's per-array machinery (``storage.writes.row_appends``):
what any Zarr v3 reader then reads equals what zarr's own ``append`` gives, for every layout it takes on;
anything else is left to zarr."""

from __future__ import annotations

import json

import numpy as np
import pytest
import zarr
from counting_store import CountingStore
from obstore.store import MemoryStore as ObjectMemory
from zarr.codecs import BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, ZstdCodec
from zarr.storage import LocalStore, MemoryStore, ObjectStore

from hdmf_zarr3.storage.writes import row_appends
from hdmf_zarr3.storage.writes.row_appends import RowAppend

LAYOUTS = {
    "float64 blosc, last chunk partly filled": dict(
        initial=np.arange(10, dtype="f8"), rows=np.arange(10, 25, dtype="f8"), chunks=(8,), compressors=[BloscCodec()]
    ),
    "int16 2-D, chunks across both axes": dict(
        initial=np.arange(50, dtype="i2").reshape(10, 5),
        rows=-np.arange(35, dtype="i2").reshape(7, 5),
        chunks=(4, 3),
        compressors=[GzipCodec(level=1)],
    ),
    "uint8 ending on a chunk boundary": dict(
        initial=np.arange(16, dtype="u1"), rows=np.arange(3, dtype="u1"), chunks=(8,), compressors=[Crc32cCodec()]
    ),
    "strings": dict(
        initial=np.array(["a", "bb", "ccc"], dtype=object),
        rows=np.array(["dddd", "", "é"], dtype=object),
        chunks=(2,),
        compressors=[ZstdCodec(level=3)],
    ),
    "no compressor": dict(
        initial=np.arange(5, dtype="i8"), rows=np.arange(100, 103, dtype="i8"), chunks=(4,), compressors=None
    ),
}


def _array(store, name: str, layout: dict) -> tuple[dict, zarr.Array]:
    initial = layout["initial"]
    dtype = str if initial.dtype == object else initial.dtype
    array = zarr.create_array(
        store, name=name, shape=initial.shape, chunks=layout["chunks"], dtype=dtype, compressors=layout["compressors"]
    )
    array[...] = initial
    return json.loads(json.dumps(array.metadata.to_dict())), array


@pytest.mark.parametrize("kind", ["local", "memory", "object store"])
def test_appended_rows_read_as_zarrs_own_append_gives(kind, tmp_path):
    stores = {"local": lambda: LocalStore(tmp_path / "a"), "memory": MemoryStore}
    store = stores[kind]() if kind in stores else ObjectStore(ObjectMemory())
    appends, expected = [], {}
    for i, (name, layout) in enumerate(LAYOUTS.items()):
        doc, _ = _array(store, f"x{i}", layout)
        assert row_appends.can_append(doc), name
        appends.append(RowAppend(f"/x{i}", doc, layout["rows"]))
        expected[i] = np.concatenate([layout["initial"], layout["rows"]])
    documents = row_appends.append_rows(store, appends)
    for i, name in enumerate(LAYOUTS):
        assert documents[i]["shape"] == list(expected[i].shape), name
        got = zarr.open_array(store, path=f"x{i}", mode="r")  # its stored document, read by zarr
        assert got.shape == expected[i].shape, name
        np.testing.assert_array_equal(got[...], expected[i], err_msg=name)


def test_each_layout_matches_zarrs_append_chunk_by_chunk():
    for name, layout in LAYOUTS.items():
        ours, theirs = MemoryStore(), MemoryStore()
        doc, _ = _array(ours, "x", layout)
        _, their_array = _array(theirs, "x", layout)
        row_appends.append_rows(ours, [RowAppend("/x", doc, layout["rows"])])
        their_array.append(layout["rows"], axis=0)
        mine = zarr.open_array(ours, path="x", mode="r")
        assert mine.metadata.to_dict() == their_array.metadata.to_dict(), name
        for cell in np.ndindex(*mine.cdata_shape):
            region = tuple(slice(c * s, (c + 1) * s) for c, s in zip(cell, mine.chunks))
            np.testing.assert_array_equal(mine[region], their_array[region], err_msg=f"{name} {cell}")


def test_a_last_chunk_never_stored_reads_as_the_fill_value():
    store = MemoryStore()
    array = zarr.create_array(store, name="x", shape=(6,), chunks=(4,), dtype="f4", fill_value=-1.0)
    array[:4] = [1, 2, 3, 4]  # rows 4-5 hold the fill value: their chunk is not stored
    assert "x/c/1" not in store._store_dict
    doc = json.loads(json.dumps(array.metadata.to_dict()))
    row_appends.append_rows(store, [RowAppend("/x", doc, np.array([7, 8, 9], dtype="f4"))])
    assert zarr.open_array(store, path="x")[...].tolist() == [1, 2, 3, 4, -1, -1, 7, 8, 9]


def test_two_rounds_for_every_array_on_a_store_without_sync_io():
    """All partly filled chunks are read together, then every chunk and document is stored together."""
    backing = MemoryStore()
    appends = []
    for i in range(5):
        array = zarr.create_array(backing, name=f"c{i}", shape=(10,), chunks=(8,), dtype="f8")
        array[...] = np.arange(10.0)
        appends.append(RowAppend(f"/c{i}", json.loads(json.dumps(array.metadata.to_dict())), np.ones(3)))
    store = CountingStore(backing)
    row_appends.append_rows(store, appends)
    assert sorted(store.gets) == [f"c{i}/c/1" for i in range(5)]  # only the chunks holding rows already
    assert sorted(store.sets) == sorted([f"c{i}/c/1" for i in range(5)] + [f"c{i}/zarr.json" for i in range(5)])


def test_what_it_does_not_take_is_left_to_zarr():
    store = MemoryStore()
    sharded = zarr.create_array(store, name="s", shape=(10,), chunks=(2,), shards=(4,), dtype="f8")
    dotted = zarr.create_array(store, name="v", shape=(10,), chunks=(4,), dtype="f8", chunk_key_encoding={"name": "v2"})
    big_endian = zarr.create_array(
        store, name="b", shape=(10,), chunks=(4,), dtype="f8", serializer=BytesCodec(endian="big")
    )
    for array in (sharded, dotted, big_endian):
        doc = json.loads(json.dumps(array.metadata.to_dict()))
        assert not row_appends.can_append(doc), array.path


def test_a_damaged_chunk_is_a_typed_error_naming_the_array():
    from zarr.buffer import default_buffer_prototype

    from hdmf_zarr3 import HdmfZarrError

    store = MemoryStore()
    array = zarr.create_array(store, name="x", shape=(6,), chunks=(4,), dtype="f8", compressors=[BloscCodec()])
    array[...] = np.arange(6.0)
    doc = json.loads(json.dumps(array.metadata.to_dict()))
    store._store_dict["x/c/1"] = default_buffer_prototype().buffer.from_bytes(b"not blosc")
    with pytest.raises(HdmfZarrError) as err:
        row_appends.append_rows(store, [RowAppend("/x", doc, np.ones(2))])
    assert err.value.path == "/x"
