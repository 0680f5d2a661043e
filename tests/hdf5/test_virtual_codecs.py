"""The codec chain of a virtual chunk decodes HDF5's stored chunk bytes exactly (issue #20)."""

from __future__ import annotations

import json

import h5py
import hdf5plugin
import numpy as np
import pytest
import zarr
from zarr.buffer import default_buffer_prototype
from zarr.storage import MemoryStore

from hdmf_zarr3.format.layout.virtual_codecs import Filter, NotVirtual, virtual_codecs

RNG = np.random.default_rng(0)
DATA = (RNG.normal(size=(1000, 7)) * 300).astype("<i2")

CASES = {
    "gzip": dict(compression="gzip", compression_opts=4),
    "gzip+shuffle": dict(compression="gzip", shuffle=True),
    "gzip+shuffle+fletcher32": dict(compression="gzip", shuffle=True, fletcher32=True),
    "shuffle alone": dict(shuffle=True),
    "fletcher32 alone": dict(fletcher32=True),
    "none": {},
    "blosc zstd shuffle": dict(**hdf5plugin.Blosc(cname="zstd", clevel=5, shuffle=hdf5plugin.Blosc.SHUFFLE)),
    "blosc lz4 bitshuffle": dict(**hdf5plugin.Blosc(cname="lz4", clevel=9, shuffle=hdf5plugin.Blosc.BITSHUFFLE)),
    "zstd": dict(**hdf5plugin.Zstd(clevel=3)),
}


def _filters(dset: h5py.Dataset) -> list[Filter]:
    plist = dset.id.get_create_plist()
    return [Filter(plist.get_filter(i)[0], tuple(plist.get_filter(i)[2])) for i in range(plist.get_nfilters())]


def _read_through_zarr(dset: h5py.Dataset, codecs: list) -> np.ndarray:
    """Every stored chunk of ``dset``, its bytes as HDF5 wrote them, read by zarr with ``codecs``."""
    doc = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": list(dset.shape),
        "data_type": np.dtype(dset.dtype).newbyteorder("=").name,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(dset.chunks)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0,
        "codecs": codecs,
    }
    objects, skipped = {"zarr.json": json.dumps(doc).encode()}, []
    for i in range(dset.id.get_num_chunks()):
        info = dset.id.get_chunk_info(i)
        if info.filter_mask:  # HDF5 skipped an optional filter for this chunk: its bytes are copied
            skipped.append(tuple(slice(o, o + c) for o, c in zip(info.chunk_offset, dset.chunks)))
            continue
        cell = [o // c for o, c in zip(info.chunk_offset, dset.chunks)]
        objects["c/" + "/".join(map(str, cell))] = dset.id.read_direct_chunk(info.chunk_offset)[1]
    store = MemoryStore({k: default_buffer_prototype().buffer.from_bytes(v) for k, v in objects.items()})
    array = zarr.open_array(store=store, mode="a")
    for region in skipped:
        array[region] = dset[region]
    return array[...]


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("dtype", ["<i2", ">f4", "<f8", "|u1"])
def test_hdf5_chunks_read_through_the_chain_equal_h5py(tmp_path, name, dtype):
    values = DATA.astype(dtype)
    with h5py.File(tmp_path / "f.h5", "w") as f:
        dset = f.create_dataset("d", data=values, chunks=(300, 7), **CASES[name])
        codecs = virtual_codecs(_filters(dset), dset.dtype)
        assert not isinstance(codecs, NotVirtual), codecs
        np.testing.assert_array_equal(_read_through_zarr(dset, codecs), values)


@pytest.mark.parametrize(
    ("settings", "reason"),
    [
        (dict(compression="lzf"), "LZF"),
        (dict(**hdf5plugin.LZ4()), "LZ4 filter frames"),
        (dict(**hdf5plugin.Bitshuffle()), "bitshuffle"),
        (dict(scaleoffset=2), "scale-offset"),
    ],
)
def test_filters_without_a_codec_reading_their_bytes_are_refused_with_the_reason(tmp_path, settings, reason):
    with h5py.File(tmp_path / "f.h5", "w") as f:
        dset = f.create_dataset("d", data=DATA, chunks=(300, 7), **settings)
        found = virtual_codecs(_filters(dset), dset.dtype)
    assert isinstance(found, NotVirtual) and reason in found.reason


@pytest.mark.parametrize("dtype", [h5py.string_dtype(), np.dtype([("a", "<i4"), ("b", "<f8")])])
def test_types_other_than_fixed_size_numbers_are_not_virtual(dtype):
    found = virtual_codecs([], np.dtype(dtype))
    assert isinstance(found, NotVirtual) and "not a fixed-size number" in found.reason
