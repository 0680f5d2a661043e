"""plan_virtual finds the byte ranges of an HDF5 dataset's chunks, and zarr reads them as h5py does (issue #20).

Each plan is checked by reading the file's bytes at every chunk's offset and length through zarr with the
plan's codecs, the cells in ``copies`` written from h5py's values, and comparing with h5py's reading.
"""

from __future__ import annotations

import ctypes
import io
import json
import os
from pathlib import Path

import h5py
import hdf5plugin
import numpy as np
import pytest
import zarr
from zarr.buffer import default_buffer_prototype
from zarr.storage import MemoryStore

from hdmf_zarr3.h5py_adapters.virtual_chunks import (
    NotVirtual,
    VirtualArray,
    VirtualChunk,
    _stored_chunks,
    describe,
    plan_virtual,
)

RNG = np.random.default_rng(0)
VALUES = (RNG.normal(size=(1000, 7)) * 300).astype("<i2")


def _write(path: Path, name: str = "d", **settings) -> None:
    with h5py.File(path, "w", userblock_size=settings.pop("userblock_size", 0)) as f:
        f.create_dataset(name, **settings)


def _plan(path: Path, name: str = "d", **options) -> VirtualArray | NotVirtual:
    with h5py.File(path, "r") as f:
        return plan_virtual(f[name], **{"min_bytes": 0, **options})


def _h5py_values(path: Path, name: str = "d", region=Ellipsis) -> np.ndarray:
    with h5py.File(path, "r") as f:
        return f[name][region]


def _region(cell, chunk_shape, shape) -> tuple[slice, ...]:
    return tuple(slice(i * c, min((i + 1) * c, n)) for i, c, n in zip(cell, chunk_shape, shape))


def _through_zarr(path: Path, plan: VirtualArray, name: str = "d") -> np.ndarray:
    """The array zarr reads from the plan: the file's bytes at each chunk, the copies from h5py."""
    doc = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": list(plan.shape),
        "data_type": plan.dtype.newbyteorder("=").name,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(plan.chunk_shape)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": plan.fill_value,
        "codecs": plan.codecs,
    }
    raw = path.read_bytes()
    objects = {"zarr.json": json.dumps(doc).encode()}
    for chunk in plan.chunks:
        objects["c/" + "/".join(map(str, chunk.cell))] = raw[chunk.offset : chunk.offset + chunk.length]
    store = MemoryStore({k: default_buffer_prototype().buffer.from_bytes(v) for k, v in objects.items()})
    array = zarr.open_array(store=store, mode="a")
    for cell in plan.copies:
        region = _region(cell, plan.chunk_shape, plan.shape)
        array[region] = _h5py_values(path, name, region)
    return array[...]


def _assert_reads_as_h5py(path: Path, plan: VirtualArray | NotVirtual, name: str = "d") -> None:
    assert isinstance(plan, VirtualArray), plan
    np.testing.assert_array_equal(_through_zarr(path, plan, name), _h5py_values(path, name))


def test_chunked_gzip_shuffle_chunks_are_read_in_place(tmp_path):
    path = tmp_path / "f.h5"
    _write(path, data=VALUES, chunks=(128, 4), compression="gzip", shuffle=True)
    plan = _plan(path)
    assert isinstance(plan, VirtualArray)
    assert plan.shape == (1000, 7) and plan.chunk_shape == (128, 4) and plan.dtype == np.dtype("<i2")
    assert [c.cell for c in plan.chunks] == [(i, j) for i in range(8) for j in range(2)]
    assert plan.copies == []
    assert [c["name"] for c in plan.codecs] == ["bytes", "numcodecs.shuffle", "numcodecs.zlib"]
    stat = os.stat(path)
    assert (plan.source_size, plan.source_mtime_ns) == (stat.st_size, stat.st_mtime_ns)
    _assert_reads_as_h5py(path, plan)
    assert describe(plan) == "virtual: 16 chunks in place"


def test_big_endian_floats_keep_their_byte_order(tmp_path):
    path = tmp_path / "f.h5"
    _write(path, data=(VALUES / 7).astype(">f4"), chunks=(300, 7), compression="gzip")
    plan = _plan(path)
    assert isinstance(plan, VirtualArray)
    assert plan.dtype == np.dtype(">f4") and plan.codecs[0]["configuration"]["endian"] == "big"
    _assert_reads_as_h5py(path, plan)


@pytest.mark.parametrize("libver", ["earliest", "latest"])
@pytest.mark.parametrize(
    "index",
    [dict(chunks=(100, 7)), dict(chunks=(100, 7), maxshape=(None, 7)), dict(chunks=(70, 3), maxshape=(None, None))]
    + [dict(chunks=(1000, 7))],
    ids=["fixed", "one unlimited axis", "two unlimited axes", "single chunk"],
)
def test_every_kind_of_chunk_index_is_listed_in_cell_order(tmp_path, libver, index):
    # HDF5 indexes chunks by B-tree (v1 or v2), fixed array, extensible array or a single chunk, by
    # libver and maxshape; the plan lists them by cell whatever the index walks first
    path = tmp_path / "f.h5"
    with h5py.File(path, "w", libver=libver) as f:
        dset = f.create_dataset("d", shape=(1000, 7), dtype="<i2", compression="gzip", shuffle=True, **index)
        for start in (900, 0, 500, 200):  # written out of order
            dset[start : start + 100] = VALUES[start : start + 100]
    plan = _plan(path)
    assert isinstance(plan, VirtualArray)
    cells = [c.cell for c in plan.chunks]
    assert cells == sorted(cells) and len(set(cells)) == len(cells)
    _assert_reads_as_h5py(path, plan)


@pytest.mark.parametrize("dtype", ["|u1", "|b1", "<f2", ">i8", "<u4", ">f8"])
def test_every_fixed_size_number_type_reads_as_h5py(tmp_path, dtype):
    path = tmp_path / "f.h5"
    _write(path, data=(VALUES % 3).astype(dtype), chunks=(300, 7), compression="gzip", fillvalue=1)
    plan = _plan(path)
    assert isinstance(plan, VirtualArray) and plan.dtype == np.dtype(dtype)
    assert plan.fill_value == 1 and type(plan.fill_value) is type(np.ones(1, dtype)[0].item())
    _assert_reads_as_h5py(path, plan)


def test_a_dataset_shrunk_then_grown_reads_as_h5py(tmp_path):
    # HDF5 drops the chunks past a shrunk extent and resets the cut-off part of edge chunks to the fill value
    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as f:
        dset = f.create_dataset("d", data=VALUES, chunks=(300, 7), maxshape=(None, 7), compression="gzip")
        dset.resize((450, 7))
        dset.resize((1000, 7))
    plan = _plan(path)
    assert isinstance(plan, VirtualArray) and [c.cell for c in plan.chunks] == [(0, 0), (1, 0)]
    _assert_reads_as_h5py(path, plan)


def test_chunks_never_written_are_absent_and_read_as_the_fill_value(tmp_path):
    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as f:
        dset = f.create_dataset("d", shape=(1000, 7), dtype="<i2", chunks=(100, 7), fillvalue=-7, compression="gzip")
        dset[150:320] = VALUES[150:320]
    plan = _plan(path)
    assert isinstance(plan, VirtualArray)
    assert [c.cell for c in plan.chunks] == [(1, 0), (2, 0), (3, 0)]
    assert plan.fill_value == -7 and isinstance(plan.fill_value, int)
    _assert_reads_as_h5py(path, plan)


def test_where_hdf5_never_writes_the_fill_value_unwritten_chunks_read_as_h5py_does(tmp_path):
    # fill time "never": HDF5 leaves unwritten values undefined and h5py reads its zeroed buffer
    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as f:
        dset = f.create_dataset("d", shape=(1000, 7), dtype="<f4", chunks=(100, 7), fillvalue=5, fill_time="never")
        dset[:100] = VALUES[:100]
    plan = _plan(path)
    assert isinstance(plan, VirtualArray) and plan.fill_value == 0
    _assert_reads_as_h5py(path, plan)


def test_chunks_stored_with_an_optional_filter_skipped_are_copied(tmp_path):
    # Blosc declines data it cannot compress and HDF5 stores those chunks raw, with filter_mask=1
    values = np.zeros((1000, 10), "<i2")
    values[500:] = RNG.integers(-32768, 32767, size=(500, 10))
    path = tmp_path / "f.h5"
    blosc = hdf5plugin.Blosc(cname="lz4", clevel=9, shuffle=hdf5plugin.Blosc.BITSHUFFLE)
    _write(path, data=values, chunks=(100, 10), **blosc)
    plan = _plan(path)
    assert isinstance(plan, VirtualArray)
    assert [c.cell for c in plan.chunks] == [(i, 0) for i in range(5)]
    assert plan.copies == [(i, 0) for i in range(5, 10)]
    _assert_reads_as_h5py(path, plan)
    assert describe(plan) == "virtual: 5 chunks in place, 5 copied"


def _libhdf5() -> ctypes.CDLL:
    """The HDF5 library h5py runs on, for an option h5py does not expose."""
    try:
        with open("/proc/self/maps") as maps:
            path = next(line.split()[-1] for line in maps if "/libhdf5" in line and "_hl" not in line)
    except (OSError, StopIteration):
        pytest.skip("the HDF5 library h5py loaded is not found on this platform")
    return ctypes.CDLL(path)


def test_edge_chunks_that_hdf5_may_have_stored_unfiltered_are_copied(tmp_path):
    # H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS stores partial edge chunks raw, with filter_mask 0
    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((300, 4))
        dcpl.set_deflate(4)
        assert _libhdf5().H5Pset_chunk_opts(ctypes.c_int64(dcpl.id), ctypes.c_uint(0x0002)) >= 0
        h5py.h5d.create(f.id, b"d", h5py.h5t.STD_I16LE, h5py.h5s.create_simple((1000, 7)), dcpl=dcpl)
        f["d"][...] = VALUES
    plan = _plan(path)
    assert isinstance(plan, VirtualArray)
    assert [c.cell for c in plan.chunks] == [(0, 0), (1, 0), (2, 0)]
    assert plan.copies == [(0, 1), (1, 1), (2, 1), (3, 0), (3, 1)]
    _assert_reads_as_h5py(path, plan)


def test_with_shuffle_alone_edge_chunks_cannot_be_told_apart_and_are_copied(tmp_path):
    path = tmp_path / "f.h5"
    _write(path, data=VALUES, chunks=(300, 4), shuffle=True)
    plan = _plan(path)
    assert isinstance(plan, VirtualArray)
    assert [c.cell for c in plan.chunks] == [(0, 0), (1, 0), (2, 0)] and len(plan.copies) == 5
    _assert_reads_as_h5py(path, plan)


def test_contiguous_is_cut_into_chunks_of_whole_rows_and_the_partial_last_one_is_copied(tmp_path):
    path = tmp_path / "f.h5"
    _write(path, data=VALUES)
    plan = _plan(path, contiguous_chunk_bytes=64 * 7 * 2 + 5)
    assert isinstance(plan, VirtualArray)
    assert plan.chunk_shape == (64, 7) and plan.codecs == [{"name": "bytes", "configuration": {"endian": "little"}}]
    assert [c.cell for c in plan.chunks] == [(i, 0) for i in range(15)]
    assert all(c.length == 64 * 7 * 2 for c in plan.chunks)
    assert plan.copies == [(15, 0)]  # rows 960..999: 40 of 64
    _assert_reads_as_h5py(path, plan)
    for chunk in plan.chunks:  # each chunk alone: its bytes decode to the h5py values of its region
        alone = VirtualArray(**{**plan.__dict__, "chunks": [chunk], "copies": []})
        region = _region(chunk.cell, plan.chunk_shape, plan.shape)
        np.testing.assert_array_equal(_through_zarr(path, alone)[region], VALUES[region])


def test_contiguous_that_divides_evenly_has_nothing_to_copy(tmp_path):
    path = tmp_path / "f.h5"
    _write(path, data=VALUES.astype(">i4"))
    plan = _plan(path, contiguous_chunk_bytes=200 * 7 * 4)
    assert isinstance(plan, VirtualArray)
    assert plan.chunk_shape == (200, 7) and len(plan.chunks) == 5 and plan.copies == []
    _assert_reads_as_h5py(path, plan)


def test_contiguous_smaller_than_one_chunk_is_one_whole_chunk(tmp_path):
    path = tmp_path / "f.h5"
    _write(path, data=VALUES)
    plan = _plan(path)
    assert isinstance(plan, VirtualArray)
    assert plan.chunk_shape == (1000, 7) and len(plan.chunks) == 1 and plan.copies == []
    _assert_reads_as_h5py(path, plan)


def test_contiguous_rows_larger_than_a_chunk_are_cut_along_the_next_axis(tmp_path):
    values = np.arange(3 * 5 * 1000, dtype="<f8").reshape(3, 5, 1000)
    path = tmp_path / "f.h5"
    _write(path, data=values)
    plan = _plan(path, contiguous_chunk_bytes=110 * 8)
    assert isinstance(plan, VirtualArray)
    assert plan.chunk_shape == (1, 1, 110)
    assert len(plan.chunks) == 3 * 5 * 9 and len(plan.copies) == 3 * 5
    assert plan.copies[:2] == [(0, 0, 9), (0, 1, 9)]
    _assert_reads_as_h5py(path, plan)


def test_contiguous_never_written_has_no_chunks_and_reads_as_the_fill_value(tmp_path):
    path = tmp_path / "f.h5"
    _write(path, shape=(1000, 7), dtype="<f4", fillvalue=2.5)
    plan = _plan(path)
    assert isinstance(plan, VirtualArray)
    assert plan.chunks == [] and plan.copies == [] and plan.fill_value == 2.5
    _assert_reads_as_h5py(path, plan)
    assert describe(plan) == "virtual: no chunk written (all fill value 2.5)"


@pytest.mark.parametrize("settings", [dict(chunks=(100, 7), compression="gzip"), {}], ids=["chunked", "contiguous"])
def test_offsets_count_the_user_block(tmp_path, settings):
    path = tmp_path / "f.h5"
    _write(path, data=VALUES, userblock_size=1024, **settings)
    plan = _plan(path)
    assert isinstance(plan, VirtualArray) and min(c.offset for c in plan.chunks) > 1024
    _assert_reads_as_h5py(path, plan)


def test_the_chunk_index_walk_of_older_h5py_finds_the_same_chunks(tmp_path):
    class WithoutChunkIter:  # a DatasetID of h5py < 3.8 or HDF5 < 1.12.3
        def __init__(self, dsid):
            self.get_num_chunks, self.get_chunk_info = dsid.get_num_chunks, dsid.get_chunk_info

    path = tmp_path / "f.h5"
    values = np.zeros((1000, 10), "<i2")
    values[500:] = RNG.integers(-32768, 32767, size=(500, 10))
    _write(path, data=values, chunks=(100, 10), **hdf5plugin.Blosc(cname="lz4"))
    with h5py.File(path, "r") as f:
        dsid = f["d"].id
        assert hasattr(dsid, "chunk_iter")
        expected = _stored_chunks(dsid, (1000, 10), (100, 10), 2000)
        assert _stored_chunks(WithoutChunkIter(dsid), (1000, 10), (100, 10), 2000) == expected
        backwards = WithoutChunkIter(dsid)  # an index walked in another order: the plan is still by cell
        backwards.get_chunk_info = lambda i: dsid.get_chunk_info(dsid.get_num_chunks() - 1 - i)
        assert _stored_chunks(backwards, (1000, 10), (100, 10), 2000) == expected
    assert len(expected[0]) == 5 and len(expected[1]) == 5


def _compact(path: Path) -> None:
    with h5py.File(path, "w") as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        h5py.h5d.create(f.id, b"d", h5py.h5t.NATIVE_INT32, h5py.h5s.create_simple((100,)), dcpl=dcpl)
        f["d"][...] = np.arange(100)


def _virtual(path: Path) -> None:
    with h5py.File(path, "w") as f:
        f.create_dataset("source", data=np.arange(100))
        layout = h5py.VirtualLayout(shape=(100,), dtype="i8")
        layout[:] = h5py.VirtualSource(f["source"])
        f.create_virtual_dataset("d", layout)


@pytest.mark.parametrize(
    ("make", "options", "reason"),
    [
        (_compact, {}, "compact layout"),
        (lambda p: _write(p, shape=(100,), dtype="i4", external=[("raw.bin", 0, 400)]), {}, "external raw files"),
        (_virtual, {}, "HDF5 virtual dataset"),
        (lambda p: _write(p, data=5.0), {}, "scalar (0-d)"),
        (lambda p: _write(p, data=["a", "b"] * 1000, dtype=h5py.string_dtype()), {}, "not a fixed-size number"),
        (lambda p: _write(p, data=VALUES, chunks=(100, 7), compression="lzf"), {}, "LZF"),
        (lambda p: _write(p, shape=(0, 7), dtype="i2"), {}, "no elements"),
        (lambda p: _write(p, data=VALUES), {"min_bytes": VALUES.nbytes + 1}, "smaller than 14001 bytes (14000)"),
    ],
    ids=["compact", "external", "virtual", "0-d", "strings", "lzf", "empty", "small"],
)
def test_datasets_that_cannot_be_read_in_place_are_copied_with_the_reason(tmp_path, make, options, reason):
    path = tmp_path / "f.h5"
    make(path)
    plan = _plan(path, **options)
    assert isinstance(plan, NotVirtual) and reason in plan.reason, plan
    assert "copied" in describe(plan)


def test_a_dataset_of_min_bytes_is_virtual_and_small_ones_are_copied_by_default(tmp_path):
    path = tmp_path / "f.h5"
    _write(path, data=VALUES)
    assert isinstance(_plan(path, min_bytes=VALUES.nbytes), VirtualArray)
    with h5py.File(path, "r") as f:
        found = plan_virtual(f["d"])  # 14 000 bytes, under the default 1 MiB
    assert isinstance(found, NotVirtual) and found.reason == "smaller than 1048576 bytes (14000)"
    assert describe(found) == "copied: " + found.reason


def test_a_file_opened_from_a_file_object_has_no_path_to_point_into(tmp_path):
    buffer = io.BytesIO()
    with h5py.File(buffer, "w") as f:
        f.create_dataset("d", data=VALUES)
        found = plan_virtual(f["d"], min_bytes=0)
        assert isinstance(found, NotVirtual) and "file object" in found.reason
        given = plan_virtual(f["d"], min_bytes=0, source_stat=(10**6, 123))
    assert isinstance(given, VirtualArray) and (given.source_size, given.source_mtime_ns) == (10**6, 123)


def test_bytes_past_the_end_of_the_source_are_refused(tmp_path):
    path = tmp_path / "f.h5"
    _write(path, data=VALUES)
    with h5py.File(path, "r") as f:
        found = plan_virtual(f["d"], min_bytes=0, source_stat=(100, 0))
    assert isinstance(found, NotVirtual) and "past the end of the file (100 bytes" in found.reason


def test_reasons_without_the_word_copied_get_it_in_the_report():
    assert describe(NotVirtual("szip has no Zarr v3 codec")) == "copied: szip has no Zarr v3 codec"
    one = VirtualArray((4,), np.dtype("<i2"), (4,), [], 0, [VirtualChunk((0,), 0, 8)], [], 8, 0)
    assert describe(one) == "virtual: 1 chunk in place"
