"""The default output meets DANDI's storage rules: an ecephys file with LFP in a processing module and an ophys
file (imaging, segmentation, fluorescence) pass ``check-dandi``'s depth and size rules as written, without
options (DANDI still refuses their string arrays: TensorStore cannot open them), and every
array opens in zarr-python with the values we read. (The back_compat files: test_cli_real_files.py.)"""

from __future__ import annotations

import json

import numpy as np
import pytest
import zarr
from dandi_ready import assert_dandi_ready
from nwb_factories import small_nwbfile
from pynwb.ecephys import LFP
from pynwb.ophys import Fluorescence, ImageSegmentation, OpticalChannel, RoiResponseSeries, TwoPhotonSeries
from pynwb.testing.mock.ecephys import mock_ElectricalSeries

from hdmf_zarr3 import NWBZarrIO
from hdmf_zarr3.cli import main

LFP_DATA = "processing/ecephys/LFP/lfp/data"

pytestmark = pytest.mark.filterwarnings("ignore:The linked table for DynamicTableRegion:UserWarning")


def _ecephys_file(tmp_path, **io_kwargs):
    nwbfile = small_nwbfile()
    series = mock_ElectricalSeries(name="lfp", data=np.arange(300.0).reshape(60, 5), nwbfile=nwbfile)
    nwbfile.acquisition.pop("lfp")  # (the mock adds it to acquisition): moved under processing/ecephys
    series.parent = None
    nwbfile.create_processing_module("ecephys", "LFP").add(LFP(electrical_series=series))
    path = tmp_path / "ecephys.nwb.zarr"
    with NWBZarrIO(path, mode="w", **io_kwargs) as io:
        io.write(nwbfile)
    return path


def _ophys_file(tmp_path):
    nwbfile = small_nwbfile()
    device = nwbfile.create_device(name="microscope")
    plane = nwbfile.create_imaging_plane(
        name="plane",
        optical_channel=OpticalChannel(name="green", description="green light", emission_lambda=525.0),
        description="V1",
        device=device,
        excitation_lambda=920.0,
        imaging_rate=30.0,
        indicator="GCaMP6f",
        location="V1",
    )
    images = TwoPhotonSeries(
        name="two_photon",
        data=np.arange(6 * 8 * 8, dtype="uint16").reshape(6, 8, 8),
        imaging_plane=plane,
        rate=30.0,
        unit="a.u.",
    )
    nwbfile.add_acquisition(images)
    ophys = nwbfile.create_processing_module("ophys", "segmentation and fluorescence")
    segmentation = ImageSegmentation()
    ophys.add(segmentation)
    rois = segmentation.create_plane_segmentation(name="rois", description="ROIs", imaging_plane=plane)
    for i in range(3):
        rois.add_roi(image_mask=np.eye(8, dtype="float32") * i)
    fluorescence = Fluorescence()
    ophys.add(fluorescence)
    fluorescence.add_roi_response_series(
        RoiResponseSeries(
            name="dff",
            data=np.arange(30.0).reshape(10, 3),
            unit="n.a.",
            rate=30.0,
            rois=rois.create_roi_table_region(region=[0, 1, 2], description="all ROIs"),
        )
    )
    path = tmp_path / "ophys.nwb.zarr"
    with NWBZarrIO(path, mode="w") as io:
        io.write(nwbfile)
    return path


def _separator(path, node: str) -> str:
    doc = json.loads((path / node / "zarr.json").read_text())
    return doc["chunk_key_encoding"]["configuration"]["separator"]


def test_lfp_in_a_processing_module_is_ready_for_dandi(tmp_path, capsys):
    path = _ecephys_file(tmp_path)
    assert assert_dandi_ready(path) > 10
    assert _separator(path, LFP_DATA) == "."  # nested keys would be 8 levels deep
    assert (path / LFP_DATA / "c.0.0").is_file()
    assert _separator(path, "acquisition/ts/data") == "."  # one chunk: flat, beside its zarr.json (any depth)
    np.testing.assert_array_equal(zarr.open_array(str(path / LFP_DATA), mode="r")[:], np.arange(300.0).reshape(60, 5))
    with NWBZarrIO(path, mode="r") as io:
        lfp = io.read().processing["ecephys"]["LFP"]["lfp"]
        np.testing.assert_array_equal(lfp.data[:], np.arange(300.0).reshape(60, 5))
    assert main(["check-dandi", str(path)]) == 1  # TensorStore's refusal of string arrays, and no Subject
    assert "dandi_zarr.tree_depth_exceeded" not in capsys.readouterr().out


def test_an_explicit_separator_still_wins(tmp_path, capsys):
    path = _ecephys_file(tmp_path, chunk_key_separator="/")
    assert _separator(path, LFP_DATA) == "/"
    assert main(["check-dandi", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"error: dandi_zarr.tree_depth_exceeded: /{LFP_DATA}: " in out and "8 levels deep" in out


def test_ophys_is_ready_for_dandi(tmp_path):
    path = _ophys_file(tmp_path)
    assert assert_dandi_ready(path) > 10
    assert _separator(path, "processing/ophys/ImageSegmentation/rois/image_mask") == "."  # 3-d, 9 levels nested
    assert _separator(path, "processing/ophys/Fluorescence/dff/data") == "."
    assert _separator(path, "acquisition/two_photon/data") == "."  # one chunk: flat (nested would be 7: allowed)
    with NWBZarrIO(path, mode="r") as io:
        read = io.read()
        assert read.processing["ophys"]["ImageSegmentation"]["rois"]["image_mask"].data.shape[0] == 3
        np.testing.assert_array_equal(
            read.processing["ophys"]["Fluorescence"]["dff"].data[:], np.arange(30.0).reshape(10, 3)
        )


@pytest.mark.parametrize("source", ["iterator", "dask"])
def test_streamed_and_dask_arrays_follow_the_same_rule(tmp_path, source):
    from hdmf.data_utils import DataChunkIterator

    values = np.arange(300.0).reshape(60, 5)
    if source == "dask":
        import dask.array as da

        data = da.from_array(values, chunks=(16, 5))
    else:
        data = DataChunkIterator(values, buffer_size=7)
    nwbfile = small_nwbfile()
    series = mock_ElectricalSeries(name="lfp", data=values, nwbfile=nwbfile)
    nwbfile.acquisition.pop("lfp")
    series.parent = None
    series.fields["data"] = data
    nwbfile.create_processing_module("ecephys", "LFP").add(LFP(electrical_series=series))
    path = tmp_path / f"{source}.nwb.zarr"
    with NWBZarrIO(path, mode="w") as io:
        io.write(nwbfile)
    assert _separator(path, LFP_DATA) == "."
    assert_dandi_ready(path)
    np.testing.assert_array_equal(zarr.open_array(str(path / LFP_DATA), mode="r")[:], values)
