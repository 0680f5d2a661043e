"""Writes hdmf-zarr (and HDF5IO) accept: scalar compounds given as 0-d structured arrays, compound fields
that are compounds, and rows appended in mode ``a`` that refer to a container the same write adds."""

from __future__ import annotations

import json

import numpy as np
import pytest
import zarr
from hdmf.backends.hdf5 import HDF5IO
from hdmf.build import DatasetBuilder, GroupBuilder, ReferenceBuilder
from nwb_factories import small_nwbfile
from pynwb import TimeSeries

from hdmf_zarr3 import NWBZarrIO, ZarrIO
from hdmf_zarr3.errors import CorruptStoreError, ReferenceError_, UnsupportedDataError


def roundtrip(io_cls, path, root):
    with io_cls(path, mode="w") as io:
        io.write_builder(root)
    io = io_cls(path, mode="r")
    return io, io.read_builder()


def file_bytes(path):
    return {p.relative_to(path): p.read_bytes() for p in path.rglob("*") if p.is_file()}


# --- (a) a scalar compound given as a 0-d structured numpy array ------------------------------------


def test_scalar_compound_with_a_text_field_from_a_0d_structured_array(tmp_path):
    dtype = [{"name": "x", "dtype": "float32"}, {"name": "label", "dtype": "text"}]
    value = np.array((1.5, "a" * 600), dtype=[("x", "<f4"), ("label", object)])
    root = GroupBuilder("root", datasets={"pos": DatasetBuilder("pos", value, dtype=dtype)})
    zio, ours = roundtrip(ZarrIO, tmp_path / "f.zarr", root)
    hio, theirs = roundtrip(
        HDF5IO,
        tmp_path / "f.h5",
        GroupBuilder("root", datasets={"pos": DatasetBuilder("pos", value.copy(), dtype=dtype)}),
    )
    with zio, hio:
        data, h5 = ours["pos"].data, theirs["pos"].data[()]  # h5py: an np.void
        # as h5py (np.void) and hdmf-zarr (0-d structured array): fields by name
        assert data.shape == () and data.dtype.names == ("x", "label")
        assert data["x"] == h5["x"] == 1.5
        assert data["label"] == "a" * 600 == h5["label"].decode()


def test_scalar_compound_with_a_reference_field_from_a_0d_structured_array(tmp_path):
    target = DatasetBuilder("target", np.arange(3))
    value = np.array((7, ReferenceBuilder(target)), dtype=[("idx", "<i4"), ("ref", object)])
    root = GroupBuilder(
        "root",
        datasets={
            "target": target,
            "cs": DatasetBuilder(
                "cs", value, dtype=[{"name": "idx", "dtype": "int32"}, {"name": "ref", "dtype": "object"}]
            ),
        },
    )
    io, back = roundtrip(ZarrIO, tmp_path / "f.zarr", root)
    with io:
        data = back["cs"].data
        assert data.shape == () and data["idx"] == 7
        assert data["ref"][()] is back["target"]


# --- (b) a compound field that is itself a compound (as HDF5IO writes it) ---------------------------

POINT = [{"name": "x", "dtype": "float64"}, {"name": "y", "dtype": "int16"}]
NESTED = [{"name": "a", "dtype": "int32"}, {"name": "p", "dtype": POINT}]


def test_a_compound_field_that_is_a_compound_roundtrips_as_in_hdf5(tmp_path):
    values = np.array([(1, (2.5, 3)), (4, (-1.0, 7))], dtype=[("a", "i4"), ("p", [("x", "f8"), ("y", "i2")])])
    zio, ours = roundtrip(
        ZarrIO, tmp_path / "f.zarr", GroupBuilder("root", datasets={"d": DatasetBuilder("d", values, dtype=NESTED)})
    )
    hio, theirs = roundtrip(
        HDF5IO,
        tmp_path / "f.h5",
        GroupBuilder("root", datasets={"d": DatasetBuilder("d", values.copy(), dtype=NESTED)}),
    )
    with zio, hio:
        data = ours["d"].data
        assert data[:].tolist() == [(1, (2.5, 3)), (4, (-1.0, 7))] == theirs["d"].data[:].tolist()
        assert type(data[0][1][1]) is np.int16
        assert ours["d"].dtype == NESTED
        arr = np.asarray(data)  # a structured array with the nested field, as h5py gives
        assert arr.dtype == values.dtype and arr.tolist() == values.tolist()
    z = zarr.open_array(tmp_path / "f.zarr" / "d", mode="r")
    assert z.attrs["zarr_dtype"] == NESTED  # the field list, a compound field's dtype a nested field list
    assert z.metadata.to_dict()["data_type"] == "string"  # JSON rows, a compound field a nested JSON array
    assert json.loads(str(z[1])) == [4, [-1.0, 7]]


def test_a_compound_field_holding_text_and_a_reference(tmp_path):
    target = DatasetBuilder("target", np.arange(3))
    dtype = [
        {"name": "i", "dtype": "uint8"},
        {
            "name": "inner",
            "dtype": [
                {"name": "label", "dtype": "text"},
                {"name": "ref", "dtype": {"target_type": "Data", "reftype": "object"}},
            ],
        },
    ]
    rows = [(1, ("one", ReferenceBuilder(target))), (2, ("twö", None))]
    scalar = np.array(
        (5, ("five", ReferenceBuilder(target))), dtype=[("i", "u1"), ("inner", [("label", object), ("ref", object)])]
    )
    io, back = roundtrip(
        ZarrIO,
        tmp_path / "f.zarr",
        GroupBuilder(
            "root",
            datasets={
                "target": target,
                "d": DatasetBuilder("d", rows, dtype=dtype),
                "s": DatasetBuilder("s", scalar, dtype=dtype),
            },
        ),
    )
    with io:
        got = back["d"].data[:]
        assert got[0].item() == (1, ("one", back["target"])) and got[1].item() == (2, ("twö", None))
        assert back["d"].dtype[1]["dtype"] == [{"name": "label", "dtype": "utf8"}, {"name": "ref", "dtype": "object"}]
        s = back["s"].data
        assert s.shape == () and s["i"] == 5 and s["inner"][()][0] == "five"
        assert s["inner"][()][1] is back["target"]


def test_a_stored_compound_field_without_fields_is_corrupt(tmp_path):
    io, _ = roundtrip(
        ZarrIO,
        tmp_path / "f.zarr",
        GroupBuilder("root", datasets={"d": DatasetBuilder("d", [(1, (2.5, 3))], dtype=NESTED)}),
    )
    io.close()
    doc_path = tmp_path / "f.zarr" / "d" / "zarr.json"
    doc = json.loads(doc_path.read_text())
    doc["attributes"]["zarr_dtype"][1]["dtype"] = []
    doc_path.write_text(json.dumps(doc))
    (tmp_path / "f.zarr" / "zarr.json").write_text(
        json.dumps(
            {  # drop the consolidated copy
                **json.loads((tmp_path / "f.zarr" / "zarr.json").read_text()),
                "consolidated_metadata": None,
            }
        )
    )
    with pytest.raises(CorruptStoreError, match="compound field 'p' has no fields"), ZarrIO(tmp_path / "f.zarr") as io:
        io.read_builder()


def test_the_hdmf_zarr_convention_refuses_a_compound_field_that_is_a_compound(tmp_path):
    root = GroupBuilder("root", datasets={"d": DatasetBuilder("d", [(1, (2.5, 3))], dtype=NESTED)})
    with (
        pytest.raises(UnsupportedDataError, match=r"no compound fields that are compounds \(p\)"),
        ZarrIO(tmp_path / "f.zarr", mode="w", convention="hdmf-zarr") as io,
    ):
        io.write_builder(root)


# --- (c) a row appended in mode 'a' that refers to a container added by the same write -------------


def with_epoch(path):
    nwb = small_nwbfile()
    nwb.add_epoch(start_time=0.0, stop_time=1.0, timeseries=[nwb.acquisition["ts"]])
    with NWBZarrIO(path, mode="w") as io:
        io.write(nwb)


def add_series_and_epoch(nwb, name="new"):
    new = TimeSeries(name=name, data=np.arange(5.0), unit="V", rate=1.0)
    nwb.add_epoch(start_time=2.0, stop_time=3.0, timeseries=[new])
    return new


@pytest.mark.parametrize("mode", ["a", "r+"])
def test_appended_row_refers_to_a_container_the_same_write_adds(tmp_path, mode):
    with_epoch(tmp_path / "f.zarr")
    with NWBZarrIO(tmp_path / "f.zarr", mode=mode) as io:
        nwb = io.read()
        new = TimeSeries(name="new", data=np.arange(5.0), unit="V", rate=1.0)
        nwb.add_acquisition(new)
        nwb.add_epoch(start_time=2.0, stop_time=3.0, timeseries=[new])
        io.write(nwb)
    with NWBZarrIO(tmp_path / "f.zarr", mode="r") as io:
        nwb = io.read()
        refs = nwb.epochs["timeseries"][:]
        assert [(r.idx_start, r.count, r.timeseries.name) for [r] in refs] == [(0, 30, "ts"), (2, 1, "new")]
        assert refs[1][0].timeseries is nwb.acquisition["new"]
        assert list(nwb.epochs["start_time"][:]) == [0.0, 2.0]


def test_rows_waiting_for_their_target_are_undone_on_a_close_without_write(tmp_path):
    with_epoch(tmp_path / "f.zarr")
    before = file_bytes(tmp_path / "f.zarr")
    io = NWBZarrIO(tmp_path / "f.zarr", mode="a")
    nwb = io.read()
    nwb.add_acquisition(add_series_and_epoch(nwb))
    with pytest.raises(ReferenceError_, match=r"/intervals/epochs/timeseries rows 1\.\.1 refer to TimeSeries 'new'"):
        io.close()
    assert file_bytes(tmp_path / "f.zarr") == before


def test_a_write_that_does_not_store_the_target_fails_and_undoes_the_rows(tmp_path):
    with_epoch(tmp_path / "f.zarr")
    before = file_bytes(tmp_path / "f.zarr")
    with NWBZarrIO(tmp_path / "f.zarr", mode="a") as io:
        nwb = io.read()
        add_series_and_epoch(nwb, "orphan")  # never added to the file
        with pytest.raises(
            ReferenceError_,
            match="/intervals/epochs/timeseries: rows 1..1 refer to TimeSeries "
            "'orphan', which this write did not store",
        ):
            io.write(nwb)
    assert file_bytes(tmp_path / "f.zarr") == before
    with NWBZarrIO(tmp_path / "f.zarr", mode="r") as io:
        assert len(io.read().epochs) == 1


# --- (d) bytes that are not UTF-8 text: a ValueError naming the dataset or attribute ---------------


@pytest.mark.parametrize("value", [[b"ok", b"\xff\xfe"], b"\xff\xfe"], ids=["list", "scalar"])
def test_non_utf8_bytes_name_the_dataset(tmp_path, value):
    root = GroupBuilder(
        "root", groups={"g": GroupBuilder("g", datasets={"d": DatasetBuilder("d", value, dtype="ascii")})}
    )
    with ZarrIO(tmp_path / "f.zarr", mode="w") as io, pytest.raises(ValueError) as info:
        io.write_builder(root)
    assert isinstance(info.value, UnsupportedDataError) and info.value.path == "/g/d"
    assert str(info.value).startswith("/g/d: dataset 'd' holds bytes that are not UTF-8")


def test_non_utf8_bytes_name_the_attribute(tmp_path):
    root = GroupBuilder("root", groups={"g": GroupBuilder("g", attributes={"note": b"\xff"})})
    with ZarrIO(tmp_path / "f.zarr", mode="w") as io, pytest.raises(UnsupportedDataError) as info:
        io.write_builder(root)
    assert "attribute 'note' of '/g' holds bytes that are not UTF-8" in str(info.value)
