"""A dataset read with ``read(dask=True)``, or a box of it, computed with dask's default scheduling is read at
once by the file's reader (issue #40): through dask's scheduler its task and dask's copy of the block into the
result cost a 1 s window 3-4 ms (about 15 %). A scheduler chosen, callbacks watching, or anything but such a
box still gets dask's computation; every way gives the same values, in memory no other result shares."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from writing import nwbfile_with, write_nwb

from hdmf_zarr3 import ClosedFileError, NWBZarrIO, ZarrDataIO
from hdmf_zarr3.integrations import dask_arrays

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
VALUES = np.arange(1000 * 96, dtype="int16").reshape(1000, 96)

#: Boxes of the dataset a dask array of ours stands for: the dataset itself, and boxes read by one task.
BOXES = {
    "dataset": lambda data: data,
    "[:]": lambda data: data[:],
    "window": lambda data: data[150:733],
    "rows and columns": lambda data: data[390:410, 5:60],
    "one row": lambda data: data[7:8],
}
#: Computations of a box that must go through dask: a scheduler chosen, callbacks watching.
THROUGH_DASK = {
    "scheduler keyword": lambda box: box.compute(scheduler="threads"),
    "sync keyword": lambda box: box.compute(scheduler="sync"),
    "config": lambda box: _with(dask.config.set(scheduler="threads"), box.compute),
    "progress bar": lambda box: _with(_progress_bar(), box.compute),
    "dask.compute": lambda box: dask.compute(box)[0],
}


def _with(context, action):
    with context:
        return action()


def _progress_bar():
    from dask.diagnostics import ProgressBar

    return ProgressBar(out=None)


@pytest.fixture
def opened(tmp_path, monkeypatch):
    monkeypatch.setattr(dask_arrays, "DASK_FROM_BYTES", 100_000)
    write_nwb(tmp_path / "f.nwb.zarr", nwbfile_with(ZarrDataIO(VALUES, chunks=(100, 32), shards=(400, 96))))
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="r") as io:
        yield io, io.read(dask=True).acquisition["x"].data


@pytest.fixture
def schedules(monkeypatch):
    """The graphs dask's local schedulers run (the threaded and the synchronous one both run ``get_async``)."""
    import dask.local
    import dask.threaded

    ran: list[int] = []
    get_async = dask.local.get_async
    for module in (dask.local, dask.threaded):
        monkeypatch.setattr(module, "get_async", lambda *a, **k: ran.append(1) or get_async(*a, **k))
    return ran


def _expected(name: str) -> np.ndarray:
    return BOXES[name](VALUES)


@pytest.mark.parametrize("name", list(BOXES))
def test_a_box_computed_with_the_default_scheduling_is_read_at_once_into_memory_of_its_own(opened, schedules, name):
    _, data = opened
    box = BOXES[name](data)
    first, second = box.compute(), np.asarray(box)
    assert not schedules, "dask's scheduler ran: the box was not read at once"
    np.testing.assert_array_equal(first, _expected(name))
    np.testing.assert_array_equal(second, _expected(name))
    first[...] = -1  # a result is the caller's: nothing else sees a change to it
    np.testing.assert_array_equal(box.compute(), _expected(name))
    np.testing.assert_array_equal(second, _expected(name))


@pytest.mark.parametrize("how", list(THROUGH_DASK))
@pytest.mark.parametrize("name", ["dataset", "window"])
def test_a_scheduler_chosen_or_callbacks_watching_get_dasks_computation(opened, schedules, name, how):
    _, data = opened
    np.testing.assert_array_equal(THROUGH_DASK[how](BOXES[name](data)), _expected(name))
    assert schedules, f"{how}: dask's scheduler did not run"


@pytest.mark.parametrize(
    "made",
    [
        lambda data: data + 1,  # made from it: a plain dask array
        lambda data: data[::3, 7],  # a strided selection: through dask, joined by us
        lambda data: data[[1, 5, 9]],
        lambda data: data.rechunk((100, 96)),
    ],
)
def test_anything_but_a_box_of_the_dataset_is_computed_by_dask(opened, schedules, made):
    _, data = opened
    np.testing.assert_array_equal(made(data).compute(), made(da.from_array(VALUES)).compute())
    assert schedules


def test_a_distributed_client_gets_the_computation(opened):
    distributed = pytest.importorskip("distributed")
    _, data = opened
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) as client:
        graphs: list[int] = []
        get = client.get
        client.get = lambda *a, **k: graphs.append(1) or get(*a, **k)  # what dask computes through
        assert not dask_arrays.direct_computation(data[150:733])
        np.testing.assert_array_equal(data[150:733].compute(), VALUES[150:733])
        assert graphs


def test_text_and_empty_boxes_are_left_to_dask(opened):
    _, data = opened
    assert dask_arrays.direct_computation(data[0:5])
    assert not dask_arrays.direct_computation(data[5:5])  # empty
    assert not dask_arrays.direct_computation(da.from_array(np.array(["a", "b"])))  # not numbers


def test_a_box_computed_after_the_file_closed_is_refused_naming_it(opened):
    io, data = opened
    window = data[150:733]
    io.close()
    with pytest.raises(ClosedFileError, match="was closed"):
        window.compute()


def test_boxes_computed_from_several_threads_at_once_each_get_their_values(opened):
    _, data = opened
    got: dict[int, np.ndarray] = {}

    def compute(start: int) -> None:
        got[start] = data[start : start + 300].compute()

    threads = [threading.Thread(target=compute, args=(start,)) for start in range(0, 700, 50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for start, values in got.items():
        np.testing.assert_array_equal(values, VALUES[start : start + 300])
    assert len(got) == 14
