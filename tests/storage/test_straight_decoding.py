"""Chunks decoded straight into the result (issue #40) read what zarr-python reads, for every input of the kind.

A chunk wholly selected whose place in the result is one contiguous run (whole rows of a C-contiguous
result: 1-d arrays, chunks spanning the trailing axes) is decoded by Blosc (our default codec) straight into the result,
with no scratch chunk and no second copy; every other chunk goes through the scratch chunk as before.
Each case writes an array with zarr-python and compares our direct read with zarr-python's read of the
same array: dtypes (big-endian ones are left to zarr, and still compared), selections (whole, unit and
other steps, single and negative indices, empty, edge chunks, integer arrays), sharded and unsharded,
chunks missing (read as a fill value that is not zero), local, memory and S3 stores.
"""

from __future__ import annotations

import numpy as np
import pytest
import zarr
from zarr.codecs import BloscCodec, BytesCodec, ZstdCodec
from zarr.errors import NegativeStepError
from zarr.storage import LocalStore, MemoryStore

from hdmf_zarr3.storage.codecs import UnitDecoder, direct_read, read_key
from hdmf_zarr3.storage.stores.pools import WorkPools

FILL = 5
#: (shape, chunks, shards): chunks of whole rows (the straight path) and chunks that are not (the scratch path)
LAYOUTS = [
    ((1001,), (100,), None),  # 1-d, an edge chunk
    ((1001,), (50,), (200,)),  # 1-d sharded, an edge shard
    ((250, 7), (64, 7), None),  # whole rows, an edge chunk
    ((250, 7), (16, 7), (64, 7)),  # whole rows in shards
    ((37, 4, 3), (5, 4, 3), (10, 4, 3)),  # whole frames in shards
    ((120, 9), (32, 4), (64, 8)),  # not whole rows: the scratch path only
]
DTYPES = ["int8", "uint16", "int32", "int64", "float32", "float64", "bool", ">i4", ">f8"]


def _values(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    flat = np.arange(int(np.prod(shape)))
    values = (flat % 7 == 0) if dtype == "bool" else (flat * 37 % 1000 - 500)
    values = np.asarray(values).astype(dtype).reshape(shape)
    values[: max(1, shape[0] // 3)] = FILL if dtype != "bool" else True  # whole chunks of the fill value: not stored
    return values


def _keys(shape: tuple[int, ...]) -> list:
    n = shape[0]
    rest = (slice(None),) * (len(shape) - 1)
    return [
        Ellipsis,
        slice(None),
        (slice(3, n - 2),) + rest,  # partial first and last chunks
        (slice(100, 200),) + rest,  # chunk-aligned where chunks are 50 or 100 long
        0,
        -1,
        (slice(-30, None),) + rest,
        (slice(7, 7),) + rest,  # empty
        (slice(None, None, 3),) + rest,  # a step
        (slice(n - 1, 0, -4),) + rest,  # a negative step
        np.array([0, n // 2, n - 1]),  # integers (orthogonal)
        (slice(0, n),) + tuple(slice(1, None) for _ in rest),  # not whole rows: the scratch path
    ]


def _array(store, shape, chunks, shards, dtype, codec="blosc"):
    fill = True if dtype == "bool" else FILL
    compressor = BloscCodec(cname="lz4", clevel=5, shuffle="bitshuffle") if codec == "blosc" else ZstdCodec(level=3)
    # big-endian types are stored big-endian (zarr stores a ">i4" array little-endian unless told)
    serializer = BytesCodec(endian="big") if dtype.startswith(">") else "auto"
    array = zarr.create_array(
        store,
        name="a",
        shape=shape,
        chunks=chunks,
        shards=shards,
        dtype=dtype,
        fill_value=fill,
        serializer=serializer,
        compressors=compressor,
    )
    array[...] = _values(shape, dtype)
    return array


def _compare(array, shape) -> int:
    """Read every key directly and through zarr-python; how many keys were read directly."""
    decoder = UnitDecoder.for_document(array.store, "/a", array.metadata.to_dict())
    direct = 0
    with WorkPools(encoder_threads=2) as pools:
        for key in _keys(shape):
            got = read_key(decoder, key, shape, pools)
            if got is None:
                continue  # left to zarr (a big-endian array)
            try:
                expected = array.oindex[key] if isinstance(key, np.ndarray) else array[key]
            except NegativeStepError:  # zarr-python reads none: its whole array, stepped by numpy
                expected = array[...][key]
            direct += 1
            np.testing.assert_array_equal(got, expected, err_msg=f"key {key!r}")
            assert got.shape == np.shape(expected) and got.dtype == expected.dtype, key
    return direct


@pytest.mark.parametrize(("shape", "chunks", "shards"), LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("codec", ["blosc", "zstd"])  # zstd: never straight into the result
def test_direct_reads_match_zarr_for_every_dtype_layout_and_selection(shape, chunks, shards, dtype, codec):
    array = _array(MemoryStore(), shape, chunks, shards, dtype, codec)
    direct = _compare(array, shape)
    assert direct == (0 if dtype.startswith(">") else len(_keys(shape)))


@pytest.mark.parametrize(("shape", "chunks", "shards"), LAYOUTS)
def test_direct_reads_from_a_local_directory_match_zarr(tmp_path, shape, chunks, shards):
    assert _compare(_array(LocalStore(tmp_path / "f.zarr"), shape, chunks, shards, "int16"), shape)


@pytest.mark.parametrize("whole", [0.0, 1.1])  # whole shards fetched, or their index and runs of chunks
@pytest.mark.parametrize(("shape", "chunks", "shards"), [LAYOUTS[1], LAYOUTS[3], LAYOUTS[5]])
def test_direct_reads_from_s3_match_zarr(s3, monkeypatch, whole, shape, chunks, shards):
    from obstore.store import S3Store
    from s3_server import new_bucket
    from zarr.storage import ObjectStore

    monkeypatch.setattr(direct_read, "WHOLE_SHARD_FRACTION", whole)
    store = ObjectStore(S3Store(new_bucket(s3), **s3["options"]))
    assert _compare(_array(store, shape, chunks, shards, "float32"), shape)


def test_wholly_selected_chunks_of_whole_rows_skip_the_scratch_chunk(monkeypatch):
    """Reading all of a (250, 7) array in (64, 7) chunks: the three whole chunks holding values other than the
    fill are decoded straight into the result; only the edge chunk (padded when stored) and a partial one
    go through the scratch chunk. Before, every stored chunk did."""
    shape, chunks = (250, 7), (64, 7)
    array = _array(MemoryStore(), shape, chunks, None, "int32")
    scratch = []
    real = direct_read.scratch_buffer
    monkeypatch.setattr(direct_read, "scratch_buffer", lambda *a: scratch.append(a) or real(*a))
    decoder = UnitDecoder.for_document(array.store, "/a", array.metadata.to_dict())
    with WorkPools(encoder_threads=2) as pools:
        np.testing.assert_array_equal(read_key(decoder, slice(None), shape, pools), array[...])
        assert len(scratch) == 1  # chunk 0 is all fill (not stored); chunks 1, 2 straight; the edge chunk 3 not
        scratch.clear()
        np.testing.assert_array_equal(read_key(decoder, slice(70, 250), shape, pools), array[70:])
        assert len(scratch) == 2  # chunk 1 partly selected, chunk 3 at the edge; chunk 2 straight
