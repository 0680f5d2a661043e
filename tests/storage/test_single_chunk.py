"""Single-chunk arrays encoded directly decode with plain zarr to the same values."""

from __future__ import annotations

import numpy as np
import pytest
import zarr
from zarr.core.buffer import default_buffer_prototype
from zarr.core.sync import sync
from zarr.storage import MemoryStore

from hdmf_zarr3.format.documents import zarr_json as documents
from hdmf_zarr3.format.vocabulary import dtypes
from hdmf_zarr3.storage.stores.nodes import dump_document
from hdmf_zarr3.storage.stores.single_chunk import encode_single_chunk

CASES = [
    ("int16", np.arange(12, dtype="int16").reshape(3, 4), None),
    ("float64", np.array([1.5, np.nan, -np.inf]), None),
    ("bool", np.array([True, False, True]), None),
    ("uint64", np.array(7, dtype="uint64"), None),
    ("text", np.array(["a", "ünï", ""], dtype=object), None),
    (
        "float32",
        np.arange(5, dtype="float32"),
        [
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "zstd", "configuration": {"level": 3, "checksum": False}},
            {"name": "crc32c"},
        ],
    ),
    (
        "int32",
        np.arange(5, dtype="int32"),
        [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 4}}],
    ),
]


@pytest.mark.parametrize("dtype,values,codecs", CASES, ids=[c[0] for c in CASES])
def test_direct_chunk_decodes_with_zarr(dtype, values, codecs):
    storage = dtypes.for_scalar_dtype(dtype)
    doc = documents.array_document(values.shape, storage, {"zarr_dtype": dtype}, codecs=codecs)
    key, raw = encode_single_chunk(doc, values)
    store = MemoryStore()
    proto = default_buffer_prototype()
    sync(store.set("zarr.json", proto.buffer.from_bytes(dump_document(doc))))
    sync(store.set(key, proto.buffer.from_bytes(raw)))
    got = zarr.open_array(store, mode="r")[...]
    expect = values.astype(object) if dtype == "text" else values
    assert got.shape == values.shape
    assert np.array_equal(np.asarray(got, dtype=expect.dtype), expect, equal_nan=dtype.startswith("float"))


def test_multi_chunk_arrays_are_left_to_zarr():
    storage = dtypes.for_scalar_dtype("int8")
    doc = documents.array_document((10,), storage, {}, chunks=(5,))
    assert encode_single_chunk(doc, np.zeros(10, dtype="int8")) is None


@pytest.mark.parametrize("dtype,values,codecs", CASES, ids=[c[0] for c in CASES])
def test_direct_decode_inverts_direct_encode(dtype, values, codecs):
    from hdmf_zarr3.storage.stores.single_chunk import decode_single_chunk

    storage = dtypes.for_scalar_dtype(dtype)
    doc = documents.array_document(values.shape, storage, {"zarr_dtype": dtype}, codecs=codecs)
    got = decode_single_chunk(doc, encode_single_chunk(doc, values)[1])
    assert got.shape == values.shape and got.dtype == (object if dtype == "text" else values.dtype)
    assert np.array_equal(got, values, equal_nan=dtype.startswith("float"))
    missing = decode_single_chunk(doc, None)
    assert missing.shape == values.shape
