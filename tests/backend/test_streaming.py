"""Streaming writes of DataChunkIterators: whole write units, each written exactly once, in parallel."""

from __future__ import annotations

import numpy as np
import pytest
import zarr
from counting_store import CountingStore
from hdmf.data_utils import DataChunkIterator, GenericDataChunkIterator
from nwb_factories import small_nwbfile
from pynwb import TimeSeries
from writing import nwbfile_with, write_nwb
from zarr.codecs import ZstdCodec
from zarr.storage import LocalStore

from hdmf_zarr3 import NWBZarrIO, ZarrDataIO
from hdmf_zarr3.storage.writes import unit_writer as UW

VALUES = np.arange(1000 * 96, dtype="int16").reshape(1000, 96)


class Buffers(GenericDataChunkIterator):
    """Yields VALUES in buffers that straddle every shard boundary along both axes."""

    def __init__(self, buffer_shape=(250, 50), **kwargs):
        super().__init__(buffer_shape=buffer_shape, chunk_shape=(50, 25), **kwargs)

    def _get_data(self, selection):
        return VALUES[selection]

    def _get_maxshape(self):
        return VALUES.shape

    def _get_dtype(self):
        return VALUES.dtype


@pytest.fixture
def regions(monkeypatch):
    """Every region handed to a writer thread."""
    seen = []
    submit = UW.UnitWriter._submit

    def record(self, region, values, final_shape):
        seen.append(region)
        return submit(self, region, values, final_shape)

    monkeypatch.setattr(UW.UnitWriter, "_submit", record)
    return seen


def _written(tmp_path, data):
    """The counting store ``data`` was written through (as TimeSeries ``x``), and its stored array."""
    store = write_nwb(CountingStore(LocalStore(tmp_path / "f.nwb.zarr")), nwbfile_with(data))
    return store, zarr.open_array(tmp_path / "f.nwb.zarr" / "acquisition" / "x" / "data", mode="r")


def _assert_exact_cover(regions, shape):
    hits = np.zeros(shape, dtype=int)
    for region in regions:
        hits[region] += 1
    assert (hits == 1).all(), "every element is written exactly once"


def test_buffers_straddling_shards_write_every_element_once(tmp_path, regions):
    data = ZarrDataIO(Buffers(), chunks=(100, 32), shards=(400, 96))
    store, arr = _written(tmp_path, data)
    np.testing.assert_array_equal(arr[...], VALUES)
    assert arr.shards == (400, 96) and arr.chunks == (100, 32)
    _assert_exact_cover(regions, VALUES.shape)
    assert all((r[0].start % 400, r[1].start % 96) == (0, 0) for r in regions)  # whole shards only
    shard_keys = [k for k in store.sets if k.startswith("acquisition/x/data/c/")]
    assert len(shard_keys) == 3 and all(store.sets[k] == 1 for k in shard_keys)


def test_unknown_length_streams_write_each_chunk_once(tmp_path, regions):
    rows = (VALUES[i] for i in range(len(VALUES)))
    data = ZarrDataIO(DataChunkIterator(rows, buffer_size=70), chunks=(64, 96))
    store, arr = _written(tmp_path, data)
    np.testing.assert_array_equal(arr[...], VALUES)
    _assert_exact_cover(regions, VALUES.shape)
    chunk_keys = [k for k in store.sets if k.startswith("acquisition/x/data/c/")]
    assert len(chunk_keys) == 16 and all(store.sets[k] == 1 for k in chunk_keys)


def test_stream_layout_follows_zarr_dataio_codecs(tmp_path):
    data = ZarrDataIO(Buffers(), compressors=[ZstdCodec(level=7)], fill_value=-1)
    _, arr = _written(tmp_path, data)
    assert [c.to_dict()["name"] for c in arr.compressors] == ["zstd"] and arr.fill_value == -1
    assert arr.metadata.dimension_names == ("num_times", "num_DIM2")
    np.testing.assert_array_equal(arr[...], VALUES)


def test_stream_shows_a_progress_bar(tmp_path, capsys):
    nwb = small_nwbfile()
    nwb.add_acquisition(TimeSeries(name="x", data=Buffers(), unit="V", rate=1.0))
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="w") as io:
        io.write(nwb, progress=True)
    assert "/acquisition/x/data" in capsys.readouterr().err


def test_unit_writer_assembles_pieces_and_fills_gaps():
    written = {}
    writer = UW.UnitWriter(
        lambda region, values, final: written.__setitem__(region, values.copy()), (4, 4), (None, 6), "int32", -1
    )
    writer.add((slice(0, 3), slice(0, 6)), np.ones((3, 6), dtype="int32"))
    writer.add((slice(3, 5), slice(0, 2)), np.full((2, 2), 2, dtype="int32"))
    assert written == {}  # no unit complete yet
    writer.finish([5, 6])
    # The unit never given any data is not written at all: it reads as the fill value.
    assert sorted(written) == [(slice(0, 4), slice(0, 4)), (slice(0, 4), slice(4, 6)), (slice(4, 5), slice(0, 4))]
    np.testing.assert_array_equal(written[(slice(0, 4), slice(0, 4))][3], [2, 2, -1, -1])
