"""Thread pools belong to their io (or worker, or call) and end with it: no thread outlives a closed io."""

from __future__ import annotations

import multiprocessing
import os
import threading
import warnings

import numpy as np
import pytest
import zarr
from hdmf.backends.errors import UnsupportedOperation
from hdmf.build import DatasetBuilder, GroupBuilder
from hdmf.data_utils import DataChunkIterator

from hdmf_zarr3 import ZarrDataIO, ZarrIO
from hdmf_zarr3.storage.stores.pools import THREAD_PREFIX, WorkPools

FORK = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork on this platform")


def _ours() -> list[str]:
    return sorted(t.name for t in threading.enumerate() if t.name.startswith(THREAD_PREFIX))


def _write(path, values):
    stream = DataChunkIterator(data=iter(values), buffer_size=100)
    tree = GroupBuilder(
        "root",
        datasets={
            "direct": DatasetBuilder("direct", ZarrDataIO(values, chunks=(100, 8))),  # encoded on the io's pools
            "stream": DatasetBuilder("stream", stream),
        },
    )
    io = ZarrIO(path, mode="w")
    io.write_builder(tree)
    return io


def test_no_thread_outlives_a_closed_writer(tmp_path):
    values = np.arange(8000, dtype="int32").reshape(1000, 8)
    io = _write(tmp_path / "f.zarr", values)
    assert any(name.startswith(THREAD_PREFIX + "encode") for name in _ours())  # the pools were used
    io.close()
    assert _ours() == []
    with ZarrIO(tmp_path / "f.zarr", mode="r") as io:
        builder = io.read_builder()
        np.testing.assert_array_equal(builder["stream"].data[:], values)
        np.testing.assert_array_equal(builder["direct"].data[:], values)


def test_no_thread_outlives_a_closed_lazy_reader(tmp_path):
    values = np.arange(80000, dtype="int64").reshape(10000, 8)
    _write(tmp_path / "f.zarr", values).close()
    io = ZarrIO(tmp_path / "f.zarr", mode="r")
    data = io.read_builder()["direct"].data
    np.testing.assert_array_equal(data[100:9000], values[100:9000])  # decoded directly, on the io's pools
    assert any(name.startswith(THREAD_PREFIX + "encode") for name in _ours())
    io.close()
    assert _ours() == []
    with pytest.raises(UnsupportedOperation, match="closed Zarr file"):
        _ = io.pools


@pytest.mark.parametrize("scheduler", ["threads", "sync"])
def test_no_thread_outlives_a_closed_reader_of_dask_arrays(tmp_path, monkeypatch, scheduler):
    """The read tasks of ``read(dask=True)`` share their file's pools (issue #40), which end with it."""
    from writing import nwbfile_with, write_nwb

    from hdmf_zarr3 import NWBZarrIO
    from hdmf_zarr3.integrations import dask_arrays

    monkeypatch.setattr(dask_arrays, "DASK_FROM_BYTES", 0)
    values = np.arange(80000, dtype="int64").reshape(10000, 8)
    write_nwb(tmp_path / "f.nwb.zarr", nwbfile_with(ZarrDataIO(values, chunks=(1000, 8))))
    io = NWBZarrIO(tmp_path / "f.nwb.zarr", mode="r")
    data = io.read(dask=True).acquisition["x"].data
    assert data.numblocks[0] > 1
    np.testing.assert_array_equal(data[100:9000].compute(scheduler=scheduler), values[100:9000])
    assert any(name.startswith(THREAD_PREFIX + "encode") for name in _ours())
    io.close()
    assert _ours() == []


def test_pools_refuse_work_once_closed():
    pools = WorkPools(2)
    assert pools.encoders.submit(lambda: 7).result() == 7
    pools.close()
    with pytest.raises(RuntimeError, match="shut down"):
        _ = pools.encoders


def _use(pools: WorkPools) -> None:
    assert pools.encoders.submit(lambda: 7).result(timeout=30) == 7
    pools.close()


@FORK
def test_a_forked_child_gets_pools_of_its_own():
    """A child forked while the pools have threads inherits them without threads: its work would wait forever."""
    pools = WorkPools(2)
    for future in [pools.encoders.submit(lambda: 1) for _ in range(8)]:
        future.result()  # both threads started, in the parent
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # (fork of a process with threads)
        child = multiprocessing.get_context("fork").Process(target=_use, args=(pools,))
        child.start()
    child.join(60)
    assert child.exitcode == 0
    assert pools.encoders.submit(lambda: 8).result() == 8  # the parent's pools are untouched
    pools.close()


def test_the_encoder_pool_takes_zarrs_max_workers():
    assert WorkPools().encoder_threads == max(2, os.cpu_count() or 2)
    with zarr.config.set({"threading.max_workers": 3}):
        assert WorkPools().encoder_threads == 3
    assert WorkPools(5).encoder_threads == 5
