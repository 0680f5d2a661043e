"""HDF5 chunking and compression carry over to Zarr codecs and back; large datasets stream."""

from __future__ import annotations

import tracemalloc

import h5py
import numpy as np
import pytest
import zarr
from hdmf.backends.hdf5 import H5DataIO
from nwb_factories import small_nwbfile
from pynwb import NWBHDF5IO, TimeSeries

from hdmf_zarr3 import LayoutWarning, NWBZarrIO, convert
from hdmf_zarr3.backend.write import streaming
from hdmf_zarr3.hdf5 import conversion


def _hdf5_with_layouts(path):
    nwb = small_nwbfile()
    data = np.arange(1000, dtype="int32")
    settings = {
        "gzip_shuffle": dict(compression="gzip", compression_opts=5, shuffle=True, chunks=(100,)),
        "gzip_plain": dict(compression="gzip", compression_opts=2, chunks=(250,)),
        "lzf": dict(compression="lzf", chunks=(100,)),
        "checked": dict(compression="gzip", fletcher32=True, chunks=(500,)),
    }
    for name, kwargs in settings.items():
        nwb.add_acquisition(TimeSeries(name=name, data=H5DataIO(data, **kwargs), unit="V", rate=1.0))
    with NWBHDF5IO(path, mode="w") as io:
        io.write(nwb)


def _codecs(path):
    return [
        c["name"]
        if c["name"] != "blosc"
        else f"blosc:{c['configuration']['cname']}:{c['configuration']['shuffle']}:{c['configuration']['clevel']}"
        for c in zarr.open_array(path, mode="r").metadata.to_dict()["codecs"]
    ]


def test_hdf5_filters_become_zarr_codecs_and_come_back(tmp_path):
    _hdf5_with_layouts(tmp_path / "a.nwb")
    with pytest.warns(LayoutWarning, match="/acquisition/lzf/data: HDF5 filter 'lzf' has no Zarr v3 equivalent"):
        convert(tmp_path / "a.nwb", tmp_path / "b.nwb.zarr")
    acq = tmp_path / "b.nwb.zarr" / "acquisition"
    assert _codecs(acq / "gzip_shuffle" / "data") == ["bytes", "blosc:zlib:shuffle:5"]
    assert _codecs(acq / "gzip_plain" / "data") == ["bytes", "gzip"]
    assert _codecs(acq / "checked" / "data") == ["bytes", "gzip", "crc32c"]
    assert zarr.open_array(acq / "gzip_plain" / "data").chunks == (250,)
    assert zarr.open_array(acq / "lzf" / "data").chunks == (100,)

    convert(tmp_path / "b.nwb.zarr", tmp_path / "c.nwb")
    with h5py.File(tmp_path / "c.nwb", "r") as f:
        shuffled, plain = f["acquisition/gzip_shuffle/data"], f["acquisition/gzip_plain/data"]
        assert (shuffled.chunks, shuffled.compression, shuffled.compression_opts, shuffled.shuffle) == (
            (100,),
            "gzip",
            5,
            True,
        )
        assert (plain.chunks, plain.compression, plain.compression_opts, plain.shuffle) == ((250,), "gzip", 2, False)
        assert f["acquisition/checked/data"].fletcher32
        assert np.array_equal(f["acquisition/lzf/data"][:], np.arange(1000))


def test_hdf5plugin_filters_become_the_same_blosc_or_zstd(tmp_path):
    """Datasets compressed with hdf5plugin's filters keep their compressor, level and shuffle."""
    hdf5plugin = pytest.importorskip("hdf5plugin")  # a test dependency (pyproject.toml [test])
    nwb = small_nwbfile()
    settings = {
        "blosc_zstd": hdf5plugin.Blosc(cname="zstd", clevel=7, shuffle=hdf5plugin.Blosc.BITSHUFFLE),
        "zstd": hdf5plugin.Zstd(clevel=9),
        "lz4": hdf5plugin.LZ4(),
        "bitshuffle_lz4": hdf5plugin.Bitshuffle(cname="lz4"),
        "bitshuffle_zstd": hdf5plugin.Bitshuffle(cname="zstd", clevel=6),
    }
    data = np.arange(2000, dtype="int32") % 97
    for name, filters in settings.items():
        with pytest.warns(UserWarning, match="may not be available on all installations"):  # HDMF's, for plugins
            dataio = H5DataIO(data, chunks=(500,), allow_plugin_filters=True, **filters)
        nwb.add_acquisition(TimeSeries(name=name, data=dataio, unit="V", rate=1.0))
    with NWBHDF5IO(tmp_path / "a.nwb", mode="w") as io:
        io.write(nwb)
    convert(tmp_path / "a.nwb", tmp_path / "b.nwb.zarr")
    acq = tmp_path / "b.nwb.zarr" / "acquisition"
    assert _codecs(acq / "blosc_zstd" / "data") == ["bytes", "blosc:zstd:bitshuffle:7"]
    assert _codecs(acq / "zstd" / "data") == ["bytes", "zstd"]
    assert _codecs(acq / "lz4" / "data") == ["bytes", "blosc:lz4:noshuffle:5"]
    assert _codecs(acq / "bitshuffle_lz4" / "data") == ["bytes", "blosc:lz4:bitshuffle:5"]
    assert _codecs(acq / "bitshuffle_zstd" / "data") == ["bytes", "blosc:zstd:bitshuffle:6"]
    for name in settings:
        assert np.array_equal(zarr.open_array(acq / name / "data", mode="r")[:], data)


@pytest.mark.parametrize("direction", ["hdf5-to-zarr", "zarr-to-hdf5"])
def test_large_datasets_are_copied_with_bounded_memory(tmp_path, monkeypatch, direction):
    monkeypatch.setattr(streaming, "BLOCK_BYTES", 2 * 2**20)
    monkeypatch.setattr(conversion, "BUFFER_BYTES", 2 * 2**20)
    big = np.random.default_rng(0).integers(0, 1000, size=(200_000, 64), dtype="int16")  # 25.6 MB
    nwb = small_nwbfile()
    nwb.add_acquisition(TimeSeries(name="big", data=H5DataIO(big, chunks=(4096, 64)), unit="V", rate=1.0))
    if direction == "hdf5-to-zarr":
        src, dst = tmp_path / "a.nwb", tmp_path / "b.nwb.zarr"
        with NWBHDF5IO(src, mode="w") as io:
            io.write(nwb)
    else:
        src, dst = tmp_path / "a.nwb.zarr", tmp_path / "b.nwb"
        with NWBZarrIO(src, mode="w") as io:
            io.write(nwb)
    del nwb
    tracemalloc.start()
    try:
        convert(src, dst, progress=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20, f"peak traced memory {peak / 2**20:.1f} MiB for a {big.nbytes / 2**20:.0f} MiB dataset"
    reader = NWBZarrIO if direction == "hdf5-to-zarr" else NWBHDF5IO
    with reader(dst, mode="r") as io:
        assert np.array_equal(io.read().acquisition["big"].data[:], big)


def test_convert_zarr_to_hdf5_keeps_compounds_and_stays_appendable(tmp_path):
    from pynwb.ophys import ImageSegmentation, OpticalChannel

    nwb = small_nwbfile()
    device = nwb.create_device(name="scope")
    plane = nwb.create_imaging_plane(
        name="plane",
        optical_channel=OpticalChannel("ch", "green", 500.0),
        description="p",
        device=device,
        excitation_lambda=600.0,
        imaging_rate=30.0,
        indicator="GCaMP",
        location="V1",
    )
    ophys = nwb.create_processing_module("ophys", "optical physiology")
    seg = ImageSegmentation()
    ophys.add(seg)
    ps = seg.create_plane_segmentation("rois", plane, name="rois")
    ps.add_roi(pixel_mask=[(1, 2, 0.5), (3, 4, 1.0)])
    ps.add_roi(pixel_mask=[(5, 6, 0.25)])
    with NWBZarrIO(tmp_path / "a.nwb.zarr", mode="w") as io:
        io.write(nwb)
    convert(tmp_path / "a.nwb.zarr", tmp_path / "b.nwb")
    with NWBHDF5IO(tmp_path / "b.nwb", mode="a") as io:
        back = io.read()
        masks = back.processing["ophys"]["ImageSegmentation"]["rois"]["pixel_mask"]
        assert [list(map(tuple, m)) for m in masks[:]] == [[(1, 2, 0.5), (3, 4, 1.0)], [(5, 6, 0.25)]]
        back.add_trial(start_time=5.0, stop_time=6.0)  # datasets converted from Zarr can grow
        io.write(back)
    with NWBHDF5IO(tmp_path / "b.nwb", mode="r") as io:
        assert list(io.read().trials["start_time"][:]) == [0.0, 1.0, 5.0]


def test_text_compound_converts_to_hdf5(tmp_path):
    from hdmf.backends.hdf5 import HDF5IO
    from hdmf.build import DatasetBuilder, GroupBuilder

    from hdmf_zarr3 import ZarrIO

    dtype = [{"name": "i", "dtype": "int32"}, {"name": "s", "dtype": "text"}]
    with ZarrIO(tmp_path / "a.zarr", mode="w") as io:
        io.write_builder(
            GroupBuilder("root", datasets={"rows": DatasetBuilder("rows", [(1, "zz"), (2, "é")], dtype=dtype)})
        )
    with ZarrIO(tmp_path / "a.zarr", mode="r") as io:
        rows = io.read_builder().datasets["rows"].data
        assert np.asarray(rows).tolist() == [(1, "zz"), (2, "é")]
        with HDF5IO(str(tmp_path / "b.h5"), mode="w") as dst:
            dst.write_builder(io.read_builder(), export_source=str(tmp_path / "a.zarr"))
    with h5py.File(tmp_path / "b.h5", "r") as f:
        assert [(int(i), s.decode()) for i, s in f["rows"][:].tolist()] == [(1, "zz"), (2, "é")]


def test_convert_refuses_hdf5_links_into_zarr(tmp_path):
    from hdmf_zarr3 import UnsupportedDataError

    with NWBZarrIO(tmp_path / "raw.nwb.zarr", mode="w") as io:
        io.write(small_nwbfile())
    with NWBZarrIO(tmp_path / "raw.nwb.zarr", mode="r") as raw:
        ts = raw.read().acquisition["ts"]
        derived = small_nwbfile()
        derived.add_acquisition(TimeSeries(name="linked", data=ts, unit="m", rate=30.0))
        with NWBZarrIO(tmp_path / "derived.nwb.zarr", mode="w", manager=raw.manager) as io:
            io.write(derived)
    with pytest.raises(UnsupportedDataError, match="raw.nwb.zarr; HDF5 cannot link into Zarr"):
        convert(tmp_path / "derived.nwb.zarr", tmp_path / "derived.nwb")


def test_many_large_datasets_are_copied_two_at_a_time(tmp_path, monkeypatch):
    monkeypatch.setattr(streaming, "BLOCK_BYTES", 2**20)
    rng = np.random.default_rng(1)
    series = {f"big{i}": rng.integers(0, 1000, size=(40_000, 64), dtype="int16") for i in range(8)}  # 5 MB each
    nwb = small_nwbfile()
    for name, values in series.items():
        nwb.add_acquisition(TimeSeries(name=name, data=H5DataIO(values, chunks=(2048, 64)), unit="V", rate=1.0))
    with NWBHDF5IO(tmp_path / "a.nwb", mode="w") as io:
        io.write(nwb)
    del nwb
    tracemalloc.start()
    try:
        convert(tmp_path / "a.nwb", tmp_path / "b.nwb.zarr")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # Two copies at a time, each holding a block being written and the next one being read.
    assert peak < 8 * 2**20, f"peak traced memory {peak / 2**20:.1f} MiB"
    with NWBZarrIO(tmp_path / "b.nwb.zarr", mode="r") as io:
        acquisition = io.read().acquisition
        for name, values in series.items():
            assert np.array_equal(acquisition[name].data[:], values)
