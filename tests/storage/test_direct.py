"""Direct chunk encoding and decoding (bulk writes and reads without zarr's pipeline) agree with zarr."""

from __future__ import annotations

import math

import numpy as np
import pytest
import zarr
from counting_store import CountingStore
from zarr.core.sync import sync
from zarr.storage import LocalStore, MemoryStore

from hdmf_zarr3 import FormatError
from hdmf_zarr3.storage.codecs import direct_read, read_plans
from hdmf_zarr3.storage.codecs import direct_write as direct
from hdmf_zarr3.storage.codecs.direct_read import UnitDecoder
from hdmf_zarr3.storage.codecs.direct_write import UnitEncoder
from hdmf_zarr3.storage.codecs.read_plans import basic_selection
from hdmf_zarr3.storage.stores.pools import WorkPools

LAYOUTS = [
    ((1000, 96), (100, 32), (400, 96), "int16"),  # edge shard, edge chunks
    ((37, 5, 3), (8, 2, 3), (16, 4, 3), "float32"),  # 3-d, chunks beyond the edge of the last shard
    ((1001,), (100,), None, "bool"),  # unsharded, padded edge chunk
    ((250, 7), (64, 7), None, "uint64"),
]


@pytest.fixture
def pools():
    with WorkPools() as owned:
        yield owned


def _values(shape, dtype):
    values = np.arange(np.prod(shape)) % 1000
    values[: len(values) // 3] = 0  # whole chunks of fill values are not stored
    return ((values % 7 == 0) if dtype == "bool" else values).astype(dtype).reshape(shape)


async def _keys(store, prefix):
    return sorted([k.split("/", 1)[1] async for k in store.list() if k.startswith(prefix + "/c")])


def _pair(shape, chunks, shards, dtype):
    store = MemoryStore()
    make = dict(shape=shape, chunks=chunks, shards=shards, dtype=dtype, fill_value=0)
    return store, zarr.create_array(store, name="ref", **make), zarr.create_array(store, name="ours", **make)


@pytest.mark.parametrize(("shape", "chunks", "shards", "dtype"), LAYOUTS)
def test_encoded_units_read_back_through_zarr_with_the_same_objects(shape, chunks, shards, dtype, pools):
    store, reference, ours = _pair(shape, chunks, shards, dtype)
    values = _values(shape, dtype)
    encoder = UnitEncoder.for_document(store, "/ours", ours.metadata.to_dict())
    sync(encoder.write_block((0,) * len(shape), values, pools))
    reference[...] = values
    np.testing.assert_array_equal(ours[...], values)
    assert sync(_keys(store, "ours")) == sync(_keys(store, "ref"))


@pytest.mark.parametrize(("shape", "chunks", "shards", "dtype"), LAYOUTS)
@pytest.mark.parametrize("whole", [0.0, 1.1])  # fetch whole shards, or the index and single chunks
def test_decoded_selections_match_what_zarr_wrote(monkeypatch, shape, chunks, shards, dtype, whole, pools):
    monkeypatch.setattr(direct_read, "WHOLE_SHARD_FRACTION", whole)
    store, reference, _ = _pair(shape, chunks, shards, dtype)
    values = _values(shape, dtype)
    reference[...] = values
    decoder = UnitDecoder.for_document(store, "/ref", reference.metadata.to_dict())
    rng = np.random.default_rng(0)
    keys = [Ellipsis, 0, -1, (slice(None, None, 1),) * len(shape)]
    for _ in range(20):
        keys.append(tuple(slice(*sorted(rng.integers(0, n + 1, 2))) for n in shape))
    for key in keys:
        selection, out_shape = basic_selection(key, shape)
        np.testing.assert_array_equal(sync(decoder.read(selection, pools)).reshape(out_shape), values[key])


def test_missing_objects_read_as_the_fill_value(pools):
    store, reference, _ = _pair((1000, 96), (100, 32), (400, 96), "int16")
    reference[:400] = 5
    decoder = UnitDecoder.for_document(store, "/ref", reference.metadata.to_dict())
    got = sync(decoder.read((slice(0, 1000), slice(0, 96)), pools))
    assert (got[:400] == 5).all() and (got[400:] == 0).all()


def test_a_damaged_shard_index_is_a_format_error(pools):
    store, reference, _ = _pair((1000, 96), (100, 32), (400, 96), "int16")
    reference[...] = 3
    raw = bytearray(sync(store.get("ref/c/0/0", zarr.core.buffer.default_buffer_prototype())).to_bytes())
    raw[-10] ^= 0xFF
    sync(store.set("ref/c/0/0", zarr.core.buffer.default_buffer_prototype().buffer.from_bytes(bytes(raw))))
    decoder = UnitDecoder.for_document(store, "/ref", reference.metadata.to_dict())
    with pytest.raises(FormatError, match="^/ref: shard index of c/0/0 is damaged") as raised:
        sync(decoder.read((slice(0, 10), slice(0, 10)), pools))
    assert raised.value.path == "/ref"


@pytest.mark.parametrize("key", [[1, 2], slice(None, None, 2), np.array([1]), (Ellipsis, Ellipsis), 10**6, (0, 0, 0)])
def test_other_selections_are_left_to_zarr(key):
    assert basic_selection(key, (100, 4)) is None


def test_codecs_it_does_not_know_are_left_to_zarr():
    store = MemoryStore()
    arr = zarr.create_array(
        store, name="x", shape=(10,), chunks=(5,), dtype="int8", filters=[zarr.codecs.TransposeCodec(order=(0,))]
    )
    assert UnitDecoder.for_document(store, "/x", arr.metadata.to_dict()) is None


def test_neighbouring_chunks_are_coalesced_into_runs_within_the_limit_and_gap():
    chunks = [("c", 300, 100), ("a", 0, 100), ("b", 100, 100), ("d", 450, 50), ("e", 10_000, 10)]
    runs = read_plans.coalesce(chunks, limit=400, gap=100)
    assert [[name for name, _, _ in run] for run in runs] == [["a", "b", "c"], ["d"], ["e"]]  # d: a run of 500 bytes
    assert [[n for n, _, _ in r] for r in read_plans.coalesce(chunks, limit=10**6, gap=0)] == [
        ["a", "b"],
        ["c"],
        ["d"],
        ["e"],
    ]


def test_a_window_across_all_columns_reads_the_index_and_one_run_of_chunks(pools):
    store, reference, _ = _pair((1000, 96), (100, 32), (400, 96), "int16")
    values = _values((1000, 96), "int16")
    reference[...] = values
    counting = CountingStore(store)
    decoder = UnitDecoder.for_document(counting, "/ref", reference.metadata.to_dict())
    got = sync(decoder.read((slice(500, 600), slice(0, 96)), pools))  # 3 of the 12 chunks of shard 1
    np.testing.assert_array_equal(got, values[500:600])
    assert counting.gets == {"ref/c/1/0": 2}  # its index, then its 3 neighbouring chunks at once


@pytest.mark.parametrize(("shape", "chunks", "shards", "dtype"), LAYOUTS)
def test_a_local_directory_is_written_and_read_in_small_runs_and_zarr_agrees(
    monkeypatch, tmp_path, shape, chunks, shards, dtype
):
    monkeypatch.setattr(direct_read, "RUN_BYTES", {"local": 1, "remote": 1})  # one chunk per request
    monkeypatch.setattr(direct, "JOB_BYTES", 3 * math.prod(chunks) * np.dtype(dtype).itemsize)  # 3 per job
    store = LocalStore(tmp_path / "f.zarr")
    array = zarr.create_array(store, name="a", shape=shape, chunks=chunks, shards=shards, dtype=dtype, fill_value=0)
    values = _values(shape, dtype)
    # shard buffers are reused from one shard to the next: each shard must still hold its own bytes
    with WorkPools(encoder_threads=2) as pools:
        encoder = UnitEncoder.for_document(store, "/a", array.metadata.to_dict())
        sync(encoder.write_block((0,) * len(shape), values, pools))
        np.testing.assert_array_equal(zarr.open_array(store, path="a", mode="r")[...], values)
        decoder = UnitDecoder.for_document(store, "/a", array.metadata.to_dict())
        rng = np.random.default_rng(1)
        keys = [Ellipsis] + [tuple(slice(*sorted(rng.integers(0, n + 1, 2))) for n in shape) for _ in range(10)]
        for key in keys:
            selection, out_shape = basic_selection(key, shape)
            np.testing.assert_array_equal(sync(decoder.read(selection, pools)).reshape(out_shape), values[key])


def test_the_stage_clock_counts_the_stages_of_writes_while_measuring_only(pools):
    store, _, ours = _pair((1000, 96), (100, 32), (400, 96), "int16")
    encoder = UnitEncoder.for_document(store, "/ours", ours.metadata.to_dict())
    values = _values((1000, 96), "int16")
    with direct.STAGES.measuring() as seconds:
        sync(encoder.write_block((0, 0), values, pools))
    assert all(seconds[stage] > 0 for stage in ("cut", "encode", "assemble", "store", "blocks"))
    before = dict(seconds)
    sync(encoder.write_block((0, 0), values, pools))
    assert seconds == before


def test_copy_rows_copies_runs_of_the_last_axis_and_casts_other_arrays():
    rows = np.arange(100 * 384, dtype="<i2").reshape(100, 384)
    cut = np.empty((50, 64), dtype="<i2")
    direct.copy_rows(cut, rows[10:60, 64:128])  # a chunk out of 384-channel rows
    np.testing.assert_array_equal(cut, rows[10:60, 64:128])
    back = np.zeros((100, 384), dtype="=i2")
    direct.copy_rows(back[5:55, 128:192], cut)  # and into the rows of a result
    assert (back[5:55, 128:192] == cut).all() and back.sum() == cut.sum(dtype=np.int64)
    swapped = np.random.default_rng(0).random((7, 9)).astype(">f8")
    for source in (swapped[:, 2:5], swapped[:, ::3], swapped[0, ::3]):  # another byte order; strided; 1-d
        target = np.empty(source.shape, dtype="<f8")
        direct.copy_rows(target, source)
        np.testing.assert_array_equal(target, source)


def test_shard_buffers_are_not_reused_for_a_store_that_may_keep_them(tmp_path, pools):
    class Keeping(LocalStore):  # a local directory that keeps what it was given (as a cache might)
        kept: list = []

        async def set(self, key, value):
            self.kept.append((key, value))
            await super().set(key, value)

    store = Keeping(tmp_path / "f.zarr")
    array = zarr.create_array(store, name="a", shape=(1000, 96), chunks=(100, 32), shards=(200, 96), dtype="int16")
    encoder = UnitEncoder.for_document(store, "/a", array.metadata.to_dict())
    values = (np.arange(1000 * 96) % 1000).astype("int16").reshape(1000, 96)
    sync(encoder.write_block((0, 0), values, pools))
    shards = [buffer for key, buffer in store.kept if key.startswith("a/c/")]
    assert len(shards) == 5 and len({id(buffer.as_numpy_array().base) for buffer in shards}) == 5  # none shared
