"""Data handed over as DataChunkIterators or wrapped in H5DataIO is written in full."""

from __future__ import annotations

import numpy as np
from hdmf.backends.hdf5 import H5DataIO
from hdmf.data_utils import DataChunkIterator
from nwb_factories import small_nwbfile
from pynwb import NWBHDF5IO, TimeSeries

from hdmf_zarr3 import NWBZarrIO


def test_data_chunk_iterator_is_streamed(tmp_path):
    nwb = small_nwbfile()
    rows = (np.full(4, i, dtype="int32") for i in range(1000))
    nwb.add_acquisition(TimeSeries(name="streamed", data=DataChunkIterator(rows, buffer_size=64), unit="V", rate=1.0))
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="w") as io:
        io.write(nwb)
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="r") as io:
        data = io.read().acquisition["streamed"].data
        assert data.shape == (1000, 4) and data.dtype == np.int32
        assert np.array_equal(data[:, 0], np.arange(1000)) and np.array_equal(data[999], [999] * 4)


def test_h5dataio_chunks_are_honoured(tmp_path):
    nwb = small_nwbfile()
    nwb.add_acquisition(
        TimeSeries(
            name="wrapped", data=H5DataIO(np.arange(100.0), chunks=(10,), compression="gzip"), unit="V", rate=1.0
        )
    )
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="w") as io:
        io.write(nwb)
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="r") as io:
        data = io.read().acquisition["wrapped"].data
        assert data.chunks == (10,) and np.array_equal(data[:], np.arange(100.0))


def test_export_from_hdf5_with_default_write_args_copies_data(tmp_path):
    with NWBHDF5IO(tmp_path / "a.nwb", mode="w") as io:
        io.write(small_nwbfile())
    with NWBHDF5IO(tmp_path / "a.nwb", mode="r") as src:
        NWBZarrIO.export_io(path=tmp_path / "b.nwb.zarr", src_io=src)
    (tmp_path / "a.nwb").unlink()  # nothing may still point into the HDF5 file
    with NWBZarrIO(tmp_path / "b.nwb.zarr", mode="r") as io:
        nwb = io.read()
        assert np.array_equal(nwb.acquisition["ts"].data[:], np.arange(1000.0))
        assert [list(s) for s in nwb.units.to_dataframe()["spike_times"]] == [[0.1, 0.2, 0.3], [1.5]]
