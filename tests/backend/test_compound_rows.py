"""Rows of compound datasets read back as NWBHDF5IO/HDF5IO give them: ``np.void`` for one row, a structured
array for several, fields by name, text fields as ``str`` and reference fields as the resolved builder or
container. Each test writes the same content with HDF5 and with Zarr and compares the reads."""

from __future__ import annotations

import numpy as np
import pytest
from full_nwbfile import _assert_frames_equal, _container_path, make_full_nwbfile, make_manager
from hdmf.backends.hdf5 import HDF5IO
from hdmf.build import DatasetBuilder, GroupBuilder, ReferenceBuilder
from pynwb import NWBHDF5IO

from hdmf_zarr3 import NWBZarrIO, ZarrIO

pytestmark = pytest.mark.filterwarnings("ignore:EnumData is experimental:UserWarning")


@pytest.fixture(scope="module")
def nwb_files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compound_rows")
    hdf5_path, zarr_path = tmp / "f.nwb", tmp / "f.nwb.zarr"
    with NWBHDF5IO(str(hdf5_path), mode="w", manager=make_manager()) as io:
        io.write(make_full_nwbfile())
    with NWBZarrIO(zarr_path, mode="w", manager=make_manager()) as io:
        io.write(make_full_nwbfile())
    return hdf5_path, zarr_path


def _same_row(zarr_row, hdf5_row, where: str) -> None:
    assert type(zarr_row) is type(hdf5_row) is np.void, where
    assert zarr_row.dtype == hdf5_row.dtype, where
    for name in hdf5_row.dtype.names:
        z, h = zarr_row[name], hdf5_row[name]
        if hdf5_row.dtype[name] == np.dtype(object) and not isinstance(h, str):  # a resolved reference
            assert type(z) is type(h) and _container_path(z) == _container_path(h), f"{where}.{name}"
        else:
            assert type(z) is type(h) and z == h, f"{where}.{name}"


def _same_rows(zarr_rows, hdf5_rows, where: str) -> None:
    assert isinstance(zarr_rows, np.ndarray) and isinstance(hdf5_rows, np.ndarray), where
    assert zarr_rows.dtype == hdf5_rows.dtype and zarr_rows.shape == hdf5_rows.shape, where
    for i, (z, h) in enumerate(zip(zarr_rows, hdf5_rows)):
        _same_row(z, h, f"{where}[{i}]")


def _columns(nwbfile):
    segmentation = nwbfile.processing["ophys"]["ImageSegmentation"]
    pixel = next(p for p in segmentation.plane_segmentations.values() if "pixel_mask" in p.colnames)
    return {
        "epochs.timeseries": nwbfile.epochs.timeseries.data,  # idx_start, count, TimeSeries reference
        "pixel_mask": pixel["pixel_mask"].target.data,
    }  # numeric fields only


@pytest.mark.parametrize("column", ["epochs.timeseries", "pixel_mask"])
def test_compound_columns_read_as_with_hdf5(nwb_files, column):
    hdf5_path, zarr_path = nwb_files
    with (
        NWBHDF5IO(str(hdf5_path), mode="r", manager=make_manager()) as hdf5_io,
        NWBZarrIO(zarr_path, mode="r", manager=make_manager()) as zarr_io,
    ):
        h, z = _columns(hdf5_io.read())[column], _columns(zarr_io.read())[column]
        _same_row(z[0], h[0], f"{column}[0]")
        first = h[0].dtype.names[0]
        assert type(z[0][first]) is type(h[0][first]) and z[0][first] == h[0][first]
        _same_rows(z[:], h[:], f"{column}[:]")
        _same_rows(z[0:2], h[0:2], f"{column}[0:2]")
        _same_rows(z[[0, 1]], h[[0, 1]], f"{column}[[0, 1]]")
        assert len(z) == len(h)
        for i, (zr, hr) in enumerate(zip(z, h, strict=True)):
            _same_row(zr, hr, f"iter {column}[{i}]")


def test_epochs_timeseries_field_access_and_tables(nwb_files):
    hdf5_path, zarr_path = nwb_files
    with (
        NWBHDF5IO(str(hdf5_path), mode="r", manager=make_manager()) as hdf5_io,
        NWBZarrIO(zarr_path, mode="r", manager=make_manager()) as zarr_io,
    ):
        h, z = hdf5_io.read(), zarr_io.read()
        rows = z.epochs.timeseries.data
        assert rows[0]["idx_start"] == 0 and rows[0]["count"] == 50
        assert rows[0]["timeseries"] is z.acquisition["ElectricalSeries"]
        np.testing.assert_array_equal(rows[:]["count"], h.epochs.timeseries.data[:]["count"])
        # HDMF's own readers of these rows: TimeSeriesReferenceVectorData and to_dataframe()
        assert z.epochs.timeseries[0] == (0, 50, z.acquisition["ElectricalSeries"])
        assert [r.count for r in z.epochs.timeseries[0:3]] == [r.count for r in h.epochs.timeseries[0:3]]
        _assert_frames_equal(z.epochs.to_dataframe(), h.epochs.to_dataframe(), "epochs")


# --- a compound with text and reference fields, at the builder level (HDF5IO and ZarrIO) ---------------------
_FIELDS = [{"name": "id", "dtype": "int32"}, {"name": "name", "dtype": "text"}, {"name": "ref", "dtype": "object"}]


def _root() -> GroupBuilder:
    targets = {name: DatasetBuilder(name, np.arange(3) + i) for i, name in enumerate(["a", "b"])}
    rows = [
        (1, "Allen", ReferenceBuilder(targets["a"])),
        (2, "Bob", ReferenceBuilder(targets["b"])),
        (3, "Mike", ReferenceBuilder(targets["a"])),
    ]
    return GroupBuilder("root", datasets={**targets, "table": DatasetBuilder("table", rows, dtype=_FIELDS)})


@pytest.fixture
def builder_files(tmp_path):
    hdf5_path, zarr_path = tmp_path / "b.h5", tmp_path / "b.zarr"
    with HDF5IO(str(hdf5_path), mode="w", manager=make_manager()) as io:
        io.write_builder(_root())
    with ZarrIO(zarr_path, mode="w", manager=make_manager()) as io:
        io.write_builder(_root())
    return hdf5_path, zarr_path


def test_text_and_reference_fields_read_as_with_hdf5(builder_files):
    hdf5_path, zarr_path = builder_files
    with (
        HDF5IO(str(hdf5_path), mode="r", manager=make_manager()) as hdf5_io,
        ZarrIO(zarr_path, mode="r", manager=make_manager()) as zarr_io,
    ):
        h, z = hdf5_io.read_builder()["table"].data, zarr_io.read_builder()["table"].data
        for index in (0, slice(None), slice(0, 2)):
            zr, hr = z[index], h[index]
            assert type(zr) is type(hr) and zr.dtype == hr.dtype
            assert zr.dtype.names == ("id", "name", "ref")
            np.testing.assert_array_equal(zr["id"], hr["id"])
            np.testing.assert_array_equal(zr["name"], hr["name"])
            zrefs, hrefs = np.atleast_1d(zr["ref"]), np.atleast_1d(hr["ref"])
            assert [(type(a), a.name) for a in zrefs] == [(type(b), b.name) for b in hrefs]
        assert z[1]["name"] == "Bob" and type(z[1]["name"]) is str
        assert z[2]["ref"] is z[0]["ref"]  # one builder per target, as HDF5IO gives
        np.testing.assert_array_equal(z[2]["ref"]["data"][:], [0, 1, 2])
        assert len(z) == len(h) == 3
        assert [row["name"] for row in z] == ["Allen", "Bob", "Mike"]
        structured = np.asarray(z)
        assert structured.dtype.names == ("id", "name", "ref") and list(structured["id"]) == [1, 2, 3]


def test_scalar_compound_reads_fields_by_name_and_writes_again(tmp_path):
    """A scalar compound with a text field: written from a 0-d structured array, read as one (fields by name,
    like a scalar numeric compound), and that record written again (as an export or a builder copy does)."""
    fields = [{"name": "x", "dtype": "float32"}, {"name": "label", "dtype": "text"}]
    value = np.array((1.5, "a" * 600), dtype=[("x", "<f4"), ("label", object)])
    with ZarrIO(tmp_path / "label.zarr", mode="w", manager=make_manager()) as io:
        io.write_builder(GroupBuilder("root", datasets={"label": DatasetBuilder("label", value, dtype=fields)}))
    with ZarrIO(tmp_path / "label.zarr", mode="r", manager=make_manager()) as io:
        data = io.read_builder()["label"].data
        assert data.shape == () and data["x"] == np.float32(1.5) and data["label"] == "a" * 600
        with ZarrIO(tmp_path / "copy.zarr", mode="w", manager=make_manager()) as copy:
            copy.write_builder(GroupBuilder("root", datasets={"label": DatasetBuilder("label", data, dtype=fields)}))
    with ZarrIO(tmp_path / "copy.zarr", mode="r", manager=make_manager()) as io:
        assert io.read_builder()["label"].data["label"] == "a" * 600
