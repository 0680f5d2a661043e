"""Dask: dask arrays written in parallel one task per shard; read(dask=True) hands out dask arrays."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest
from counting_store import CountingStore
from writing import nwbfile_with, write_nwb
from zarr.storage import LocalStore

from hdmf_zarr3 import ClosedFileError, NWBZarrIO, ZarrDataIO
from hdmf_zarr3.integrations import dask_arrays
from hdmf_zarr3.storage.stores import RecycledMemory, recycled_memory

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
VALUES = np.arange(1000 * 96, dtype="int16").reshape(1000, 96)


def test_dask_array_is_written_one_task_per_shard(tmp_path, monkeypatch):
    tasks = []
    setitem = dask_arrays.UnitTarget.__setitem__
    monkeypatch.setattr(
        dask_arrays.UnitTarget, "__setitem__", lambda self, r, v: (tasks.append(r), setitem(self, r, v))
    )
    store = CountingStore(LocalStore(tmp_path / "f.nwb.zarr"))
    data = da.from_array(VALUES, chunks=(333, 50))  # blocks that straddle every shard
    write_nwb(store, nwbfile_with(ZarrDataIO(data, chunks=(100, 32), shards=(400, 96))))
    assert sorted((r[0].start, r[0].stop) for r in tasks) == [(0, 400), (400, 800), (800, 1000)]
    shard_keys = [k for k in store.sets if k.startswith("acquisition/x/data/c/")]
    assert len(shard_keys) == 3 and all(store.sets[k] == 1 for k in shard_keys)
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="r") as io:
        np.testing.assert_array_equal(io.read().acquisition["x"].data[:], VALUES)


def test_read_with_dask_gives_dask_arrays_for_large_datasets(tmp_path, monkeypatch):
    monkeypatch.setattr(dask_arrays, "DASK_FROM_BYTES", 100_000)
    write_nwb(tmp_path / "f.nwb.zarr", nwbfile_with(ZarrDataIO(VALUES, chunks=(100, 32), shards=(400, 96))))
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="r") as io:
        nwb = io.read(dask=True)
        data = nwb.acquisition["x"].data
        assert isinstance(data, da.Array) and data.chunks[0] == (400, 400, 200)
        np.testing.assert_array_equal(data[:, 5].compute(), VALUES[:, 5])
        assert isinstance(nwb.acquisition["ts"].data, np.ndarray) or not isinstance(
            nwb.acquisition["ts"].data, da.Array
        )  # small: lazy


@pytest.mark.parametrize(
    ("chunks", "shards", "row_bytes", "blocks"),
    [
        ((100, 32), None, 2**20, (100, 96)),  # unsharded: a block takes a row of chunks (3 of them)
        ((100, 32), None, 100 * 64 * 2, (100, 32)),  # a whole row would exceed the bound: one chunk
        ((100, 32), (400, 96), 2**20, (400, 96)),  # shards already span the rows
        ((100, 32), (200, 64), 2**20, (200, 96)),  # a row of shards (the edge one narrower)
    ],
)
def test_dask_blocks_are_whole_rows_of_units_and_read_what_the_lazy_dataset_reads(
    tmp_path, monkeypatch, chunks, shards, row_bytes, blocks
):
    """Computing a selection concatenates its blocks: blocks of whole rows are copied as contiguous runs
    (issue #40). Before, an unsharded array's blocks were its chunks, (100, 32)."""
    monkeypatch.setattr(dask_arrays, "DASK_FROM_BYTES", 100_000)
    monkeypatch.setattr(dask_arrays, "ROW_BLOCK_BYTES", row_bytes)
    write_nwb(tmp_path / "f.nwb.zarr", nwbfile_with(ZarrDataIO(VALUES, chunks=chunks, shards=shards)))
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="r") as io, NWBZarrIO(tmp_path / "f.nwb.zarr", mode="r") as lazy_io:
        data = io.read(dask=True).acquisition["x"].data
        lazy = lazy_io.read().acquisition["x"].data
        assert isinstance(data, da.Array) and data.chunksize == blocks
        for key in [slice(None), slice(150, 733), (slice(None), 5), (slice(3, 998, 7), slice(90, 10, -3)), -1]:
            np.testing.assert_array_equal(data[key].compute(), lazy[key])
            np.testing.assert_array_equal(data[key].compute(), VALUES[key])


def test_read_tasks_of_a_file_decode_on_one_set_of_pools_ended_with_it(tmp_path, monkeypatch):
    """Tasks running at once on pools of their own started and joined threads for every block, and decoded on
    more threads than cores (issue #40): before, this read made one set of pools per block, 10 here. The set
    is the file's: its threads end when the file is closed (as every io's, tests/storage/test_pools.py)."""
    from hdmf_zarr3.storage.safety import open_files
    from hdmf_zarr3.storage.stores.pools import THREAD_PREFIX

    made = []

    class CountedPools(open_files.WorkPools):
        def __init__(self, *args, **kwargs):
            made.append(self)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(open_files, "WorkPools", CountedPools)
    monkeypatch.setattr(dask_arrays, "DASK_FROM_BYTES", 100_000)
    write_nwb(tmp_path / "f.nwb.zarr", nwbfile_with(ZarrDataIO(VALUES, chunks=(100, 96), shards=None)))
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="r") as io:
        data = io.read(dask=True).acquisition["x"].data
        assert data.numblocks == (10, 1)
        np.testing.assert_array_equal(data.compute(), VALUES)
        np.testing.assert_array_equal(data[::3, 7].compute(scheduler="threads"), VALUES[::3, 7])
    assert len(made) == 1
    assert not [t.name for t in threading.enumerate() if t.name.startswith(THREAD_PREFIX)]


WHOLE = {
    "compute()": lambda data: data.compute(),
    "[:].compute()": lambda data: data[:].compute(),
    "dask.compute": lambda data: dask.compute(data)[0],
    "sync scheduler": lambda data: data.compute(scheduler="sync"),
    "processes": lambda data: data.compute(scheduler="processes", num_workers=2),
}


@pytest.mark.parametrize("how", list(WHOLE), ids=list(WHOLE))
def test_a_dataset_or_a_selection_computed_is_made_with_the_memory_blocks_and_results_give_back(
    tmp_path, monkeypatch, how
):
    """Every block and every whole result was new memory, whose pages cost a fault each, and far more on a
    virtual machine whose host takes free memory back (issue #40): a whole read through dask took 2-4x the
    limit here. Blocks and a dataset computed whole are now made with the file's recycled memory (in this
    process; what other processes read and join is theirs). The reuse itself: tests/storage/test_recycled_memory.py."""
    asked: list[tuple[int, ...]] = []
    empty = RecycledMemory.empty
    monkeypatch.setattr(
        RecycledMemory, "empty", lambda self, shape, dtype: (asked.append(shape), empty(self, shape, dtype))[1]
    )
    monkeypatch.setattr(dask_arrays, "DASK_FROM_BYTES", 100_000)
    write_nwb(tmp_path / "f.nwb.zarr", nwbfile_with(ZarrDataIO(VALUES, chunks=(100, 32), shards=(400, 96))))
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="r") as io:
        data = io.read(dask=True).acquisition["x"].data
        for _ in range(2):
            np.testing.assert_array_equal(WHOLE[how](data), VALUES)
        whole_computes = sorted(shape for shape in asked if all(shape))  # (dask's meta asks (0, 0))
        asked.clear()
        np.testing.assert_array_equal(WHOLE[how](data[100:900]), VALUES[100:900])  # a selection of it
        assert not isinstance((data + 1)[100:900], type(data))  # made from it otherwise: plain dask
    # with processes, blocks are read and joined in the workers: memory of their own; a dataset or a box of it
    # computed with dask's default scheduling is read at once, into its result (test_direct_computation.py)
    expected = {"processes": [], "compute()": 2 * [(1000, 96)], "[:].compute()": 2 * [(1000, 96)]}
    assert whole_computes == sorted(expected.get(how, 2 * [(400, 96), (400, 96), (200, 96), (1000, 96)]))
    derived = sorted(shape for shape in asked if all(shape))
    joined = [(800, 96), (800, 96)]  # one task reads it, then joined
    assert derived == {"processes": [], "compute()": [(800, 96)], "[:].compute()": [(800, 96)]}.get(how, joined)


BOXES = {
    "rows": (slice(150, 733), (583, 96)),
    "rows and channels": ((slice(399, 401), slice(5, 90)), (2, 85)),
    "negative bounds": ((slice(-700, -3), slice(-50, None)), (697, 50)),
    "a row kept 2-d": (slice(7, 8), (1, 96)),
    "past the end": (slice(900, 5000), (100, 96)),
}
#: Selections read through the dataset's blocks: integers, steps, fancy keys, the whole array, or more bytes
#: than a block holds.
NOT_BOXES = [(slice(None), 5), 7, slice(3, 998, 7), [1, 5, 900], slice(None), (slice(None), slice(None)), slice(0, 999)]


@pytest.mark.parametrize("name", list(BOXES), ids=list(BOXES))
def test_a_box_of_a_dataset_within_a_block_is_read_by_one_task(tmp_path, monkeypatch, name):
    """Its blocks' tasks each read a part and dask joined them (issue #40: a 1 s window crossing two blocks
    took 27 ms through dask against 19 through the lazy dataset); now one task reads the box, as the lazy
    dataset does, and selections of the selection still read only what they need."""
    monkeypatch.setattr(dask_arrays, "DASK_FROM_BYTES", 100_000)
    monkeypatch.setattr(dask_arrays, "ROW_BLOCK_BYTES", 800 * 96 * 2)
    key, shape = BOXES[name]
    write_nwb(tmp_path / "f.nwb.zarr", nwbfile_with(ZarrDataIO(VALUES, chunks=(100, 32), shards=None)))
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="r") as io:
        data = io.read(dask=True).acquisition["x"].data
        assert data.numblocks == (10, 1)
        box = data[key]
        assert box.shape == shape and box.numblocks == (1, 1) and bool(box) and "-box-" in box.name
        np.testing.assert_array_equal(box.compute(), VALUES[key])
        np.testing.assert_array_equal(box[1:, ::2].compute(), VALUES[key][1:, ::2])
        np.testing.assert_array_equal(
            (box.astype("int64") + 1).sum().compute(), (VALUES[key].astype("int64") + 1).sum()
        )
        for other in NOT_BOXES:
            selected = data[other]
            assert "-box-" not in selected.name  # through the dataset's blocks
            np.testing.assert_array_equal(np.asarray(selected.compute()), VALUES[other])


def test_making_a_dask_array_or_a_selection_reads_nothing(tmp_path, monkeypatch):
    """dask read an empty selection of the store to learn an array's type (a request, on S3)."""
    monkeypatch.setattr(dask_arrays, "DASK_FROM_BYTES", 100_000)
    write_nwb(tmp_path / "f.nwb.zarr", nwbfile_with(ZarrDataIO(VALUES, chunks=(100, 32), shards=(400, 96))))
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="r") as io:
        nwb = io.read(dask=True)
        reads = []
        getitem = dask_arrays.UnitSource.__getitem__
        monkeypatch.setattr(
            dask_arrays.UnitSource, "__getitem__", lambda self, key: (reads.append(key), getitem(self, key))[1]
        )
        data = nwb.acquisition["x"].data
        selections = [data[10:20], data[:, 3], data[::2], data[5:900][3:7]]
        assert reads == [] and all(s.dtype == VALUES.dtype for s in selections)


def test_the_memory_a_file_keeps_for_reuse_goes_when_it_closes(tmp_path, monkeypatch):
    kept: list[RecycledMemory] = []
    made = RecycledMemory.__init__
    monkeypatch.setattr(RecycledMemory, "__init__", lambda self, *a: (kept.append(self), made(self, *a))[1])
    monkeypatch.setattr(recycled_memory, "SMALLEST", 0)  # this file's blocks are small
    monkeypatch.setattr(dask_arrays, "DASK_FROM_BYTES", 100_000)
    write_nwb(tmp_path / "f.nwb.zarr", nwbfile_with(ZarrDataIO(VALUES, chunks=(100, 32), shards=(400, 96))))
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="r") as io:
        data = io.read(dask=True).acquisition["x"].data
        data.compute()
        gc.collect()
        assert len(kept) == 1 and kept[0].idle_bytes > 0  # what the computation gave back
    assert kept[0].idle_bytes == 0
    with pytest.raises(ClosedFileError):
        data.compute()


def test_write_and_read_on_a_local_cluster_of_processes(tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")
    monkeypatch.setattr(dask_arrays, "DASK_FROM_BYTES", 0)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        data = da.from_array(VALUES, chunks=(250, 96))
        write_nwb(tmp_path / "f.nwb.zarr", nwbfile_with(ZarrDataIO(data, chunks=(100, 32), shards=(400, 96))))
        assert client.run(lambda: True)  # the workers are separate processes, and alive
        with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="r") as io:
            dask_data = io.read(dask=True).acquisition["x"].data
            total = client.compute(dask_data.sum()).result()
            whole = client.compute(dask_data).result()  # joined on a worker: its own memory
            box = client.compute(dask_data[100:300, 7:50]).result()  # one task, on a worker
    assert total == VALUES.astype("int64").sum()
    np.testing.assert_array_equal(whole, VALUES)
    np.testing.assert_array_equal(box, VALUES[100:300, 7:50])


def test_containers_read_with_dask_print(tmp_path, monkeypatch):
    """HDMF's ``repr`` asks ``bool()`` of every collection field, which a plain dask array refuses."""
    monkeypatch.setattr(dask_arrays, "DASK_FROM_BYTES", 100_000)
    write_nwb(tmp_path / "f.nwb.zarr", nwbfile_with(ZarrDataIO(VALUES, chunks=(100, 32), shards=(400, 96))))
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="r") as io:
        nwb = io.read(dask=True)
        series = nwb.acquisition["x"]
        assert isinstance(series.data, da.Array)
        assert "data: dask.array<" in repr(series) and str(series) == repr(series)
        assert "x pynwb.base.TimeSeries" in repr(nwb.acquisition["x"]) and repr(nwb)
        assert "data" in series._repr_html_()
        assert dask_arrays.is_dask(series.data) and bool(series.data)
        np.testing.assert_array_equal((series.data[:10, :3] + 1).compute(), VALUES[:10, :3] + 1)
