"""Files in hdmf-zarr 0.14's convention (``convention="hdmf-zarr"``), read by hdmf-zarr 0.14 itself.

Round trips both ways go through the real hdmf-zarr 0.14 (a test dependency): ours → theirs → ours
and theirs → ours → theirs. The NWB file is ``full_nwbfile``'s without ``lab_info``, whose uint32
attribute hdmf-zarr cannot read back even from its own files.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import hdmf_zarr.nwb
import numpy as np
import pynwb
import pytest
from full_nwbfile import make_full_nwbfile, make_link_target_nwbfile, make_manager
from hdmf.common import DynamicTable, DynamicTableRegion, VectorData
from hdmf.testing import TestCase
from pynwb import NWBHDF5IO

from hdmf_zarr3 import NWBZarrIO, ZarrIO
from hdmf_zarr3.errors import ModeError, UnsupportedDataError

pytestmark = [
    pytest.mark.filterwarnings("ignore:EnumData is experimental:UserWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning:hdmf_zarr"),
]

WITHOUT = frozenset({"lab_info"})


def expected():
    return make_full_nwbfile(WITHOUT)


def _theirs(path: Path, mode: str = "r", **kwargs) -> hdmf_zarr.nwb.NWBZarrIO:
    return hdmf_zarr.nwb.NWBZarrIO(str(path), mode=mode, manager=make_manager(), **kwargs)


@pytest.fixture(scope="module")
def ours(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("interop") / "ours.nwb.zarr"
    with NWBZarrIO(path, mode="w", manager=make_manager(), convention="hdmf-zarr") as io:
        io.write(expected())
    return path


def test_hdmf_zarr_reads_what_we_write_in_its_convention(ours):
    with _theirs(ours) as io:
        TestCase().assertContainerEqual(io.read(), expected(), ignore_hdmf_attrs=True)
    doc = json.loads((ours / "zarr.json").read_text())
    assert "hdmf_zarr3_format" not in doc["attributes"]
    group = json.loads((ours / "general/extracellular_ephys/electrodes/group/zarr.json").read_text())
    assert group["attributes"]["_DTYPE"] == "object_reference"
    timeseries = json.loads((ours / "intervals/epochs/timeseries/zarr.json").read_text())
    assert timeseries["attributes"]["_REFERENCE_FIELDS"] == ["timeseries"]


def test_we_read_our_hdmf_zarr_convention_back(ours):
    with NWBZarrIO(ours, mode="r", manager=make_manager()) as io:
        assert io.dialect == "hdmf-zarr 0.14"
        TestCase().assertContainerEqual(io.read(), expected(), ignore_hdmf_attrs=True)


def test_pynwb_read_nwb_and_nwbinspector_treat_it_as_hdmf_zarr_own(ours, tmp_path):
    """Through hdmf-zarr 0.14, our file reads like the same file written by hdmf-zarr itself."""
    from nwbinspector import inspect_nwbfile_object

    theirs_path = tmp_path / "theirs.nwb.zarr"
    with _theirs(theirs_path, mode="w") as io:
        io.write(expected())

    def report(path: Path) -> list[tuple[str, str, str]]:
        nwbfile = pynwb.read_nwb(str(path))
        try:
            assert type(nwbfile.get_read_io()) is hdmf_zarr.nwb.NWBZarrIO
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return sorted(
                    (m.importance.name, m.check_function_name, m.object_name) for m in inspect_nwbfile_object(nwbfile)
                )
        finally:
            nwbfile.get_read_io().close()

    assert report(ours) == report(theirs_path)


def test_round_trip_ours_theirs_ours(ours, tmp_path):
    again = tmp_path / "theirs.nwb.zarr"
    with _theirs(ours) as src, _theirs(again, mode="w") as dst:
        dst.export(src_io=src, write_args={"link_data": False})
    with NWBZarrIO(again, mode="r", manager=make_manager()) as io:
        assert io.dialect == "hdmf-zarr 0.14"
        TestCase().assertContainerEqual(io.read(), expected(), ignore_hdmf_attrs=True)


def _export_in_their_convention_and_compare(written: Path, out: Path) -> None:
    """Read ``written`` with us, export it in hdmf-zarr's convention, read that with hdmf-zarr 0.14."""
    with NWBZarrIO(written, mode="r", manager=make_manager()) as src:
        NWBZarrIO.export_io(out, src, manager=make_manager(), convention="hdmf-zarr", write_args={"link_data": False})
    with _theirs(out) as io:
        TestCase().assertContainerEqual(io.read(), expected(), ignore_hdmf_attrs=True)


def test_round_trip_theirs_ours_theirs(tmp_path):
    theirs_path = tmp_path / "theirs.nwb.zarr"
    with _theirs(theirs_path, mode="w") as io:
        io.write(expected())
    _export_in_their_convention_and_compare(theirs_path, tmp_path / "ours.nwb.zarr")


def test_native_file_exported_to_hdmf_zarr_convention(tmp_path):
    native = tmp_path / "native.nwb.zarr"
    with NWBZarrIO(native, mode="w", manager=make_manager()) as io:
        io.write(expected())
    _export_in_their_convention_and_compare(native, tmp_path / "converted.nwb.zarr")


def test_external_links_in_hdmf_zarr_convention(tmp_path):
    """Links into another file: hdmf-zarr's ``source`` is relative to the store itself."""
    target, linking = tmp_path / "target.nwb.zarr", tmp_path / "linking.nwb.zarr"
    with NWBZarrIO(target, mode="w", convention="hdmf-zarr") as io:
        io.write(make_link_target_nwbfile())
    from full_nwbfile import make_external_nwbfile

    with NWBZarrIO(target, mode="r") as src:
        with NWBZarrIO(linking, mode="w", manager=src.manager, convention="hdmf-zarr") as io:
            io.write(make_external_nwbfile(src.read()), link_data=True)
    links = json.loads((linking / "acquisition/speed_again/zarr.json").read_text())["attributes"]["_LINKS"]
    assert {link["source"] for link in links} == {"../target.nwb.zarr"}
    with hdmf_zarr.nwb.NWBZarrIO(str(linking), mode="r") as io:
        np.testing.assert_array_equal(io.read().acquisition["speed_again"].data[:], np.linspace(0.0, 1.0, 20))
    with NWBZarrIO(linking, mode="r") as io:
        np.testing.assert_array_equal(io.read().acquisition["speed_again"].data[:], np.linspace(0.0, 1.0, 20))


# --- what hdmf-zarr's convention cannot hold is refused, never written wrong ----------------------


def _table_with(column: VectorData) -> DynamicTable:
    return DynamicTable(name="t", description="d", columns=[column], id=list(range(len(column.data))))


def test_convention_refuses_references_into_other_files(tmp_path):
    target = tmp_path / "target.nwb.zarr"
    with NWBZarrIO(target, mode="w") as io:
        io.write(make_link_target_nwbfile())
    with NWBZarrIO(target, mode="r") as src:
        other = src.read()
        nwbfile = make_link_target_nwbfile()
        table = _table_with(VectorData(name="refs", description="d", data=[other.acquisition["speed"]]))
        nwbfile.add_acquisition(table)
        with NWBZarrIO(tmp_path / "out.nwb.zarr", mode="w", manager=src.manager, convention="hdmf-zarr") as io:
            with pytest.raises(UnsupportedDataError, match=r"/acquisition/t/refs.*other files"):
                io.write(nwbfile)


def test_convention_refuses_region_references_from_hdf5(tmp_path):
    """An HDF5 region reference (read from a file written by h5py) has no place in hdmf-zarr's files."""
    import h5py

    path = tmp_path / "regions.h5"
    with h5py.File(path, "w") as f:
        target = f.create_dataset("target", data=np.arange(10))
        f.attrs["region"] = target.regionref[2:5]
    from hdmf.backends.hdf5 import HDF5IO
    from hdmf.common import get_manager

    with HDF5IO(str(path), mode="r", manager=get_manager()) as src:
        with pytest.raises(UnsupportedDataError, match=r"cannot store region references"):
            ZarrIO.export_io(tmp_path / "out.zarr", src, manager=get_manager(), convention="hdmf-zarr")


def test_convention_applies_to_new_files_only(ours, tmp_path):
    with pytest.raises(ModeError, match="new files only"):
        native = tmp_path / "native.nwb.zarr"
        with NWBZarrIO(native, mode="w") as io:
            io.write(make_link_target_nwbfile())
        NWBZarrIO(native, mode="a", convention="hdmf-zarr")
    with pytest.raises(ValueError, match="unknown convention"):
        ZarrIO(tmp_path / "x.zarr", mode="w", convention="netcdf")


def test_hdf5_to_hdmf_zarr_convention(tmp_path):
    h5 = tmp_path / "f.nwb"
    with NWBHDF5IO(str(h5), mode="w", manager=make_manager()) as io:
        io.write(expected())
    out = tmp_path / "f.nwb.zarr"
    with NWBHDF5IO(str(h5), mode="r", manager=make_manager()) as src:
        NWBZarrIO.export_io(out, src, manager=make_manager(), convention="hdmf-zarr")
    with _theirs(out) as io:
        TestCase().assertContainerEqual(io.read(), expected(), ignore_hdmf_attrs=True)


def test_region_column_reads_in_hdmf_zarr(ours):
    with _theirs(ours) as io:
        region = io.read().acquisition["ElectricalSeries"].electrodes
        assert isinstance(region, DynamicTableRegion)
        assert list(region.data[:]) == list(range(8))
