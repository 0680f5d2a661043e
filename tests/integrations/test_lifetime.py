"""Lifetime (issue #27, point 6): what a closed io handed out — dask arrays, lazy datasets, their
iterators and small arrays kept in memory, the zarr array behind them — refuses to read with
ClosedFileError naming the node, also when a later ``w`` put another file at the same path."""

from __future__ import annotations

import numpy as np
import pytest
from pynwb import TimeSeries
from writing import nwbfile_with, write_nwb

from hdmf_zarr3 import ClosedFileError, FileReplacedError, NWBZarrIO, ZarrDataIO
from hdmf_zarr3.integrations import dask_arrays

da = pytest.importorskip("dask.array")
VALUES = np.arange(1000 * 96, dtype="int16").reshape(1000, 96)
LAYOUT = {"chunks": (100, 32), "shards": (400, 96)}


def _write(path, values):
    write_nwb(path, nwbfile_with(ZarrDataIO(values, **LAYOUT)))


def _read_dask(path):
    with NWBZarrIO(path, mode="r") as io:
        nwb = io.read(dask=True)
        data = nwb.acquisition["x"].data
        assert isinstance(data, da.Array)
        np.testing.assert_array_equal(data[:3].compute(), VALUES[:3])  # readable while open
    return nwb, data


@pytest.mark.parametrize("scheduler", ["threads", "sync"])
def test_a_dask_array_of_a_closed_file_refuses_to_read(tmp_path, monkeypatch, scheduler):
    monkeypatch.setattr(dask_arrays, "DASK_FROM_BYTES", 100_000)
    _write(tmp_path / "f.nwb.zarr", VALUES)
    _, data = _read_dask(tmp_path / "f.nwb.zarr")
    for derived in (data, data[::7, 3], (data + 1).sum()):
        with pytest.raises(ClosedFileError, match="was closed") as caught:
            derived.compute(scheduler=scheduler)
        assert caught.value.path == "/acquisition/x/data"


def test_a_dask_array_never_reads_the_file_a_later_w_put_there(tmp_path, monkeypatch):
    monkeypatch.setattr(dask_arrays, "DASK_FROM_BYTES", 100_000)
    path = tmp_path / "f.nwb.zarr"
    _write(path, VALUES)
    _, data = _read_dask(path)
    _write(path, -VALUES)  # same structure, other values
    with pytest.raises(ClosedFileError, match="was closed"):
        data.compute()


def test_a_dask_array_computed_on_a_cluster_refuses_a_closed_or_replaced_file(tmp_path, monkeypatch):
    """On a ``distributed`` cluster the sources of the tasks are pickled to the workers, which cannot
    learn that the io closed: a graph submitted after the close carries the closed state; a copy a worker
    got while the file was open reads while the file's root is the one it was made from, and refuses
    once another file (or another write) has replaced it."""
    distributed = pytest.importorskip("distributed")
    monkeypatch.setattr(dask_arrays, "DASK_FROM_BYTES", 0)
    path = tmp_path / "f.nwb.zarr"
    _write(path, VALUES)
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        with NWBZarrIO(path, mode="r") as io:
            data = io.read(dask=True).acquisition["x"].data
            assert client.compute(data.sum()).result() == VALUES.astype("int64").sum()
            source = next(v for v in dict(data.dask).values() if isinstance(v, dask_arrays.UnitSource))
            on_worker = client.scatter(source)  # a copy pickled while the file is open
        with pytest.raises(ClosedFileError, match="was closed"):
            client.compute(data.sum()).result()  # submitted after the close
        # the worker's copy cannot know of the close; the file is still the same one
        np.testing.assert_array_equal(client.submit(lambda s: s[:2, :3], on_worker).result(), VALUES[:2, :3])
        with NWBZarrIO(path, mode="a") as io:  # an append: the root the copy was made from is gone
            nwb = io.read()
            nwb.add_acquisition(TimeSeries(name="extra", data=[1.0, 2.0], unit="V", rate=1.0))
            io.write(nwb)
        with pytest.raises(ClosedFileError, match="changed") as caught:
            client.submit(lambda s: s[:2, :3], on_worker).result()
        assert caught.value.path == "/acquisition/x/data"
        _write(path, -VALUES)  # a w swaps a new directory in: refused as for any reader of the old one
        with pytest.raises(FileReplacedError, match="replaced") as caught:
            client.submit(lambda s: s[:2, :3], on_worker).result()
        assert caught.value.path == str(path)


def test_lazy_datasets_iterators_and_kept_values_of_a_closed_file_refuse(tmp_path):
    path = tmp_path / "f.nwb.zarr"
    _write(path, VALUES)
    with NWBZarrIO(path, mode="r") as io:
        nwb = io.read()
        data = nwb.acquisition["x"].data
        small = nwb.acquisition["ts"].data  # small: read once, then kept in memory
        assert small[:3].tolist() and data[:2, :2].tolist()
        rows = iter(data)
        next(rows)
        array = data.dataset  # the zarr array behind it, made while open
        assert array is not None
    _write(path, -VALUES)
    reads = [
        lambda: data[:10],
        lambda: data[::3, [1, 2]],
        lambda: np.asarray(data),
        lambda: small[:3],
        lambda: list(small),
        lambda: next(rows) if data.chunks[0] < 2 else list(rows),
        lambda: data.dataset,
        lambda: data.nbytes_stored(),
    ]
    for read in reads:
        with pytest.raises(ClosedFileError, match="was closed"):
            read()


def test_tables_ragged_columns_and_the_html_of_a_closed_file(tmp_path):
    """HDMF's own lazy lookups (a ragged column through its index, a text column) refuse too; the HTML
    of a container still renders, without reading the closed file."""
    path = tmp_path / "f.nwb.zarr"
    write_nwb(path)
    with NWBZarrIO(path, mode="r") as io:
        nwb = io.read()
        units = nwb.units
        assert list(units["spike_times"][0]) == [0.1, 0.2, 0.3]
        series = nwb.acquisition["ts"]
    for read in (lambda: units["spike_times"][1], lambda: units["quality"].data[:], lambda: units.id.data[[0, 1]]):
        with pytest.raises(ClosedFileError, match="was closed"):
            read()
    html = series._repr_html_()
    assert "data" in html and "ts" in html


def test_the_zarr_array_a_dataset_handed_out_refuses_to_read_once_closed(tmp_path):
    """``data.dataset`` is zarr's own array: kept past ``close()``, it reads nothing, neither the closed file
    nor the one a later ``w`` put at the same path (its store checks the file's lifetime before each call)."""
    path = tmp_path / "f.nwb.zarr"
    _write(path, VALUES)
    with NWBZarrIO(path, mode="r") as io:
        array = io.read().acquisition["x"].data.dataset
        np.testing.assert_array_equal(array[:3, :5], VALUES[:3, :5])  # readable while open
        np.testing.assert_array_equal(array[990:, ::7], VALUES[990:, ::7])
    for read in (lambda: array[:3, :5], lambda: array[500:510], lambda: np.asarray(array)):
        with pytest.raises(ClosedFileError, match="was closed") as caught:
            read()
        assert caught.value.path == "/acquisition/x/data"
    _write(path, -VALUES)
    with pytest.raises(ClosedFileError, match="was closed"):
        array[:3]
