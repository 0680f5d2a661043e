"""File modes mean what they mean for HDF5IO; 'a' and 'r+' append containers and rows."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hdmf.backends.errors import UnsupportedOperation
from hdmf.testing import TestCase
from nwb_factories import small_nwbfile
from pynwb import TimeSeries
from writing import write_nwb

from hdmf_zarr3 import ModeError, NWBZarrIO


@pytest.mark.parametrize("mode", ["r", "r+"])
def test_missing_file_in_read_modes(tmp_path, mode):
    with pytest.raises(UnsupportedOperation, match="does not exist"):
        NWBZarrIO(tmp_path / "missing.zarr", mode=mode)


@pytest.mark.parametrize("mode", ["w-", "x"])
def test_exclusive_create_refuses_existing(tmp_path, mode):
    write_nwb(tmp_path / "f.zarr")
    with pytest.raises(UnsupportedOperation, match="already exists"):
        NWBZarrIO(tmp_path / "f.zarr", mode=mode)
    with NWBZarrIO(tmp_path / "new.zarr", mode=mode) as io:
        io.write(small_nwbfile())
    with NWBZarrIO(tmp_path / "new.zarr", mode="r") as io:
        assert io.read().identifier == "TEST123"


def test_w_replaces_existing_content(tmp_path):
    write_nwb(tmp_path / "f.zarr")
    nwb = small_nwbfile()
    nwb.add_acquisition(TimeSeries(name="other", data=[1.0, 2.0], unit="s", rate=1.0))
    del nwb.acquisition["ts"]  # a different file entirely
    with NWBZarrIO(tmp_path / "f.zarr", mode="w") as io:
        io.write(nwb)
    assert not (tmp_path / "f.zarr" / "acquisition" / "ts").exists()
    with NWBZarrIO(tmp_path / "f.zarr", mode="r") as io:
        assert set(io.read().acquisition) == {"other"}


def test_read_and_write_are_refused_in_the_wrong_mode(tmp_path):
    write_nwb(tmp_path / "f.zarr")
    with NWBZarrIO(tmp_path / "f.zarr", mode="r") as io:
        with pytest.raises(UnsupportedOperation, match="mode 'r'"):
            io.write(small_nwbfile())
        nwb = io.read()
        with pytest.raises(ModeError, match="/acquisition/ts/data"):
            nwb.acquisition["ts"].data.append(1.0)
    with NWBZarrIO(tmp_path / "g.zarr", mode="w") as io:
        with pytest.raises(UnsupportedOperation, match="Cannot read"):
            io.read()


def test_a_creates_a_missing_file(tmp_path):
    with NWBZarrIO(tmp_path / "f.zarr", mode="a") as io:
        io.write(small_nwbfile())
    with NWBZarrIO(tmp_path / "f.zarr", mode="r") as io:
        assert io.read().identifier == "TEST123"


@pytest.mark.parametrize("mode", ["a", "r+"])
def test_append_new_containers(tmp_path, mode):
    write_nwb(tmp_path / "f.zarr")
    with NWBZarrIO(tmp_path / "f.zarr", mode=mode) as io:
        nwb = io.read()
        nwb.add_acquisition(TimeSeries(name="added", data=np.arange(5, dtype="int16"), unit="V", rate=2.0))
        io.write(nwb)
    expected = small_nwbfile()
    with NWBZarrIO(tmp_path / "f.zarr", mode="r") as io:
        nwb = io.read()
        assert set(nwb.acquisition) == {"ts", "added"}
        assert nwb.acquisition["added"].data[:].dtype == np.int16
        TestCase().assertContainerEqual(nwb.acquisition["ts"], expected.acquisition["ts"], ignore_hdmf_attrs=True)


def test_append_rows_to_existing_tables(tmp_path):
    write_nwb(tmp_path / "f.zarr")
    with NWBZarrIO(tmp_path / "f.zarr", mode="a") as io:
        nwb = io.read()
        nwb.add_trial(start_time=2.0, stop_time=3.0)
        nwb.add_unit(spike_times=[7.0, 8.0], quality="good")
        io.write(nwb)
    with NWBZarrIO(tmp_path / "f.zarr", mode="r") as io:
        nwb = io.read()
        trials = nwb.trials.to_dataframe()
        assert trials["start_time"].tolist() == [0.0, 1.0, 2.0]
        units = nwb.units.to_dataframe()
        assert [list(s) for s in units["spike_times"]] == [[0.1, 0.2, 0.3], [1.5], [7.0, 8.0]]
        assert units["quality"].tolist() == ["good", "noise", "good"]
        assert list(nwb.units.id[:]) == [0, 1, 2]


def test_an_error_inside_with_undoes_rows_appended_without_write(tmp_path):
    write_nwb(tmp_path / "f.zarr")
    before = {p.relative_to(tmp_path): p.read_bytes() for p in (tmp_path / "f.zarr").rglob("*") if p.is_file()}
    with pytest.raises(RuntimeError, match="before write"), NWBZarrIO(tmp_path / "f.zarr", mode="a") as io:
        nwb = io.read()
        nwb.add_trial(start_time=2.0, stop_time=3.0)  # stored at once: the table's datasets grow
        raise RuntimeError("crash before write")
    after = {p.relative_to(tmp_path): p.read_bytes() for p in (tmp_path / "f.zarr").rglob("*") if p.is_file()}
    assert after == before
    with NWBZarrIO(tmp_path / "f.zarr", mode="r") as io:
        assert io.read().trials["start_time"][:].tolist() == [0.0, 1.0]


def test_append_to_a_dataset_directly(tmp_path):
    write_nwb(tmp_path / "f.zarr")
    with NWBZarrIO(tmp_path / "f.zarr", mode="r+") as io:
        data = io.read().acquisition["ts"].data
        data.append(1000.0)
        data.extend([1001.0, 1002.0])
        assert len(data) == 1003
    with NWBZarrIO(tmp_path / "f.zarr", mode="r") as io:
        data = io.read().acquisition["ts"].data
        assert len(data) == 1003 and data[-1] == 1002.0


def test_creating_a_file_not_named_zarr_warns(tmp_path):
    with pytest.warns(UserWarning, match=r"\.nwb\.zarr"):
        with NWBZarrIO(tmp_path / "f.nwb", mode="w") as io:
            io.write(small_nwbfile())
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with NWBZarrIO(tmp_path / "f.nwb", mode="r") as io:  # no warning on read
            io.read()


def test_read_nwb_static_method(tmp_path):
    write_nwb(tmp_path / "f.nwb.zarr")
    nwb = NWBZarrIO.read_nwb(path=tmp_path / "f.nwb.zarr")
    assert nwb.identifier == "TEST123"
    nwb.get_read_io().close()


def _file_bytes(path):
    return {p.relative_to(path): p.read_bytes() for p in path.rglob("*") if p.is_file() and p.name != "hdmf_zarr3.lock"}


def test_rows_added_in_a_loop_are_stored_once_by_the_write(tmp_path):
    """Each add_row used to rewrite the last chunk and the document of every column at once (a store
    round per column and row); the rows are now held until write() and read as if stored meanwhile."""
    from counting_store import CountingStore
    from zarr.storage import LocalStore

    write_nwb(tmp_path / "f.zarr")
    before = _file_bytes(tmp_path / "f.zarr")
    store = CountingStore(LocalStore(tmp_path / "f.zarr"))
    with NWBZarrIO(store, mode="a") as io:
        nwb = io.read()
        for i in range(20):
            nwb.add_trial(start_time=2.0 + i, stop_time=2.5 + i)
        assert not store.sets and _file_bytes(tmp_path / "f.zarr") == before  # nothing stored yet
        assert len(nwb.trials) == 22 and nwb.trials.id[:].tolist() == list(range(22))
        assert nwb.trials["start_time"][5] == 5.0  # row 5 (2.0 + 3): the read stores the rows first
        nwb.add_trial(start_time=100.0, stop_time=101.0)  # and appending goes on after a read
        io.write(nwb)
        chunk_sets = {k: n for k, n in store.sets.items() if "/trials/start_time/c" in k}
        assert chunk_sets and max(chunk_sets.values()) <= 2  # the read above, then the write: not per row
    with NWBZarrIO(tmp_path / "f.zarr", mode="r") as io:
        start = io.read().trials["start_time"][:].tolist()
    assert start == [0.0, 1.0] + [2.0 + i for i in range(20)] + [100.0]


def test_rows_appended_and_closed_without_write_are_stored(tmp_path):
    """As with h5py, rows appended to a dataset read from the file are kept by a close without write()."""
    write_nwb(tmp_path / "f.zarr")
    with NWBZarrIO(tmp_path / "f.zarr", mode="a") as io:
        data = io.read().acquisition["ts"].data
        for v in range(5):
            data.append(float(v))
        assert data[1000:1005].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
        data.append(5.0)
    with NWBZarrIO(tmp_path / "f.zarr", mode="r") as io:
        assert io.read().acquisition["ts"].data[-6:].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_rows_of_a_wrong_shape_are_refused_at_the_append(tmp_path):
    write_nwb(tmp_path / "f.zarr")
    with NWBZarrIO(tmp_path / "f.zarr", mode="a") as io:
        data = io.read().acquisition["ts"].data
        with pytest.raises(ValueError, match="shape"):
            data.extend(np.zeros((2, 3)))
        assert len(data) == 1000


def test_held_rows_are_stored_once_they_reach_the_bound_so_memory_stays_bounded(tmp_path, monkeypatch):
    """A long stream of appends before any write() does not grow memory without bound: past
    HELD_BYTES a dataset's held rows are stored (uncommitted; the close commits them)."""
    from hdmf_zarr3.backend.datasets import changes as dataset_changes

    monkeypatch.setattr(dataset_changes, "HELD_BYTES", 10 * 8)  # ten float64 samples
    write_nwb(tmp_path / "f.zarr")
    doc = tmp_path / "f.zarr" / "acquisition" / "ts" / "data" / "zarr.json"
    with NWBZarrIO(tmp_path / "f.zarr", mode="a") as io:
        data = io.read().acquisition["ts"].data
        for v in range(9):
            data.append(float(v))
        assert json.loads(doc.read_text())["shape"] == [1000]  # held
        data.append(9.0)  # the tenth: stored at once
        assert json.loads(doc.read_text())["shape"] == [1010] and data.appended_count == 0
        data.append(10.0)
        assert len(data) == 1011
    with NWBZarrIO(tmp_path / "f.zarr", mode="r") as io:
        assert io.read().acquisition["ts"].data[1000:].tolist() == [float(v) for v in range(11)]


def test_rows_appended_to_sharded_and_unsharded_arrays_in_one_write(tmp_path):
    """One write stores rows held by arrays our row appender takes (unsharded) and by arrays zarr appends
    to (sharded), each with its rows and no other's; any Zarr v3 reader sees the new shapes."""
    import zarr

    from hdmf_zarr3 import ZarrDataIO

    nwb = small_nwbfile(2)
    values = np.arange(40, dtype="f8")
    nwb.add_acquisition(TimeSeries(name="plain", data=values, unit="V", rate=1.0))
    nwb.add_acquisition(
        TimeSeries(name="sharded", data=ZarrDataIO(values, chunks=(4,), shards=(8,)), unit="V", rate=1.0)
    )
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="w") as io:
        io.write(nwb)
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="a") as io:
        read = io.read()
        for name, start in (("plain", 100.0), ("sharded", 200.0)):
            read.acquisition[name].data.extend(np.arange(start, start + 13))
        io.write(read)
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="r") as io:
        read = io.read()
        for name, start in (("plain", 100.0), ("sharded", 200.0)):
            expected = np.concatenate([values, np.arange(start, start + 13)])
            np.testing.assert_array_equal(read.acquisition[name].data[:], expected)
    group = zarr.open_group(tmp_path / "f.nwb.zarr", mode="r")
    assert group["acquisition/sharded/data"].shards == (8,)
    assert group["acquisition/plain/data"].shape == group["acquisition/sharded/data"].shape == (53,)


# --- issue #38: an index outgrowing its integer type -------------------------------------------------------
def _spikes(n):
    return np.linspace(0.0, 1.0, n)


@pytest.mark.parametrize(
    ("where", "spikes", "wider"), [("f.nwb.zarr", 300, "uint16"), ("f.nwb.zarr.zip", 300, "uint16")]
)
def test_an_append_past_a_ragged_indexs_type_widens_the_index(tmp_path, where, spikes, wider):
    """HDMF widens an index in memory (``uint8`` holds 255) but raised ``ValueError`` for one read from a file,
    after the spikes were appended and before the index was (a later write stored columns of different
    lengths). The stored index is widened first (its document and every chunk rewritten, journaled); a file
    whose index holds more than 255 then takes more rows without widening again."""
    from hdmf_zarr3 import validate

    path = write_nwb(tmp_path / where)
    with NWBZarrIO(path, mode="a") as io:
        nwb = io.read()
        assert nwb.units.spike_times_index.data.dtype == np.uint8
        nwb.add_unit(spike_times=_spikes(spikes), quality="many")
        io.write(nwb)
    with NWBZarrIO(path, mode="a") as io:  # past 255 already: HDMF's own check raised here too
        nwb = io.read()
        nwb.add_unit(spike_times=[2.0], quality="one")
        io.write(nwb)
    with NWBZarrIO(path, mode="r") as io:
        units = io.read().units
        assert units.spike_times_index.data.dtype == np.dtype(wider)
        assert units.spike_times_index.data[:].tolist() == [3, 4, 4 + spikes, 5 + spikes]
        frame = units.to_dataframe()
        assert [len(s) for s in frame["spike_times"]] == [3, 1, spikes, 1]
        assert frame["quality"].tolist() == ["good", "noise", "many", "one"]
    assert not validate(str(path)).problems


@pytest.mark.parametrize(("value", "wider"), [(255, "uint8"), (256, "uint16"), (70_000, "uint32"), (2**40, "uint64")])
def test_an_index_is_widened_to_the_narrowest_type_holding_the_value(tmp_path, value, wider):
    """(Without appending 70,000 spikes: the spike column of the small file has 4-element chunks.)"""
    path = write_nwb(tmp_path / "f.nwb.zarr")
    with NWBZarrIO(path, mode="a") as io:
        index = io.read().units.spike_times_index.data
        index.widen_to_hold(value)
        assert index.dtype == np.dtype(wider) and index[:].tolist() == [3, 4]
    with NWBZarrIO(path, mode="r") as io:
        index = io.read().units.spike_times_index.data
        assert index.dtype == np.dtype(wider) and index[:].tolist() == [3, 4]
        blosc = [c for c in index.stored_document["codecs"] if c["name"] == "blosc"]
        assert blosc[0]["configuration"]["typesize"] == np.dtype(wider).itemsize


def test_a_widened_index_is_undone_with_the_rows_by_an_error(tmp_path):
    path = write_nwb(tmp_path / "f.nwb.zarr")
    before = _file_bytes(path)
    with pytest.raises(RuntimeError, match="before write"), NWBZarrIO(path, mode="a") as io:
        nwb = io.read()
        nwb.add_unit(spike_times=_spikes(300), quality="many")
        nwb.units.spike_times_index.data[:]  # (read: the widened array is stored already)
        raise RuntimeError("crash before write")
    assert _file_bytes(path) == before
    with NWBZarrIO(path, mode="r") as io:
        assert io.read().units.spike_times_index.data.dtype == np.uint8


def test_an_index_that_cannot_be_widened_is_a_typed_error_naming_it(tmp_path):
    """No integer type holds the index: ``UnsupportedDataError`` naming the array, nothing changed (the shim
    asks before it appends the spikes, so the table's columns keep their lengths)."""
    from hdmf_zarr3 import UnsupportedDataError

    path = write_nwb(tmp_path / "f.nwb.zarr")
    before = _file_bytes(path)
    with NWBZarrIO(path, mode="a") as io:
        nwb = io.read()
        data = nwb.units.spike_times_index.data
        with pytest.raises(UnsupportedDataError, match="cannot store the index 18446744073709551616") as raised:
            data.widen_to_hold(2**64)
        assert raised.value.path == "/units/spike_times_index"
        assert len(nwb.units.spike_times.data) == 4
    assert _file_bytes(path) == before


def test_both_indexes_of_a_doubly_ragged_column_are_widened(tmp_path):
    """``Units.waveforms``: its index (one entry per spike) and the index of that index (one per unit) each
    widened when its own values pass ``uint8``."""
    import datetime

    from pynwb import NWBFile

    nwb = NWBFile(
        session_description="s", identifier="i", session_start_time=datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
    )
    nwb.add_unit(spike_times=[0.1, 0.2], waveforms=[[[1.0, 2.0]], [[3.0, 4.0]]])
    path = write_nwb(tmp_path / "f.nwb.zarr", nwb)
    with NWBZarrIO(path, mode="a") as io:
        nwb = io.read()
        nwb.add_unit(spike_times=_spikes(300), waveforms=[[[float(i), 0.0]] for i in range(300)])
        io.write(nwb)
    with NWBZarrIO(path, mode="r") as io:
        units = io.read().units
        assert units.waveforms_index.data.dtype == units.waveforms_index_index.data.dtype == np.uint16
        assert units.waveforms_index_index.data[:].tolist() == [2, 302]
        assert units.waveforms_index.data[-2:].tolist() == [301, 302]
        assert np.asarray(units["waveforms"][1]).shape == (300, 1, 2)
