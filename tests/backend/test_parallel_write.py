"""hdmf-zarr's parallel-write keywords: ``GenericDataChunkIterator`` datasets written by worker processes
(hdmf_zarr3.backend.write.parallel), with the same result as a serial write, and everything else as before."""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import warnings
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import numpy as np
import pytest
import zarr
from hdmf.build import DatasetBuilder, GroupBuilder
from hdmf.common import DynamicTable, VectorData, get_manager
from hdmf.data_utils import DataChunkIterator
from parallel_iterators import (
    ArrayIterator,
    DyingIterator,
    FailingIterator,
    UnpicklableIterator,
    WorkerStateIterator,
    ZarrDatasetIterator,
)
from zarr.storage import LocalStore, MemoryStore

from hdmf_zarr3 import ParallelWriteError, ParallelWriteWarning, ZarrDataIO, ZarrIO
from hdmf_zarr3.backend.settings.layout_choice import zarr_auto_shards
from hdmf_zarr3.backend.write import parallel

FORK = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork on this platform")


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _tree(data: dict[str, object]) -> GroupBuilder:
    return GroupBuilder("root", datasets={name: DatasetBuilder(name, value) for name, value in data.items()})


def _it(cls, data, step, **kwargs):
    """An iterator of ``cls`` over ``data`` with chunk and buffer shape ``step``."""
    return cls(data, chunk_shape=step, buffer_shape=step, **kwargs)


def _read(path, name):
    with ZarrIO(path, mode="r") as io:
        return io.read_builder()[name].data[()]


class _Recorded(ProcessPoolExecutor):
    """The executor, recording the pools the writer starts, what each worker is given and every task."""

    started: list[int] = []
    handed: list[tuple] = []
    submitted: list[tuple] = []

    def __init__(self, *args, **kwargs):
        type(self).started.append(kwargs["max_workers"])
        type(self).handed.append(kwargs["initargs"])
        super().__init__(*args, **kwargs)

    def submit(self, fn, *args, **kwargs):
        type(self).submitted.append(args)
        return super().submit(fn, *args, **kwargs)


@pytest.fixture
def pools(monkeypatch):
    _Recorded.started, _Recorded.handed, _Recorded.submitted = [], [], []
    monkeypatch.setattr(parallel, "ProcessPoolExecutor", _Recorded)
    return _Recorded.started


# --- tasks: whole write units, each cell exactly once ---------------------------------------------------
LAYOUTS = [
    ((8,), (2,), (8,), (4,)),
    ((22,), (2,), (8,), (6,)),
    ((22, 14), (2, 2), (8, 8), (6, 10)),
    ((18,), (2,), (8,), (8,)),
    ((34,), (2,), (8,), (16,)),
    ((6,), (2,), (8,), (6,)),
    ((16, 12), (2, 2), (8, 8), (8, 4)),
    ((18, 6), (2, 2), (8, 8), (8, 6)),
    ((16,), (2,), None, (4,)),
    ((15, 7, 5), (2, 3, 5), (4, 6, 5), (2, 3, 5)),
]


@pytest.mark.parametrize("shape,chunks,shards,buffer", LAYOUTS)
def test_tasks_cover_every_cell_once_and_no_storage_object_twice(shape, chunks, shards, buffer):
    unit = shards or chunks
    tasks = parallel.plan_tasks(shape, unit, buffer)
    coverage = np.zeros(shape, dtype=int)
    owners: dict[tuple[int, ...], int] = {}
    for number, region in enumerate(tasks):
        coverage[region] += 1
        for r, u, n in zip(region, unit, shape):
            assert r.start % u == 0 and (r.stop % u == 0 or r.stop == n)  # whole units only
        for cell in itertools.product(*[range(r.start // u, -(-r.stop // u)) for r, u in zip(region, unit)]):
            assert owners.setdefault(cell, number) == number, f"unit {cell} in two tasks"
    assert (coverage == 1).all()


@pytest.mark.parametrize("shape,chunks,shards,buffer", LAYOUTS[:9])
def test_tasks_of_a_real_write_and_its_data(tmp_path, monkeypatch, shape, chunks, shards, buffer):
    planned, original = [], parallel.plan_tasks
    monkeypatch.setattr(parallel, "plan_tasks", lambda *args: planned.append(original(*args)) or planned[-1])
    data = np.arange(1, np.prod(shape) + 1, dtype="int32").reshape(shape)
    iterator = ArrayIterator(data, chunk_shape=chunks, buffer_shape=buffer)
    with ZarrIO(tmp_path / "f.zarr", mode="w") as io:
        io.write_builder(_tree({"d": ZarrDataIO(iterator, chunks=chunks, shards=shards)}), number_of_jobs=2)
    array = zarr.open_array(tmp_path / "f.zarr" / "d", mode="r")
    assert array.shards == shards and array.chunks == chunks
    np.testing.assert_array_equal(array[...], data)
    assert len(planned) == 1 and planned[0] == parallel.plan_tasks(shape, shards or chunks, buffer)


# --- the same file as a serial write --------------------------------------------------------------------
def _mixed(make):
    ramp = np.arange(4000, dtype="float64").reshape(400, 10)
    return {
        "sharded": ZarrDataIO(make(ramp, chunk_shape=(20, 5), buffer_shape=(60, 10)), chunks=(20, 5), shards=(80, 10)),
        "chunked": make(ramp.astype("int16"), chunk_shape=(50, 10), buffer_shape=(150, 10)),
        "sparse": make(np.where(ramp > 3000, ramp, 0), chunk_shape=(100, 10), buffer_shape=(100, 10)),
        "classic": DataChunkIterator(data=ramp[:, 0], buffer_size=7),
        "plain": ramp[:10],
    }


@pytest.mark.parametrize("context", [None, "spawn"])
def test_the_file_is_byte_for_byte_a_serial_write(tmp_path, pools, context):
    with ZarrIO(tmp_path / "serial.zarr", mode="w") as io:
        io.write_builder(_tree(_mixed(ArrayIterator)))
    with ZarrIO(tmp_path / "parallel.zarr", mode="w") as io:
        io.write_builder(_tree(_mixed(ArrayIterator)), number_of_jobs=2, multiprocessing_context=context)
    assert pools == [2]
    serial, written = _files(tmp_path / "serial.zarr"), _files(tmp_path / "parallel.zarr")
    assert serial == written
    assert any(name.startswith("sparse/c") and name.endswith("0/0") for name in written)  # fill too: every chunk


def test_workers_are_handed_only_paths_documents_regions_and_the_callers_iterators(tmp_path, pools):
    """What multiprocessing pickles for the workers: nothing read from a file or store (docs/security.md)."""
    given = {"a": _it(ArrayIterator, np.arange(20), (5,)), "b": _it(ArrayIterator, np.arange(8.0), (4,))}
    with ZarrIO(tmp_path / "f.zarr", mode="w") as io:
        io.write_builder(_tree(given), number_of_jobs=2)
    [(root, datasets, threads)] = _Recorded.handed
    assert root == str(tmp_path / "f.zarr") and threads is None
    assert sorted(datasets) == ["/a", "/b"]
    for path, (iterator, document, cast) in datasets.items():
        assert iterator is given[path[1:]] and isinstance(cast, str)
        assert json.loads(json.dumps(document)) == document  # plain JSON, made by the writer
    assert sorted(_Recorded.submitted) == sorted(
        [("/a", (slice(i, i + 5),)) for i in range(0, 20, 5)] + [("/b", (slice(i, i + 4),)) for i in range(0, 8, 4)]
    )


def test_containers_with_mixed_data(tmp_path, pools):
    data = np.arange(12.0)
    columns = [
        VectorData(name="generic", description="", data=_it(ArrayIterator, data, (4,))),
        VectorData(name="unpicklable", description="", data=UnpicklableIterator(data + 1)),
        VectorData(name="classic", description="", data=DataChunkIterator(data=data + 2)),
        VectorData(name="plain", description="", data=data + 3),
    ]
    table = DynamicTable(name="t", description="", id=list(range(12)), columns=columns)
    with ZarrIO(tmp_path / "t.zarr", manager=get_manager(), mode="w") as io:
        io.write(table, number_of_jobs=2)
    assert pools == [2]  # one pool, for the one pickleable GenericDataChunkIterator
    with ZarrIO(tmp_path / "t.zarr", manager=get_manager(), mode="r") as io:
        read = io.read()
        for offset, name in enumerate(["generic", "unpicklable", "classic", "plain"]):
            np.testing.assert_array_equal(read[name].data[:], data + offset)


def test_unpicklable_iterators_are_written_here_without_a_pool(tmp_path, pools):
    data = np.arange(30).reshape(10, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with ZarrIO(tmp_path / "f.zarr", mode="w") as io:
            io.write_builder(_tree({"d": _it(UnpicklableIterator, data, (2, 3))}), number_of_jobs=2)
    assert pools == []
    np.testing.assert_array_equal(_read(tmp_path / "f.zarr", "d"), data)


def test_auto_shards_of_an_iterator_written_in_parallel(tmp_path, pools):
    data = np.arange(1, 65, dtype="int32")
    iterator = _it(ArrayIterator, data, (2,))
    with ZarrIO(tmp_path / "f.zarr", mode="w") as io:
        io.write_builder(_tree({"d": ZarrDataIO(iterator, chunks=(2,), shards="auto")}), number_of_jobs=2)
    array = zarr.open_array(tmp_path / "f.zarr" / "d", mode="r")
    assert pools == [2] and array.shards == (4,) and array.chunks == (2,)
    np.testing.assert_array_equal(array[:], data)


# --- stores worker processes cannot reopen ----------------------------------------------------------------
@pytest.mark.parametrize("store", [MemoryStore, LocalStore], ids=["MemoryStore", "LocalStore-object"])
def test_stores_passed_in_are_written_serially_with_a_warning(tmp_path, pools, store):
    data = np.arange(40).reshape(20, 2)
    target = store() if store is MemoryStore else store(tmp_path / "given.zarr")
    with pytest.warns(ParallelWriteWarning, match=r"number_of_jobs=3.*passed in.*: /a, /b"):
        with ZarrIO(target, mode="w") as io:
            io.write_builder(
                _tree({"a": _it(ArrayIterator, data, (4, 2)), "b": _it(ArrayIterator, data + 1, (4, 2))}),
                number_of_jobs=3,
            )
    assert pools == []
    with ZarrIO(target, mode="r") as io:
        np.testing.assert_array_equal(io.read_builder()["b"].data[:], data + 1)


def test_zip_files_are_written_in_parallel_through_their_working_directory(tmp_path, pools):
    data = np.arange(40).reshape(20, 2)
    with ZarrIO(tmp_path / "f.zarr.zip", mode="w") as io:
        io.write_builder(_tree({"d": _it(ArrayIterator, data, (4, 2))}), number_of_jobs=2)
    assert pools == [2]
    assert sorted(os.listdir(tmp_path)) == ["f.zarr.zip"]
    np.testing.assert_array_equal(_read(tmp_path / "f.zarr.zip", "d"), data)


def test_a_zip_opened_to_be_changed_is_appended_to_in_parallel_through_its_working_directory(tmp_path, pools):
    path = tmp_path / "f.zarr.zip"
    with ZarrIO(path, mode="w") as io:
        io.write_builder(_tree({"old": np.arange(5)}))
    before = path.read_bytes()
    data = np.arange(40).reshape(20, 2)
    with ZarrIO(path, mode="a") as io:
        root = io.read_builder()
        root.set_dataset(DatasetBuilder("d", _it(ArrayIterator, data, (4, 2))))
        io.write_builder(root, number_of_jobs=2)
    assert pools == [2]
    assert path.read_bytes().startswith(before)  # added to the zip in place
    np.testing.assert_array_equal(_read(path, "d"), data)
    np.testing.assert_array_equal(_read(path, "old"), np.arange(5))


# --- failures ---------------------------------------------------------------------------------------------
def test_a_failing_read_raises_and_a_replaced_file_stays(tmp_path):
    path = tmp_path / "f.zarr"
    with ZarrIO(path, mode="w") as io:
        io.write_builder(_tree({"old": np.arange(5)}))
    before = _files(path)
    data = np.arange(200).reshape(100, 2)
    with (
        pytest.raises(
            ParallelWriteError, match=r"/d: writing region \[40:50, 0:2\].*ValueError: cannot read row 42"
        ) as caught,
        ZarrIO(path, mode="w") as io,
    ):
        io.write_builder(
            _tree({"d": _it(FailingIterator, data, (10, 2), bad_row=42), "e": np.arange(3)}), number_of_jobs=2
        )
    assert isinstance(caught.value.__cause__, ValueError) and caught.value.path == "/d"
    assert _files(path) == before  # mode w replaces the old file only once the new one is complete
    assert sorted(os.listdir(tmp_path)) == ["f.zarr"]  # no working directory left behind


def test_a_killed_worker_raises_and_a_new_zip_is_not_created(tmp_path):
    with (
        pytest.raises(ParallelWriteError, match="ended abruptly") as caught,
        ZarrIO(tmp_path / "f.zarr.zip", mode="w") as io,
    ):
        io.write_builder(_tree({"d": _it(DyingIterator, np.arange(10), (5,))}), number_of_jobs=2)
    assert isinstance(caught.value.__cause__, BrokenProcessPool)
    assert os.listdir(tmp_path) == []


def test_a_failed_append_is_undone(tmp_path):
    path = tmp_path / "f.zarr"
    with ZarrIO(path, mode="w") as io:
        io.write_builder(_tree({"old": np.arange(5)}))
    before = _files(path)
    with pytest.raises(ParallelWriteError), ZarrIO(path, mode="a") as io:
        root = io.read_builder()
        root.set_dataset(DatasetBuilder("d", _it(FailingIterator, np.arange(40), (10,), bad_row=30)))
        io.write_builder(root, number_of_jobs=2)
    assert _files(path) == before


# --- the keywords -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "keywords,error,name",
    [
        ({"number_of_jobs": 0}, ValueError, "number_of_jobs"),
        ({"number_of_jobs": 2.0}, TypeError, "number_of_jobs"),
        ({"number_of_jobs": True}, TypeError, "number_of_jobs"),
        ({"number_of_jobs": None}, TypeError, "number_of_jobs"),
        ({"max_threads_per_process": 0}, ValueError, "max_threads_per_process"),
        ({"max_threads_per_process": "2"}, TypeError, "max_threads_per_process"),
        ({"multiprocessing_context": "threads"}, ValueError, "multiprocessing_context"),
        ({"multiprocessing_context": multiprocessing.get_context("spawn")}, TypeError, "multiprocessing_context"),
    ],
)
def test_bad_keywords_are_refused_before_anything_is_written(tmp_path, keywords, error, name):
    with ZarrIO(tmp_path / "f.zarr", mode="w") as io, pytest.raises(error, match=name):
        io.write_builder(_tree({"d": np.arange(3)}), **keywords)
    assert not (tmp_path / "f.zarr" / "d").exists()
    with ZarrIO(tmp_path / "f.zarr", mode="w") as src:
        src.write_builder(_tree({"d": np.arange(3)}))
    with (
        ZarrIO(tmp_path / "f.zarr", mode="r") as src,
        ZarrIO(tmp_path / "g.zarr", mode="w") as io,
        pytest.raises(error, match=name),
    ):
        io.export(src_io=src, write_args=keywords)


def test_workers_take_the_thread_limit_and_the_start_method(tmp_path, monkeypatch):
    contexts = []
    get_context = multiprocessing.get_context
    monkeypatch.setattr(parallel.multiprocessing, "get_context", lambda m=None: contexts.append(m) or get_context(m))
    pytest.importorskip("threadpoolctl")
    for threads, expected in ((1, (1, 1)), (3, (3, 3)), (None, (0, max(2, os.cpu_count() or 2)))):
        with ZarrIO(tmp_path / "f.zarr", mode="w") as io:
            io.write_builder(
                _tree({"d": _it(WorkerStateIterator, np.zeros((8, 3), "int64"), (4, 3))}),
                number_of_jobs=2,
                max_threads_per_process=threads,
            )
        state = _read(tmp_path / "f.zarr", "d")
        assert (state[:, :2] == expected).all(), state
        if threads is not None:  # numpy's BLAS pool, if threadpoolctl finds one (0: none found)
            assert set(state[:, 2]) <= {0, threads}, state
    assert contexts == [None] * 3


@FORK
def test_forked_workers_read_hdmf_zarr3_datasets(tmp_path, pools):
    """A forked worker inherits the parent's chunk-coding thread pools without their threads: workers get
    pools of their own, and reads (as well as writes) use them."""
    source = np.random.default_rng(0).integers(0, 1000, (4000, 16)).astype("int32")
    with ZarrIO(tmp_path / "src.zarr", mode="w") as io:
        io.write_builder(_tree({"d": ZarrDataIO(source, chunks=(500, 16))}))
    np.testing.assert_array_equal(_read(tmp_path / "src.zarr", "d"), source)
    iterator = ZarrDatasetIterator(
        tmp_path / "src.zarr", "d", source.shape, "int32", chunk_shape=(500, 16), buffer_shape=(1000, 16)
    )
    with ZarrIO(tmp_path / "dst.zarr", mode="w") as io:
        # "plain" is encoded first, on the parent io's pools: they have threads, which a forked child lacks
        io.write_builder(
            _tree({"plain": ZarrDataIO(source, chunks=(500, 16)), "copy": ZarrDataIO(iterator, chunks=(500, 16))}),
            number_of_jobs=2,
            multiprocessing_context="fork",
        )
    assert pools == [2]
    np.testing.assert_array_equal(_read(tmp_path / "dst.zarr", "copy"), source)


# --- progress ---------------------------------------------------------------------------------------------
def test_one_progress_bar_for_the_workers(tmp_path, capsys):
    data = np.arange(12.0)
    with ZarrIO(tmp_path / "f.zarr", mode="w") as io:
        io.write_builder(_tree({"quiet": _it(ArrayIterator, data, (4,))}), number_of_jobs=2)
    assert "Writing Zarr datasets" not in capsys.readouterr().err
    with ZarrIO(tmp_path / "f.zarr", mode="w") as io:
        io.write_builder(
            _tree({"a": _it(ArrayIterator, data, (4,), display_progress=True), "b": _it(ArrayIterator, data, (4,))}),
            number_of_jobs=2,
        )
    err = capsys.readouterr().err
    assert "Writing Zarr datasets with 2 jobs" in err and "6/6" in err  # 3 tasks for each dataset


# --- shards="auto" is zarr's own choice ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "shape,chunks",
    [((64,), (2,)), ((100, 10), (10, 5)), ((100, 10), (100, 10)), ((1000, 30, 7), (10, 3, 7)), ((18,), (2,))],
)
@pytest.mark.parametrize("target", [None, 4096])
def test_auto_shards_are_zarrs(shape, chunks, target):
    with zarr.config.set({"array.target_shard_size_bytes": target}), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr calls its automatic shards experimental
        expected = zarr.create_array(MemoryStore(), shape=shape, chunks=chunks, shards="auto", dtype="int32").shards
        assert zarr_auto_shards(shape, chunks, 4) == expected
