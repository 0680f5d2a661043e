"""icechunk: a file written in a session is committed as one transaction; snapshots stay readable."""

from __future__ import annotations

import numpy as np
import pytest
from hdmf.backends.errors import UnsupportedOperation
from hdmf.build import DatasetBuilder, GroupBuilder
from nwb_factories import small_nwbfile
from parallel_iterators import ArrayIterator
from pynwb import TimeSeries

from hdmf_zarr3 import NWBZarrIO, ParallelWriteWarning, ZarrIO

icechunk = pytest.importorskip("icechunk")


def _repo(tmp_path):
    return icechunk.Repository.create(icechunk.local_filesystem_storage(str(tmp_path / "repo")))


def test_a_file_appears_only_when_its_session_commits(tmp_path):
    repo = _repo(tmp_path)
    session = repo.writable_session("main")
    with NWBZarrIO(session.store, mode="w") as io:
        io.write(small_nwbfile())
        with pytest.raises(UnsupportedOperation, match="no Zarr group found"):  # a reader sees nothing yet
            NWBZarrIO(repo.readonly_session(branch="main").store, mode="r")
    session.commit("write the session")
    with NWBZarrIO(repo.readonly_session(branch="main").store, mode="r") as io:
        assert np.array_equal(io.read().acquisition["ts"].data[:], np.arange(1000.0))


def test_older_snapshots_stay_readable_after_an_append(tmp_path):
    repo = _repo(tmp_path)
    session = repo.writable_session("main")
    with NWBZarrIO(session.store, mode="w") as io:
        io.write(small_nwbfile())
    first = session.commit("v1")
    session = repo.writable_session("main")
    with NWBZarrIO(session.store, mode="a") as io:
        nwb = io.read()
        nwb.add_acquisition(TimeSeries(name="later", data=[1.0, 2.0], unit="s", rate=1.0))
        io.write(nwb)
    session.commit("v2")
    with NWBZarrIO(repo.readonly_session(snapshot_id=first).store, mode="r") as io:
        assert sorted(io.read().acquisition) == ["ts"]
    with NWBZarrIO(repo.readonly_session(branch="main").store, mode="r") as io:
        assert sorted(io.read().acquisition) == ["later", "ts"]


def test_parallel_writes_to_a_session_are_serial_with_a_warning(tmp_path):
    session = _repo(tmp_path).writable_session("main")
    iterator = ArrayIterator(np.arange(20), chunk_shape=(5,), buffer_shape=(5,))
    with (
        pytest.warns(ParallelWriteWarning, match="which another process cannot reopen: /d"),
        ZarrIO(session.store, mode="w") as io,
    ):
        io.write_builder(GroupBuilder("root", datasets={"d": DatasetBuilder("d", iterator)}), number_of_jobs=2)
    with ZarrIO(session.store, mode="r") as io:
        assert np.array_equal(io.read_builder()["d"].data[:], np.arange(20))


def test_deep_arrays_take_nested_chunk_keys_in_icechunk(tmp_path):
    """The DANDI depth rule picks flat keys ("c.0.0") for arrays deeper than 7 levels, but icechunk
    accepts only "/"-separated chunk keys: an icechunk store always gets nested keys."""
    from dandi_ready import deep_lfp_tree

    from hdmf_zarr3 import StoreError

    repo = _repo(tmp_path)
    session = repo.writable_session("main")
    tree = deep_lfp_tree()
    data = tree["processing/ecephys/LFP/ElectricalSeries/data"].data
    with ZarrIO(session.store, mode="w") as io:
        io.write_builder(tree)
    session.commit("deep")
    with ZarrIO(repo.readonly_session(branch="main").store, mode="r") as io:
        found = io.read_builder()["processing/ecephys/LFP/ElectricalSeries/data"]
        assert found.data.document["chunk_key_encoding"]["configuration"]["separator"] == "/"
        np.testing.assert_array_equal(found.data[:], data)
    with pytest.raises(StoreError, match="icechunk"):  # asked for explicitly: refused, with the reason
        ZarrIO(repo.writable_session("main").store, mode="w", chunk_key_separator=".").write_builder(deep_lfp_tree())
