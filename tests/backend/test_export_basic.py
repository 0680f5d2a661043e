"""HDMF's export protocol in every direction (the deep conversion checks live with issue 3)."""

from __future__ import annotations

import numpy as np
import pytest
from hdmf.testing import TestCase
from nwb_factories import small_nwbfile
from pynwb import NWBHDF5IO

from hdmf_zarr3 import NWBZarrIO, read_nwb


def test_hdf5_to_zarr_to_hdf5(tmp_path):
    original = small_nwbfile()
    with NWBHDF5IO(tmp_path / "a.nwb", mode="w") as io:
        io.write(original)
    with NWBHDF5IO(tmp_path / "a.nwb", mode="r") as src, NWBZarrIO(tmp_path / "b.nwb.zarr", mode="w") as dst:
        dst.export(src_io=src, write_args={"link_data": False})
    with NWBZarrIO(tmp_path / "b.nwb.zarr", mode="r") as src:
        NWBHDF5IO.export_io(path=str(tmp_path / "c.nwb"), src_io=src, write_args={"link_data": False})
    with (
        NWBHDF5IO(tmp_path / "a.nwb", mode="r") as a,
        NWBZarrIO(tmp_path / "b.nwb.zarr", mode="r") as b,
        NWBHDF5IO(tmp_path / "c.nwb", mode="r") as c,
    ):
        fa, fb, fc = a.read(), b.read(), c.read()
        TestCase().assertContainerEqual(fb, fa, ignore_hdmf_attrs=True)
        TestCase().assertContainerEqual(fc, fa, ignore_hdmf_attrs=True)
        assert fb.object_id == fa.object_id == fc.object_id


def test_zarr_to_zarr_export_and_read_nwb(tmp_path):
    with NWBZarrIO(tmp_path / "a.nwb.zarr", mode="w") as io:
        io.write(small_nwbfile())
    with NWBZarrIO(tmp_path / "a.nwb.zarr", mode="r") as src:
        NWBZarrIO.export_io(path=tmp_path / "b.nwb.zarr", src_io=src)
    nwb = read_nwb(tmp_path / "b.nwb.zarr")
    assert np.array_equal(nwb.acquisition["ts"].data[:], np.arange(1000.0))
    assert nwb.units["quality"].data[:].tolist() == ["good", "noise"]
    nwb.read_io.close()


def test_external_links_to_hdf5_files_survive_both_ways(tmp_path):
    """An HDF5 file linking into another HDF5 file, converted to Zarr and back, keeps the link."""
    import h5py
    from hdmf.backends.hdf5 import HDF5IO
    from hdmf.build import DatasetBuilder, GroupBuilder, LinkBuilder

    from hdmf_zarr3 import ZarrIO

    with HDF5IO(str(tmp_path / "target.h5"), mode="w") as io:
        io.write_builder(GroupBuilder("root", datasets={"x": DatasetBuilder("x", np.arange(4))}))
    with HDF5IO(str(tmp_path / "target.h5"), mode="r") as target:
        x = target.read_builder().datasets["x"]
        with HDF5IO(str(tmp_path / "main.h5"), mode="w") as io:
            io.write_builder(GroupBuilder("root", links={"ext": LinkBuilder(x, name="ext")}))
    with HDF5IO(str(tmp_path / "main.h5"), mode="r") as src, ZarrIO(tmp_path / "main.zarr", mode="w") as dst:
        dst.export(src_io=src, cache_spec=False)
    with ZarrIO(tmp_path / "main.zarr", mode="r") as io:
        link = io.read_builder().links["ext"]
        assert np.array_equal(link.builder.data[:], np.arange(4))
        with HDF5IO(str(tmp_path / "back.h5"), mode="w") as dst:  # as convert() writes Zarr -> HDF5
            dst.write_builder(io.read_builder(), export_source=str(tmp_path / "main.zarr"))
    with h5py.File(tmp_path / "back.h5", "r") as f:
        ext = f.get("ext", getlink=True)
        assert isinstance(ext, h5py.ExternalLink) and ext.filename == "target.h5" and ext.path == "/x"


@pytest.mark.parametrize("destination", ["self.nwb.zarr", "self.nwb"])
def test_linked_data_is_copied_in_with_link_data_false(tmp_path, destination):
    """A file whose data links into another file becomes self-contained (as with HDF5IO)."""
    import shutil

    from pynwb import TimeSeries

    with NWBZarrIO(tmp_path / "raw.nwb.zarr", mode="w") as io:
        io.write(small_nwbfile())
    with NWBZarrIO(tmp_path / "raw.nwb.zarr", mode="r") as raw:
        derived = small_nwbfile()
        derived.add_acquisition(TimeSeries(name="linked", data=raw.read().acquisition["ts"].data, unit="m", rate=30.0))
        with NWBZarrIO(tmp_path / "derived.nwb.zarr", mode="w", manager=raw.manager) as io:
            io.write(derived)
    out_cls = NWBZarrIO if destination.endswith(".zarr") else NWBHDF5IO
    with NWBZarrIO(tmp_path / "derived.nwb.zarr", mode="r") as src:
        out_cls.export_io(path=str(tmp_path / destination), src_io=src, write_args={"link_data": False})
    shutil.rmtree(tmp_path / "raw.nwb.zarr")
    with out_cls(str(tmp_path / destination), mode="r") as io:
        assert np.array_equal(io.read().acquisition["linked"].data[:], np.arange(1000.0))


def test_copied_file_links_and_references_agree(tmp_path):
    """A shallow copy links into the first file; a reference read there resolves to the linked object."""
    from pynwb.base import TimeSeriesReference
    from pynwb.testing.mock.base import mock_TimeSeries
    from pynwb.testing.mock.file import mock_NWBFile

    nwb = mock_NWBFile()
    ts = mock_TimeSeries(name="test_ts", timestamps=[1.0, 2.0, 3.0], data=[1.0, 2.0, 3.0])
    nwb.add_acquisition(ts)
    nwb.add_trial(start_time=1.0, stop_time=2.0, timeseries=[ts])
    with NWBZarrIO(tmp_path / "a.nwb.zarr", mode="w") as io:
        io.write(nwb)
    with NWBZarrIO(tmp_path / "a.nwb.zarr", mode="r") as base:
        with NWBZarrIO(tmp_path / "b.nwb.zarr", mode="w", manager=base.manager) as out:
            out.write(base.read().copy())
    with NWBZarrIO(tmp_path / "b.nwb.zarr", mode="r") as io:
        copy = io.read()
        value = copy.trials["timeseries"][0][0]
        assert isinstance(value, TimeSeriesReference) and value.timeseries is copy.acquisition["test_ts"]


def test_convert_takes_zarr_stores_on_either_side(tmp_path):
    """docs/stores.md: ``convert`` opens a file from whatever it is handed, a zarr Store included."""
    from zarr.storage import LocalStore, MemoryStore

    from hdmf_zarr3 import convert

    original = small_nwbfile()
    with NWBHDF5IO(tmp_path / "a.nwb", mode="w") as io:
        io.write(original)
    memory = MemoryStore()
    convert(tmp_path / "a.nwb", memory)  # HDF5 -> Store
    convert(memory, tmp_path / "b.nwb.zarr")  # Store -> Zarr path
    convert(memory, tmp_path / "c.nwb")  # Store -> HDF5
    convert(LocalStore(tmp_path / "b.nwb.zarr"), another := MemoryStore())  # Store -> Store
    with NWBHDF5IO(tmp_path / "a.nwb", mode="r") as a:
        expected = a.read()
        for target in (memory, tmp_path / "b.nwb.zarr", another):
            with NWBZarrIO(target, mode="r") as io:
                TestCase().assertContainerEqual(io.read(), expected, ignore_hdmf_attrs=True)
        with NWBHDF5IO(tmp_path / "c.nwb", mode="r") as io:
            TestCase().assertContainerEqual(io.read(), expected, ignore_hdmf_attrs=True)


def test_a_file_without_specifications_exports_without_a_specloc(tmp_path):
    """Nothing cached, nothing pointed at: a ``.specloc`` naming no group is refused by readers (issue #27)."""
    from hdmf.build import DatasetBuilder, GroupBuilder

    from hdmf_zarr3 import ZarrIO

    src, dst = tmp_path / "a.zarr", tmp_path / "b.zarr"
    with ZarrIO(src, mode="w") as io:
        io.write_builder(GroupBuilder("root", datasets={"d": DatasetBuilder("d", np.arange(5))}))
    with ZarrIO(src, mode="r") as read_io, ZarrIO(dst, mode="w") as export_io:
        export_io.export(src_io=read_io)
    with ZarrIO(dst, mode="r") as io:
        assert list(io.read_builder()["d"].data[:]) == [0, 1, 2, 3, 4]
        assert ".specloc" not in io.documents["/"]["attributes"]
