"""The root ``zarr.json`` is stored twice per write: marked incomplete when the first change begins
(with the new root's attributes), and complete (consolidated) by the commit; nothing in between."""

from __future__ import annotations

from counting_store import CountingStore
from pynwb.testing.mock.base import mock_TimeSeries
from pynwb.testing.mock.file import mock_NWBFile
from zarr.storage import LocalStore

from hdmf_zarr3 import NWBZarrIO


def _nwbfile():
    nwbfile = mock_NWBFile()
    nwbfile.add_acquisition(mock_TimeSeries())
    return nwbfile


def test_a_write_stores_the_root_once_besides_its_incomplete_mark(tmp_path):
    store = CountingStore(LocalStore(tmp_path / "f.nwb.zarr"))
    with NWBZarrIO(store, mode="w") as io:
        io.write(_nwbfile())
    assert store.sets["zarr.json"] == 2
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="r") as io:
        assert io.read().acquisition["TimeSeries"].data.shape == (4,)  # the cached specs are found, too


def test_an_append_stores_the_root_once_besides_its_incomplete_mark(tmp_path):
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="w") as io:
        io.write(_nwbfile())
    store = CountingStore(LocalStore(tmp_path / "f.nwb.zarr"))
    with NWBZarrIO(store, mode="a") as io:
        nwbfile = io.read()
        nwbfile.add_trial(start_time=0.0, stop_time=1.0)
        io.write(nwbfile)
    assert store.sets["zarr.json"] == 2
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="r") as io:
        assert len(io.read().trials) == 1
