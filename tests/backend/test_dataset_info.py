"""Lazy datasets tell their storage as zarr.Array does (code written for hdmf-zarr reads it there)."""

from __future__ import annotations

import numpy as np
import zarr
from writing import write_nwb

from hdmf_zarr3 import NWBZarrIO, ZarrDataIO


def test_a_read_dataset_shows_its_codecs_and_summary_as_zarr_does(tmp_path):
    from nwb_factories import small_nwbfile
    from zarr.codecs import ZstdCodec

    nwb = small_nwbfile()
    settings = {"compressors": [ZstdCodec(level=3)], "chunks": (100,)}
    nwb.acquisition["ts"].set_data_io("data", ZarrDataIO, data_io_kwargs=settings)
    path = tmp_path / "f.nwb.zarr"
    with NWBZarrIO(path, mode="w") as io:
        io.write(nwb)
    plain = zarr.open_array(path / "acquisition" / "ts" / "data", mode="r")
    with NWBZarrIO(path, mode="r") as io:
        data = io.read().acquisition["ts"].data
        assert data.compressors == plain.compressors and isinstance(data.compressors[0], ZstdCodec)
        assert data.filters == plain.filters and data.serializer == plain.serializer
        assert data.fill_value == plain.fill_value == 0
        assert "Compressors" in str(data.info) and "Zstd" in str(data.info)
        assert "No. bytes stored" in str(data.info_complete())
        assert 0 < data.nbytes_stored() == plain.nbytes_stored() < data.nbytes  # compressed, measured
        assert data.store.root == path  # the file's store; the array is at its path in it
        assert np.array_equal(data[:], np.arange(1000.0))


def test_the_defaults_are_shown_too(tmp_path):
    path = write_nwb(tmp_path / "f.nwb.zarr")
    with NWBZarrIO(path, mode="r") as io:
        data = io.read().units["quality"].data
        assert data.compressors == zarr.open_array(path / "units" / "quality", mode="r").compressors


def test_the_same_array_read_twice_or_through_a_link_is_equal(tmp_path):
    from pynwb import TimeSeries

    raw = write_nwb(tmp_path / "raw.nwb.zarr")
    derived = tmp_path / "derived.nwb.zarr"
    with NWBZarrIO(raw, mode="r") as source:
        original = source.read()
        from nwb_factories import small_nwbfile

        nwb = small_nwbfile(10)
        nwb.add_acquisition(TimeSeries(name="linked", data=original.acquisition["ts"].data, unit="m", rate=30.0))
        with NWBZarrIO(derived, mode="w") as io:
            io.write(nwb, link_data=True)
    with NWBZarrIO(raw, mode="r") as one, NWBZarrIO(raw, mode="r") as two, NWBZarrIO(derived, mode="r") as three:
        a = one.read().acquisition["ts"].data
        b = two.read().acquisition["ts"].data
        c = three.read().acquisition["linked"].data
        own = three.read().acquisition["ts"].data
        assert a == b == c and hash(a) == hash(c)
        assert own != a  # the derived file's own series is another array
