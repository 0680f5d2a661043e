"""One rich, realistic NWB file (``full_nwbfile.py``) written with both NWBHDF5IO and NWBZarrIO and
compared: containers, storage, cached namespaces, tables, laziness and appends."""

from __future__ import annotations

import shutil
from datetime import timedelta

import numpy as np
import pynwb
import pytest
from full_nwbfile import (
    EXT_NAMESPACE,
    N_ELECTRODES,
    N_SAMPLES,
    SESSION_START,
    SPIKE_COUNTS,
    _assert_frames_equal,
    _container_path,
    _storage_summary,
    _tables_by_path,
    extension_classes,
    extension_type_map,
    make_full_nwbfile,
    make_manager,
)
from hdmf.testing import TestCase
from hdmf.utils import get_docval
from pynwb import NWBHDF5IO, get_type_map, validate

from hdmf_zarr3 import NWBZarrIO

# EnumData (the enum column) is an hdmf-experimental type and warns whenever it is created
pytestmark = pytest.mark.filterwarnings("ignore:EnumData is experimental:UserWarning")


@pytest.fixture(scope="module")
def written_files(tmp_path_factory):
    """Two fresh builds of the file, one written with NWBHDF5IO and one with NWBZarrIO (once per module;
    the tests only read them). Returns the HDF5 path, the Zarr path and the in-memory NWBFile that was
    written to Zarr."""
    tmp_path = tmp_path_factory.mktemp("nwb_full")
    hdf5_path = tmp_path / "f.nwb"
    zarr_path = tmp_path / "f.nwb.zarr"
    with NWBHDF5IO(str(hdf5_path), mode="w", manager=make_manager()) as io:
        io.write(make_full_nwbfile())
    written = make_full_nwbfile()
    with NWBZarrIO(zarr_path, mode="w", manager=make_manager()) as io:
        io.write(written)
    return hdf5_path, zarr_path, written


# --------------------------------------------------------------------------------------------
# tests
# --------------------------------------------------------------------------------------------
def test_extension_stays_out_of_the_global_type_map(written_files):
    _, zarr_path, _ = written_files
    with NWBZarrIO(zarr_path, mode="r") as io:  # loads the cached namespaces, into a copy
        assert EXT_NAMESPACE in io.manager.namespace_catalog.namespaces
    assert EXT_NAMESPACE in extension_type_map().namespace_catalog.namespaces
    assert EXT_NAMESPACE not in pynwb.available_namespaces()
    assert EXT_NAMESPACE not in get_type_map(copy=False).namespace_catalog.namespaces


def test_factory_is_deterministic():
    TestCase().assertContainerEqual(make_full_nwbfile(), make_full_nwbfile(), ignore_hdmf_attrs=True)


def test_full_file_zarr_equals_hdf5(written_files):
    hdf5_path, zarr_path, written = written_files
    tc = TestCase()
    with (
        NWBHDF5IO(str(hdf5_path), mode="r", manager=make_manager()) as hdf5_io,
        NWBZarrIO(zarr_path, mode="r", manager=make_manager()) as zarr_io,
    ):
        hdf5_read = hdf5_io.read()
        zarr_read = zarr_io.read()

        tc.assertContainerEqual(zarr_read, hdf5_read, ignore_hdmf_attrs=True)
        tc.assertContainerEqual(zarr_read, written, ignore_hdmf_attrs=True)
        # the object ids of everything written come back, and the same objects as from HDF5
        assert set(zarr_read.objects) == {obj.object_id for obj in written.objects.values()}
        assert sorted(_container_path(o) for o in zarr_read.objects.values()) == sorted(
            _container_path(o) for o in hdf5_read.objects.values()
        )

        # spot checks on things assertContainerEqual treats loosely
        tetrode = zarr_read.acquisition["tetrode0_series"]
        assert type(tetrode) is extension_classes()[0] and tetrode.trode_id == 0
        lab_info = zarr_read.get_lab_meta_data("lab_info")
        assert type(lab_info) is extension_classes()[1]
        assert (lab_info.session_number, lab_info.rig_name, lab_info.temperature) == (7, "rig A", 21.5)
        assert zarr_read.session_start_time == SESSION_START
        assert list(zarr_read.file_create_date) == list(written.file_create_date)
        assert zarr_read.subject.date_of_birth == SESSION_START - timedelta(days=90)
        assert list(zarr_read.experimenter) == ["Doe, Jane", "Roe, Richard"]
        assert list(zarr_read.keywords) == ["zarr", "round-trip", "ecephys", "ophys"]
        assert zarr_read.institution == "Université de Test"
        assert zarr_read.notes == written.notes
        position = zarr_read.electrode_groups["tetrode1"].position
        assert tuple(np.asarray(position)[()]) == (1.0, 2.0, 3.0)
        # lick_rate.timestamps is a link to speed.timestamps
        behavior = zarr_read.processing["behavior"]["BehavioralTimeSeries"]
        assert behavior["lick_rate"] in behavior["speed"].timestamp_link
        assert "timestamps" in zarr_io.read_builder()["processing/behavior/BehavioralTimeSeries/lick_rate"].links
        # object references in ImageReferences and TimeSeriesReferenceVectorData resolve to the containers
        images = zarr_read.acquisition["images"]
        assert [image for image in images.order_of_images.data[:]] == [images.images["rgb"], images.images["gray"]]
        first_epoch = zarr_read.epochs["timeseries"][0]
        assert [(r.idx_start, r.count) for r in first_epoch] == [(0, 50), (0, 12)]
        assert first_epoch[0].timeseries is zarr_read.acquisition["ElectricalSeries"]
        assert first_epoch[1].timeseries is zarr_read.processing["ecephys"]["LFP"]["lfp"]

        assert validate(io=zarr_io) == []


def test_full_file_storage_matches_hdf5(written_files):
    """Same numeric dtypes and shapes for every dataset and attribute, and the same links, as HDF5."""
    hdf5_path, zarr_path, _ = written_files
    with (
        NWBHDF5IO(str(hdf5_path), mode="r", manager=make_manager()) as hdf5_io,
        NWBZarrIO(zarr_path, mode="r", manager=make_manager()) as zarr_io,
    ):
        hdf5_summary = _storage_summary(hdf5_io.read_builder())
        zarr_summary = _storage_summary(zarr_io.read_builder())
    for key in sorted(set(hdf5_summary) | set(zarr_summary)):
        assert zarr_summary.get(key) == hdf5_summary.get(key), key
    assert hdf5_summary["/acquisition/ElectricalSeries/data"] == ((N_SAMPLES, N_ELECTRODES), "<i2")
    assert hdf5_summary["/general/lab_info@session_number"] == ((), "<u4")
    assert hdf5_summary["/processing/behavior/BehavioralTimeSeries/lick_rate/timestamps"] == (
        "link",
        "root/processing/behavior/BehavioralTimeSeries/speed/timestamps",
    )


def test_full_file_reads_with_cached_namespaces(written_files):
    """Reading with the namespaces cached in the file (no manager) rebuilds the extension types."""
    _, zarr_path, written = written_files
    with NWBZarrIO(zarr_path, mode="r") as io:
        read = io.read()
        tetrode = read.acquisition["tetrode0_series"]
        assert type(tetrode).__name__ == "TetrodeSeries"
        assert tetrode.trode_id == 0
        np.testing.assert_array_equal(tetrode.data[:], written.acquisition["tetrode0_series"].data)
        lab_info = read.get_lab_meta_data("lab_info")
        assert type(lab_info).__name__ == "LabInfo"
        np.testing.assert_array_equal(lab_info.calibration[:], [1.0, 0.5, 0.25])
        TestCase().assertContainerEqual(read.units, written.units, ignore_hdmf_attrs=True)
        assert validate(io=io) == []


def test_full_file_tables_to_dataframe(written_files):
    hdf5_path, zarr_path, written = written_files
    with (
        NWBHDF5IO(str(hdf5_path), mode="r", manager=make_manager()) as hdf5_io,
        NWBZarrIO(zarr_path, mode="r", manager=make_manager()) as zarr_io,
    ):
        zarr_tables = _tables_by_path(zarr_io.read())
        hdf5_tables = _tables_by_path(hdf5_io.read())
        assert set(zarr_tables) == set(hdf5_tables)
        expected = {  # container paths (NWBFile children hang directly off the root)
            "root/electrodes",
            "root/units",
            "root/trials",
            "root/epochs",
            "root/invalid_times",
            "root/behavior/presentations",
            "root/behavior/stimulus_info",
            "root/ophys/ImageSegmentation/pixel_rois",
            "root/ophys/ImageSegmentation/image_rois",
            "root/intracellular_recordings",
            "root/intracellular_recordings/electrodes",
            "root/intracellular_recordings/stimuli",
            "root/intracellular_recordings/responses",
            "root/simultaneous_recordings",
            "root/sequential_recordings",
            "root/repetitions",
            "root/experimental_conditions",
            "root/scratch_table",
        }
        assert expected <= set(zarr_tables)
        failures = []
        for path in sorted(zarr_tables):
            try:
                _assert_frames_equal(zarr_tables[path].to_dataframe(), hdf5_tables[path].to_dataframe(), path)
                if "index" in {arg["name"] for arg in get_docval(type(zarr_tables[path]).to_dataframe)}:
                    # region columns as row indices instead of nested frames
                    _assert_frames_equal(
                        zarr_tables[path].to_dataframe(index=True), hdf5_tables[path].to_dataframe(index=True), path
                    )
            except Exception as exc:  # collect them all, for a useful report
                failures.append(f"{path}: {type(exc).__name__}: {exc}")
        assert not failures, "\n".join(failures)

        units = zarr_tables["root/units"]
        assert len(units) == len(SPIKE_COUNTS)
        for u, count in enumerate(SPIKE_COUNTS):
            spikes = np.asarray(units["spike_times"][u])
            assert spikes.shape == (count,)
            np.testing.assert_array_equal(spikes, np.asarray(written.units["spike_times"][u]))
        np.testing.assert_array_equal(units.spike_times.data[:], written.units.spike_times.data[:])
        presentations = zarr_tables["root/behavior/presentations"].to_dataframe(index=True)
        assert [list(labels) for labels in presentations["labels"]] == [["a", "b"], [], ["c"], ["d", "é", "f"]]
        assert list(presentations["outcome"]) == [0, 1, 0, 2]  # enum indices
        assert list(presentations["stimulus"]) == [0, 2, 1, 2]
        resolved = zarr_tables["root/behavior/presentations"].to_dataframe()
        assert list(resolved["outcome"]) == ["hit", "miss", "hit", "false alarm"]
        kinds = [frame["kind"].tolist() for frame in resolved["stimulus"]]
        assert kinds == [["grating"], ["movie"], ["noise"], ["movie"]]


def test_full_file_reads_lazily(written_files):
    _, zarr_path, written = written_files
    with NWBZarrIO(zarr_path, mode="r", manager=make_manager()) as io:
        read = io.read()
        arrays = {  # name: (as read, as written)
            "raw": (read.acquisition["ElectricalSeries"].data, written.acquisition["ElectricalSeries"].data),
            "two_photon": (read.acquisition["two_photon"].data, written.acquisition["two_photon"].data),
            "lfp": (read.processing["ecephys"]["LFP"]["lfp"].data, written.processing["ecephys"]["LFP"]["lfp"].data),
            "tetrode": (read.acquisition["tetrode0_series"].data, written.acquisition["tetrode0_series"].data),
            "spike_times": (read.units.spike_times.data, np.asarray(written.units.spike_times.data)),
        }
        for name, (data, original) in arrays.items():
            assert not isinstance(data, np.ndarray), name
            assert tuple(data.shape) == original.shape, name
            assert data.dtype == original.dtype, name
        raw, raw_expected = arrays["raw"]
        np.testing.assert_array_equal(raw[0:2, 0:3], raw_expected[0:2, 0:3])
        np.testing.assert_array_equal(raw[-3:, 5:], raw_expected[-3:, 5:])
        two_photon, two_photon_expected = arrays["two_photon"]
        np.testing.assert_array_equal(two_photon[1:3, 2:4, ::3], two_photon_expected[1:3, 2:4, ::3])
        spike_times, spike_times_expected = arrays["spike_times"]
        np.testing.assert_array_equal(spike_times[0:2], spike_times_expected[0:2])

        pixel_mask = read.processing["ophys"]["ImageSegmentation"]["pixel_rois"]["pixel_mask"].target.data
        expected_mask = written.processing["ophys"]["ImageSegmentation"]["pixel_rois"]["pixel_mask"].target.data
        assert not isinstance(pixel_mask, np.ndarray)
        assert len(pixel_mask) == len(expected_mask) == 9
        assert [tuple(row) for row in pixel_mask[0:2]] == [tuple(row) for row in expected_mask[0:2]]


def test_full_file_reads_in_append_mode(written_files, tmp_path):
    """The file opens, and reads the same, in append mode (on a copy: the module's files are shared)."""
    _, zarr_path, written = written_files
    copy = tmp_path / "copy.nwb.zarr"
    shutil.copytree(zarr_path, copy)
    with NWBZarrIO(copy, mode="a", manager=make_manager()) as io:
        read = io.read()
        TestCase().assertContainerEqual(read, written, ignore_hdmf_attrs=True)


def test_nwbinspector_reports_the_same_for_our_reading_as_for_hdf5s(written_files):
    """nwbinspector's checks on a file opened with NWBZarrIO find nothing the backend caused: the same
    messages as for the same file written and read with NWBHDF5IO."""
    import warnings

    from nwbinspector import inspect_nwbfile_object

    hdf5_path, zarr_path, _ = written_files

    def report(io) -> list[tuple[str, str, str]]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return sorted(
                (m.importance.name, m.check_function_name, m.object_name) for m in inspect_nwbfile_object(io.read())
            )

    with NWBHDF5IO(str(hdf5_path), mode="r", manager=make_manager()) as io:
        expected = report(io)
    with NWBZarrIO(zarr_path, mode="r", manager=make_manager()) as io:
        assert report(io) == expected
