"""The default layout policy: chunk shapes for time series and frames, shards for large arrays."""

import math

import numpy as np
import zarr
from nwb_factories import small_nwbfile
from pynwb import TimeSeries

from hdmf_zarr3 import NWBZarrIO, ZarrDataIO
from hdmf_zarr3.format.layout import policy
from hdmf_zarr3.format.vocabulary import dtypes

INT16 = dtypes.for_scalar_dtype("int16")
TEXT = dtypes.for_scalar_dtype("text")


def test_time_series_chunks_split_channels_and_fill_the_target():
    chunks = policy.chunk_shape((10_000_000, 384), INT16)
    assert chunks == (policy.TARGET_CHUNK_BYTES // (64 * 2), 64)
    assert policy.chunk_shape((10_000_000, 100), INT16)[1] == 100  # narrow arrays keep whole rows
    assert policy.chunk_shape((500, 384), INT16) == (500, 384)  # short: one chunk, not six
    assert policy.chunk_shape((3, 10**6), dtypes.for_scalar_dtype("float64"))[0] == 1  # wide rows stay rows


def test_frames_stay_whole_unless_one_frame_is_too_big():
    chunks = policy.chunk_shape((1000, 512, 512), INT16)
    assert chunks[1:] == (512, 512) and chunks[0] * 512 * 512 * 2 <= policy.TARGET_CHUNK_BYTES
    huge = policy.chunk_shape((2, 4096, 4096), dtypes.for_scalar_dtype("float64"))
    assert math.prod(huge) * 8 <= policy.TARGET_CHUNK_BYTES


def test_degenerate_shapes():
    assert policy.chunk_shape((), INT16) == ()
    assert policy.chunk_shape((0,), INT16) == (1,)
    assert policy.chunk_shape((0, 384), INT16)[0] == 1


def test_large_arrays_get_shards_of_whole_chunks_across_all_channels():
    shape = (30_000 * 60, 384)  # one minute of 384-channel ephys: ~1.3 GiB
    chunks = policy.chunk_shape(shape, INT16)
    shards = policy.shard_shape(shape, chunks, INT16)
    assert shards is not None and shards[1] == 384 and shards[0] % chunks[0] == 0
    assert shards[0] * 384 * 2 <= policy.TARGET_SHARD_BYTES
    objects = math.ceil(shape[0] / shards[0])
    assert 4 <= objects <= 16  # a handful of objects, not hundreds of chunks


def test_a_sharded_time_series_takes_small_chunks_and_an_unsharded_one_keeps_4_mib():
    from hdmf_zarr3.backend.settings.layout_choice import choose

    recording = (1_398_000, 384)  # 1 GiB of 384-channel ephys: sharded
    rows = policy.SHARDED_SERIES_CHUNK_BYTES // (64 * 2)
    assert policy.chunk_shape(recording, INT16, sharded=True) == (rows, 64)
    for settings in ({}, ZarrDataIO(np.zeros(1)).write_settings):
        layout = choose("/d", INT16, recording, settings)
        sharding = layout.codecs[0]["configuration"]
        assert tuple(sharding["chunk_shape"]) == (rows, 64)
        assert layout.chunks[1] == 384 and layout.chunks[0] % rows == 0
        assert layout.chunks[0] * 384 * 2 <= policy.TARGET_SHARD_BYTES
    ten_seconds = (300_000, 384)  # 230 MB: not sharded, so each chunk is an object of its own
    assert choose("/d", INT16, ten_seconds, {}).chunks is None  # the default chunks, not sharded:
    assert policy.chunk_shape(ten_seconds, INT16) == (policy.TARGET_CHUNK_BYTES // (64 * 2), 64)
    assert policy.chunk_shape((10**8, 16), INT16, sharded=True) == policy.chunk_shape((10**8, 16), INT16)  # narrow


def test_small_and_variable_length_arrays_are_not_sharded():
    assert policy.shard_shape((1000, 384), (1000, 64), INT16) is None
    assert policy.shard_shape((10**8,), (65536,), TEXT) is None
    assert policy.shard_shape((), (), INT16) is None


def test_trailing_axes_round_up_to_whole_chunks():
    shards = policy.shard_shape((10**6, 200), (5000, 64), INT16, from_bytes=0)
    assert shards[1] == 256 and shards[0] % 5000 == 0


def test_a_shard_wider_than_the_target_splits_its_trailing_axes():
    float64 = dtypes.for_scalar_dtype("float64")
    for shape in [(4, 10**9), (3, 40_000, 40_000), (10**6, 2**20)]:  # rows of 8 GB, 12.8 GB, 8 MiB
        chunks = policy.chunk_shape(shape, float64)
        shards = policy.shard_shape(shape, chunks, float64)
        assert shards is not None and all(s % c == 0 for s, c in zip(shards, chunks))
        assert math.prod(shards) * 8 <= policy.TARGET_SHARD_BYTES  # (far under DANDI's 5 GiB objects)
    shape = (30_000 * 60, 384)  # a row of chunks under the target: still across all channels
    assert policy.shard_shape(shape, policy.chunk_shape(shape, INT16), INT16)[1] == 384


def test_chunk_keys_are_nested_unless_deeper_than_dandi_allows():
    assert policy.MAX_KEY_DEPTH == 7
    assert policy.nested_key_depth("/processing/ecephys/LFP/ElectricalSeries/data", 2) == 8  # .../data/c/0/0
    assert policy.nested_key_depth("/acquisition/x/data", 0) == 4  # .../data/c
    assert policy.chunk_key_separator("/acquisition/ElectricalSeries/data", 2) == "/"  # 6 levels
    assert policy.chunk_key_separator("/processing/ecephys/LFP/ElectricalSeries/data", 1) == "/"  # 7
    assert policy.chunk_key_separator("/processing/ecephys/LFP/ElectricalSeries/data", 2) == "."  # 8
    assert policy.chunk_key_separator("/acquisition/TwoPhotonSeries/data", 3) == "/"  # 7
    assert policy.chunk_key_separator("/acquisition/TwoPhotonSeries/data", 4) == "."  # volumes: 8
    assert policy.chunk_key_separator("processing/a/b/c/d/e", 0) == "/"  # a 0-d key is "c" either way
    assert policy.chunk_key_separator("/processing/ecephys/LFP/ElectricalSeries/data", 2, "/") == "/"  # asked
    assert policy.chunk_key_separator("/x", 1, ".") == "."


def test_written_array_is_sharded_and_readable_by_zarr(tmp_path, monkeypatch):
    # Shrink the thresholds so that a small array exercises the sharded path end to end.
    monkeypatch.setattr(policy, "SHARD_FROM_BYTES", 2**20)
    monkeypatch.setattr(policy, "TARGET_SHARD_BYTES", 2**19)
    monkeypatch.setattr(policy, "TARGET_CHUNK_BYTES", 2**16)
    monkeypatch.setattr(policy, "SHARDED_SERIES_CHUNK_BYTES", 2**16)
    values = np.arange(600_000, dtype="int16").reshape(-1, 200)
    nwb = small_nwbfile()
    nwb.add_acquisition(TimeSeries(name="x", data=values, unit="V", rate=1.0))
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="w") as io:
        io.write(nwb)
    arr = zarr.open_array(tmp_path / "f.nwb.zarr" / "acquisition" / "x" / "data", mode="r")
    assert arr.shards is not None and arr.shards[1] == 256
    np.testing.assert_array_equal(arr[...], values)
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="r") as io:
        data = io.read().acquisition["x"].data
        assert data.shards == arr.shards and data.chunks == arr.chunks
        np.testing.assert_array_equal(data[:, 17], values[:, 17])


def test_zarr_dataio_shards_auto_by_default_and_none_disables(monkeypatch):
    monkeypatch.setattr(policy, "SHARD_FROM_BYTES", 0)
    from hdmf_zarr3.backend.settings.layout_choice import choose

    auto = choose("/d", INT16, (100_000, 384), ZarrDataIO(np.zeros(1)).write_settings)
    assert auto.codecs[0]["name"] == "sharding_indexed"
    off = choose("/d", INT16, (100_000, 384), ZarrDataIO(np.zeros(1), shards=None).write_settings)
    assert off.codecs[0]["name"] == "bytes"
