"""xarray opens every NWB file NWBZarrIO writes: ``xarray.open_datatree(path, engine="zarr")`` on the
whole file, ``xarray.open_zarr(path, group=g)`` on every group, each variable's values equal to what
NWBZarrIO reads (references and compounds holding them: their stored form, which is what xarray gives)."""

from __future__ import annotations

import posixpath
import warnings
from datetime import UTC, datetime

import numpy as np
import pytest
import xarray as xr
from full_nwbfile import make_full_nwbfile, make_manager
from hdmf.build import GroupBuilder
from hdmf.data_utils import DataChunkIterator
from nwb_factories import small_nwbfile
from pynwb import NWBFile, TimeSeries

from hdmf_zarr3 import NWBZarrIO, ZarrDataIO, convert
from hdmf_zarr3.backend.datasets.resolving import ResolvingDataset

pytestmark = [
    pytest.mark.filterwarnings("ignore:EnumData is experimental:UserWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning:pynwb"),  # (a TimeSeries whose lengths disagree, on purpose)
]


def _datasets(builder: GroupBuilder, path: str = "/"):
    """(group path, dataset name, dataset builder) of every dataset of the tree (links excluded)."""
    for name, sub in builder.datasets.items():
        yield path, name, sub
    for name, sub in builder.groups.items():
        yield from _datasets(sub, posixpath.join(path, name))


def _expected(data):
    """What NWBZarrIO reads for one dataset, as an array (references: as stored)."""
    if isinstance(data, ResolvingDataset):
        return np.asarray(data.stored_elements(...))
    if hasattr(data, "shape") and not isinstance(data, np.ndarray) and hasattr(data, "io"):
        return np.asarray(data[()] if data.shape == () else data[...])
    return np.asarray(data)


def _assert_same(actual: np.ndarray, expected: np.ndarray, where: str) -> None:
    assert actual.shape == expected.shape, where
    if expected.dtype.names:  # a compound: field by field
        assert actual.dtype.names == expected.dtype.names, where
        for name in expected.dtype.names:
            _assert_same(np.asarray(actual[name]), np.asarray(expected[name]), f"{where}.{name}")
    elif expected.dtype.kind in "OUTS" or actual.dtype.kind in "OUTS":
        assert [str(v) for v in actual.ravel().tolist()] == [str(v) for v in expected.ravel().tolist()], where
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=where)


def assert_xarray_reads(path, manager=None, consolidated: bool | None = None) -> int:
    """open_datatree opens the file, open_zarr every group, and each variable equals our read; returns
    how many variables were compared. ``consolidated=False``: groups are opened from their own documents
    (not the root's consolidated copy), which also checks those; faster for many groups."""
    tree = xr.open_datatree(path, engine="zarr")
    compared = 0
    with NWBZarrIO(path, mode="r", manager=manager) as io:
        root = io.read_builder()
        groups: dict[str, dict] = {}
        for group, name, builder in _datasets(root):
            groups.setdefault(group, {})[name] = builder.data
        for group in {"/", *groups}:
            node = tree[group] if group != "/" else tree
            own = node.to_dataset(inherit=False)
            alone = xr.open_zarr(path, group=group, consolidated=consolidated)
            assert set(own.variables) == set(alone.variables) == set(groups.get(group, {})), group
            for name, data in groups.get(group, {}).items():
                where = posixpath.join(group, name)
                expected = _expected(data)
                _assert_same(np.asarray(own[name].values), expected, where)
                _assert_same(np.asarray(alone[name].values), expected, where)
                compared += 1
    return compared


@pytest.fixture(scope="module")
def full_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("xarray") / "full.nwb.zarr"
    with NWBZarrIO(path, mode="w", manager=make_manager()) as io:
        io.write(make_full_nwbfile())
    return path


def test_the_full_file_opens_in_xarray(full_file):
    # ecephys, icephys, ophys, images, tables with ragged, compound, reference, enum and text columns,
    # scratch, the cached specifications
    assert assert_xarray_reads(full_file, make_manager()) > 150


def test_every_array_has_dimension_names(full_file):
    import zarr

    for name, array in zarr.open_group(full_file, mode="r").members(max_depth=None):
        if isinstance(array, zarr.Array):
            names = array.metadata.dimension_names
            assert names is not None and len(names) == array.ndim and all(isinstance(n, str) for n in names), name


def test_spec_names_stay_where_they_agree_and_not_where_they_do_not(full_file):
    tree = xr.open_datatree(full_file, engine="zarr")
    units = tree["/units"].to_dataset(inherit=False)
    assert units["spike_times"].dims == ("spike_times.dim0",)  # ragged data: longer than the table
    assert units["id"].dims == ("num_rows",)
    epochs = tree["/intervals/epochs"].to_dataset(inherit=False)
    assert epochs["start_time"].dims == epochs["stop_time"].dims  # the same length: one shared dimension


def test_a_small_file_and_a_file_converted_from_hdf5(tmp_path):
    small = tmp_path / "small.nwb.zarr"
    with NWBZarrIO(small, mode="w") as io:
        io.write(small_nwbfile(50))
    assert assert_xarray_reads(small, consolidated=False)
    from pynwb import NWBHDF5IO

    with NWBHDF5IO(str(tmp_path / "f.nwb"), mode="w", manager=make_manager()) as io:
        io.write(make_full_nwbfile())
    converted = tmp_path / "converted.nwb.zarr"
    convert(tmp_path / "f.nwb", converted)
    assert assert_xarray_reads(converted, make_manager(), consolidated=False) > 150


def test_streamed_data_and_user_names(tmp_path):
    # a stream is sized only once written: its length disagrees with the timestamps (num_times twice)
    nwbfile = small_nwbfile(10)
    stream = DataChunkIterator(data=iter(np.arange(12.0)), buffer_size=5)
    nwbfile.add_acquisition(TimeSeries(name="streamed", data=stream, timestamps=np.arange(7.0), unit="V"))
    nwbfile.add_acquisition(
        TimeSeries(
            name="named",
            data=ZarrDataIO(np.zeros((4, 3)), dimension_names=["t", "ch"]),
            timestamps=np.arange(4.0),
            unit="V",
        )
    )
    path = tmp_path / "f.nwb.zarr"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with NWBZarrIO(path, mode="w") as io:
            io.write(nwbfile)
    assert assert_xarray_reads(path, consolidated=False)
    tree = xr.open_datatree(path, engine="zarr")
    streamed = tree["/acquisition/streamed"].to_dataset(inherit=False)
    assert streamed["data"].dims != streamed["timestamps"].dims
    named = tree["/acquisition/named"].to_dataset(inherit=False)
    assert named["data"].dims == ("t", "ch")


def _table_file(path) -> None:
    """A file whose units table has as many spike times as units: the spec's dim0 agrees, for now."""
    nwbfile = NWBFile(
        session_description="rows", identifier="ROWS", session_start_time=datetime(2024, 1, 2, tzinfo=UTC)
    )
    nwbfile.add_unit_column("quality", "a text column")
    nwbfile.add_unit(spike_times=[0.5], quality="good")
    nwbfile.add_unit(spike_times=[1.5], quality="noise")
    nwbfile.add_acquisition(TimeSeries(name="stamped", data=np.arange(3.0), timestamps=np.arange(3.0), unit="V"))
    sharded = ZarrDataIO(np.arange(8.0), chunks=(2,), shards=(4,))  # appended to through zarr itself
    nwbfile.add_acquisition(TimeSeries(name="sharded", data=sharded, timestamps=np.arange(8.0), unit="V"))
    with NWBZarrIO(path, mode="w") as io:
        io.write(nwbfile)


def test_appended_rows_and_values_keep_the_rule(tmp_path):
    path = tmp_path / "f.nwb.zarr"
    _table_file(path)
    units = xr.open_datatree(path, engine="zarr")["/units"].to_dataset(inherit=False)
    assert units["spike_times"].dims == units["quality"].dims == ("dim0",)
    with NWBZarrIO(path, mode="a") as io:  # rows: spike_times grows by 2, quality by 1
        nwbfile = io.read()
        nwbfile.add_unit(spike_times=[7.0, 8.0], quality="good")
        io.write(nwbfile)
    assert assert_xarray_reads(path, consolidated=False)
    with NWBZarrIO(path, mode="r+") as io:  # a dataset appended to: data grows, its timestamps do not
        acquisition = io.read().acquisition
        acquisition["stamped"].data.extend([3.0, 4.0])
        acquisition["sharded"].data.extend([8.0, 9.0, 10.0])
    assert assert_xarray_reads(path, consolidated=False)
    tree = xr.open_datatree(path, engine="zarr")
    for name in ("stamped", "sharded"):
        series = tree[f"/acquisition/{name}"].to_dataset(inherit=False)
        assert series["data"].dims != series["timestamps"].dims, name


def test_the_hdmf_zarr_convention_keeps_its_names_and_convert_names_them(tmp_path):
    # hdmf-zarr's convention keeps the specification's names, which collide (as in hdmf-zarr 0.14's own
    # files); converting the file into ours names every array
    theirs = tmp_path / "theirs.nwb.zarr"
    with NWBZarrIO(theirs, mode="w", convention="hdmf-zarr") as io:
        io.write(small_nwbfile(10))
    with pytest.raises(ValueError, match="conflicting sizes for dimension"):
        xr.open_zarr(theirs, group="units", consolidated=False)
    ours = tmp_path / "ours.nwb.zarr"
    convert(theirs, ours)
    assert assert_xarray_reads(ours, consolidated=False)
