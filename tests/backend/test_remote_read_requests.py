"""What a remote ``read()`` fetches: the root, then one batch of the tiny arrays reading uses (table
columns and ids, texts); never one request per scalar, per cached specification or per TimeSeries."""

from __future__ import annotations

import numpy as np
from counting_store import CountingStore
from nwb_factories import small_nwbfile
from pynwb import TimeSeries
from writing import write_nwb
from zarr.storage import LocalStore

from hdmf_zarr3 import NWBZarrIO


class RemoteLikeStore(CountingStore):
    """No synchronous I/O, as an object store: the reader takes its remote path."""

    def _supports_sync_io(self) -> bool:
        return False


def _read(path):
    store = RemoteLikeStore(LocalStore(path, read_only=True))
    with NWBZarrIO(store, mode="r") as io:
        nwb = io.read()
        keys = list(store.keys)
        frames = {name: table.to_dataframe() for name, table in (("trials", nwb.trials), ("units", nwb.units))}
    return nwb, keys, frames


def test_requests_of_read_do_not_grow_with_the_number_of_time_series(tmp_path):
    counts = {}
    for series in (2, 30):
        nwb = small_nwbfile()
        for i in range(series):
            nwb.add_acquisition(TimeSeries(name=f"s{i}", data=np.arange(10.0), unit="V", rate=1.0))
        path = write_nwb(tmp_path / f"f{series}.nwb.zarr", nwb)
        _, keys, frames = _read(path)
        assert not [k for k in keys if k.startswith("acquisition/s")]  # their data waits until indexed
        assert all(len(frame) for frame in frames.values() if frame is not None)
        counts[series] = len(keys)
    assert counts[2] == counts[30]


def test_table_columns_are_fetched_ahead_with_read(tmp_path):
    path = write_nwb(tmp_path / "f.nwb.zarr")
    _, keys, _ = _read(path)
    assert any(k.startswith("intervals/trials/") for k in keys)  # in read()'s one batch
