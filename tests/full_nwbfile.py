"""One rich, realistic NWB file, shared by tests and by the fixture generator (no hdmf_zarr3 import,
so that the generator can run it under other writers' environments).

``make_full_nwbfile()`` builds (deterministically, small) an NWBFile that touches most of the
NWB schema: file metadata, subject, devices, ecephys (electrodes with custom columns,
ElectricalSeries, LFP), units (ragged spike times, obs_intervals, electrode regions, waveforms),
trials/epochs/invalid_times (incl. TimeSeriesReferenceVectorData), behavior, a DynamicTable with
ragged string, int, region and enum columns, images with ImageReferences, icephys with the
intracellular recordings table hierarchy, optogenetics, ophys (pixel_mask / image_mask plane
segmentations, ROI response series), scratch data, and a small NWB extension (a
``TetrodeSeries`` subtype of ElectricalSeries and a ``LabInfo`` LabMetaData subtype).

The extension is loaded into a private copy of PyNWB's type map (never into the global one), and
every IO of this module gets a ``BuildManager`` over that copy via ``manager=``.
"""

from __future__ import annotations

import functools
import math
import os
import tempfile
from datetime import datetime, timedelta, timezone

import numpy as np
import pandas as pd
from hdmf.build import BuildManager, DatasetBuilder, GroupBuilder, TypeMap
from hdmf.common import DynamicTable
from hdmf.container import Container, Data
from pynwb import NWBFile, TimeSeries, get_type_map
from pynwb.base import ImageReferences, Images
from pynwb.behavior import BehavioralTimeSeries, Position, SpatialSeries
from pynwb.ecephys import LFP, ElectricalSeries
from pynwb.file import Subject
from pynwb.icephys import CurrentClampSeries, CurrentClampStimulusSeries
from pynwb.image import GrayscaleImage, RGBImage
from pynwb.ogen import OptogeneticSeries
from pynwb.ophys import DfOverF, Fluorescence, ImageSegmentation, OpticalChannel, RoiResponseSeries, TwoPhotonSeries
from pynwb.spec import NWBAttributeSpec, NWBDatasetSpec, NWBGroupSpec, NWBNamespaceBuilder

SEED = 20240607
EXT_NAMESPACE = "ndx-full-test"

N_SAMPLES = 100
N_ELECTRODES = 8
SESSION_START = datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=1)))


# --------------------------------------------------------------------------------------------
# extension (kept out of PyNWB's global type map)
# --------------------------------------------------------------------------------------------
@functools.cache
def extension_type_map() -> TypeMap:
    """A private copy of the core type map with the test extension loaded into it.

    The namespace and spec YAML files are written to a temporary directory, loaded, and the
    directory removed again: the type map keeps the specs in memory (that is what gets cached in
    the files).
    """
    ns_builder = NWBNamespaceBuilder(
        doc="A tiny extension used by hdmf_zarr3's full-file test.",
        name=EXT_NAMESPACE,
        version="0.1.0",
        author=["hdmf_zarr3 developers"],
        contact=["nobody@example.org"],
    )
    ns_builder.include_namespace("core")
    tetrode_series = NWBGroupSpec(
        neurodata_type_def="TetrodeSeries",
        neurodata_type_inc="ElectricalSeries",
        doc="An ElectricalSeries recorded on one tetrode.",
        attributes=[NWBAttributeSpec(name="trode_id", doc="The tetrode number.", dtype="int32")],
    )
    lab_info = NWBGroupSpec(
        neurodata_type_def="LabInfo",
        neurodata_type_inc="LabMetaData",
        doc="Lab-specific session metadata.",
        attributes=[
            NWBAttributeSpec(name="session_number", doc="Session counter of the rig.", dtype="uint32"),
            NWBAttributeSpec(name="rig_name", doc="Name of the rig.", dtype="text"),
            NWBAttributeSpec(name="temperature", doc="Room temperature in C.", dtype="float64"),
        ],
        datasets=[
            NWBDatasetSpec(
                name="calibration", doc="Calibration values of the rig.", dtype="float64", shape=(None,), quantity="?"
            ),
        ],
    )
    source = f"{EXT_NAMESPACE}.extensions.yaml"
    ns_builder.add_spec(source, tetrode_series)
    ns_builder.add_spec(source, lab_info)
    # pynwb.load_namespaces()/pynwb.get_class() would do the same on PyNWB's process-wide type map and
    # leak the extension into every later test; TypeMap.load_namespaces()/get_dt_container_cls() on a
    # copy are their local equivalents.
    type_map = get_type_map()  # a deep copy of PyNWB's core type map
    with tempfile.TemporaryDirectory() as outdir:
        ns_path = f"{EXT_NAMESPACE}.namespace.yaml"
        ns_builder.export(ns_path, outdir=outdir)
        type_map.load_namespaces(os.path.join(outdir, ns_path))
    return type_map


def make_manager() -> BuildManager:
    """A fresh BuildManager that knows the test extension (one per IO object)."""
    return BuildManager(extension_type_map())


def extension_classes() -> tuple[type, type]:
    type_map = extension_type_map()
    return (
        type_map.get_dt_container_cls("TetrodeSeries", EXT_NAMESPACE),
        type_map.get_dt_container_cls("LabInfo", EXT_NAMESPACE),
    )


# --------------------------------------------------------------------------------------------
# the file
# --------------------------------------------------------------------------------------------
SPIKE_COUNTS = [5, 0, 12, 1]  # unit 1 has no spikes at all


def make_full_nwbfile(without: frozenset[str] = frozenset()) -> NWBFile:
    """Build a fresh, deterministic, rich NWBFile (small data, so writing takes well under a second).

    ``without`` names parts to leave out for writers that cannot store them (the fixture generator
    uses it): ``"electrode_position"`` (a scalar compound dataset) and ``"lab_info"`` (a uint32
    attribute, which hdmf-zarr reads back as a Python int that the extension's class refuses).
    """
    rng = np.random.default_rng(SEED)
    TetrodeSeries, LabInfo = extension_classes()

    nwbfile = NWBFile(
        session_description="A synthetic session touching most of the NWB schema.",
        identifier="hdmf-zarr3-full-file-0001",
        session_start_time=SESSION_START,
        timestamps_reference_time=SESSION_START,
        file_create_date=[SESSION_START + timedelta(days=1), SESSION_START + timedelta(days=2)],
        experimenter=["Doe, Jane", "Roe, Richard"],
        experiment_description="Synthetic data for backend round-trip testing.",
        session_id="session-42",
        institution="Université de Test",
        lab="Zarr Lab",
        keywords=["zarr", "round-trip", "ecephys", "ophys"],
        notes="Notes with unicode: µV, naïve, 日本語.",
        pharmacology="none",
        protocol="PROTO-7",
        related_publications=["doi:10.1000/xyz123", "https://example.org/paper"],
        source_script="make_full_nwbfile()",
        source_script_file_name="test_nwb_full.py",
        data_collection="Collected by a random number generator.",
        surgery="none",
        virus="none",
        stimulus_notes="gratings",
    )
    nwbfile.subject = Subject(
        subject_id="mouse-001",
        age="P90D",
        description="A synthetic mouse.",
        genotype="wild type",
        sex="F",
        species="Mus musculus",
        weight="25 g",
        date_of_birth=SESSION_START - timedelta(days=90),
        strain="C57BL/6J",
    )
    if "lab_info" not in without:
        nwbfile.add_lab_meta_data(
            LabInfo(
                name="lab_info",
                session_number=np.uint32(7),
                rig_name="rig A",
                temperature=21.5,
                calibration=np.array([1.0, 0.5, 0.25]),
            )
        )

    # ---- devices ---------------------------------------------------------------------------
    probe_model = nwbfile.create_device_model(
        name="probe_model", manufacturer="Acme Probes", model_number="T-4", description="A tetrode drive model."
    )
    probe = nwbfile.create_device(
        name="probe", description="8-channel tetrode drive.", serial_number="SN-0001", model=probe_model
    )
    amplifier = nwbfile.create_device(name="amplifier", description="Patch clamp amplifier.")
    microscope = nwbfile.create_device(name="microscope", description="Two-photon microscope.")
    laser = nwbfile.create_device(name="laser", description="Optogenetic laser.")

    # ---- ecephys ---------------------------------------------------------------------------
    nwbfile.add_electrode_column(name="gain_db", description="Channel gain in dB (float column).")
    nwbfile.add_electrode_column(name="label", description="Channel label (string column).")
    nwbfile.add_electrode_column(name="is_bad", description="Whether the channel is bad (bool column).")
    # ElectrodeGroup.position is a scalar compound dataset (x, y, z)
    groups = [
        nwbfile.create_electrode_group(
            name=f"tetrode{g}",
            description=f"Tetrode {g}.",
            location="CA1",
            device=probe,
            position=None if "electrode_position" in without else (1.0 * g, 2.0, 3.0),
        )
        for g in range(2)
    ]
    for i in range(N_ELECTRODES):
        nwbfile.add_electrode(
            group=groups[i // 4],
            location="CA1",
            x=float(i),
            y=2.0 * i,
            z=-1.0,
            imp=float(1e6 + i),
            filtering="300-6000 Hz",
            rel_x=0.1 * i,
            rel_y=0.0,
            gain_db=float(rng.normal()),
            label=f"ch{i:02d}",
            is_bad=bool(i % 3 == 0),
        )
    all_electrodes = nwbfile.create_electrode_table_region(
        region=list(range(N_ELECTRODES)), description="all electrodes"
    )
    raw = ElectricalSeries(
        name="ElectricalSeries",
        data=rng.integers(-1000, 1000, size=(N_SAMPLES, N_ELECTRODES)).astype(np.int16),
        electrodes=all_electrodes,
        channel_conversion=np.linspace(0.9, 1.1, N_ELECTRODES, dtype=np.float32),
        filtering="Butterworth 300-6000 Hz",
        conversion=1.95e-7,
        offset=-0.001,
        resolution=1e-7,
        starting_time=0.5,
        rate=1000.0,
        comments="raw voltage",
        description="Raw recording on all electrodes.",
    )
    nwbfile.add_acquisition(raw)
    tetrode = TetrodeSeries(
        name="tetrode0_series",
        data=rng.normal(size=(N_SAMPLES // 2, 4)),
        electrodes=nwbfile.create_electrode_table_region(region=[0, 1, 2, 3], description="tetrode 0"),
        timestamps=np.arange(N_SAMPLES // 2) / 500.0,
        trode_id=0,
    )
    nwbfile.add_acquisition(tetrode)

    ecephys = nwbfile.create_processing_module(name="ecephys", description="Processed ecephys data.")
    lfp_series = ElectricalSeries(
        name="lfp",
        data=rng.normal(size=(N_SAMPLES // 4, 3)).astype(np.float32),
        electrodes=nwbfile.create_electrode_table_region(region=[0, 2, 5], description="LFP channels"),
        starting_time=0.5,
        rate=250.0,
        filtering="Low-pass 300 Hz",
    )
    lfp = LFP()
    ecephys.add(lfp)  # parent first, so the region's table shares an ancestor when it is added
    lfp.add_electrical_series(lfp_series)

    # ---- units -----------------------------------------------------------------------------
    nwbfile.add_unit_column(name="quality", description="Sorting quality.")
    for u, count in enumerate(SPIKE_COUNTS):
        nwbfile.add_unit(
            spike_times=np.sort(rng.uniform(0.0, 10.0, size=count)).tolist(),
            obs_intervals=[[0.0, 4.0], [5.0, 10.0]] if u % 2 else [[0.0, 10.0]],
            electrodes=list(range(u, u + 1 + u % 3)),
            electrode_group=groups[u % 2],
            waveform_mean=rng.normal(size=10),
            waveform_sd=np.abs(rng.normal(size=10)),
            quality=["good", "mua", "good", "noise"][u],
        )

    # ---- intervals -------------------------------------------------------------------------
    nwbfile.add_trial_column(name="correct", description="Whether the trial was correct.")
    nwbfile.add_trial_column(name="stim_name", description="The stimulus of the trial.")
    for t in range(5):
        nwbfile.add_trial(
            start_time=2.0 * t, stop_time=2.0 * t + 1.5, correct=bool(t % 2), stim_name=f"grating_{t * 45}deg"
        )
    nwbfile.add_epoch(start_time=0.5, stop_time=0.55, tags=["baseline"], timeseries=[raw, lfp_series])
    nwbfile.add_epoch(start_time=0.55, stop_time=0.6, tags=["stim", "odor"], timeseries=[raw])
    nwbfile.add_invalid_time_interval(start_time=0.0, stop_time=0.1, tags=["artifact"])
    nwbfile.add_invalid_time_interval(start_time=3.0, stop_time=3.25, tags=[])

    # ---- behavior ----------------------------------------------------------------------------
    behavior = nwbfile.create_processing_module(name="behavior", description="Behavioral data.")
    speed = TimeSeries(
        name="speed",
        data=np.abs(rng.normal(size=50)),
        unit="m/s",
        timestamps=np.linspace(0.0, 4.9, 50),
        description="Running speed.",
    )
    # timestamps given as a TimeSeries: written as a link to speed's timestamps
    lick_rate = TimeSeries(
        name="lick_rate", data=rng.poisson(2.0, size=50).astype(np.float64), unit="Hz", timestamps=speed
    )
    behavior.add(BehavioralTimeSeries(time_series=[speed, lick_rate]))
    behavior.add(
        Position(
            spatial_series=SpatialSeries(
                name="position",
                data=rng.normal(size=(50, 2)),
                reference_frame="arena center",
                starting_time=0.0,
                rate=10.0,
                description="(x, y) position.",
            )
        )
    )

    stim_info = DynamicTable(name="stimulus_info", description="One row per stimulus.")
    stim_info.add_column(name="contrast", description="Contrast (float).")
    stim_info.add_column(name="kind", description="Stimulus kind (string).")
    for c, kind in [(0.1, "grating"), (0.5, "noise"), (1.0, "movie")]:
        stim_info.add_row(contrast=c, kind=kind)
    presentations = DynamicTable(name="presentations", description="One row per presentation.")
    presentations.add_column(name="labels", description="Ragged column of strings.", index=True)
    presentations.add_column(name="repeat", description="Column of ints.")
    presentations.add_column(name="stimulus", description="Region into stimulus_info.", table=stim_info)
    presentations.add_column(name="outcome", description="Enum column.", enum=["hit", "miss", "false alarm"])
    rows = [(["a", "b"], 0, 0, "hit"), ([], 1, 2, "miss"), (["c"], 2, 1, "hit"), (["d", "é", "f"], 3, 2, "false alarm")]
    for labels, repeat, stimulus, outcome in rows:
        presentations.add_row(labels=labels, repeat=repeat, stimulus=stimulus, outcome=outcome)
    behavior.add(stim_info)
    behavior.add(presentations)

    # ---- images ------------------------------------------------------------------------------
    gray = GrayscaleImage(
        name="gray",
        data=rng.integers(0, 255, size=(6, 5)).astype(np.uint8),
        resolution=10.0,
        description="A grayscale image.",
    )
    rgb = RGBImage(name="rgb", data=rng.integers(0, 255, size=(6, 5, 3)).astype(np.uint8), description="An RGB image.")
    nwbfile.add_acquisition(
        Images(
            name="images",
            images=[gray, rgb],
            description="Stimulus frames.",
            order_of_images=ImageReferences(name="order_of_images", data=[rgb, gray]),
        )
    )

    # ---- icephys -----------------------------------------------------------------------------
    electrode = nwbfile.create_icephys_electrode(
        name="icephys_electrode",
        device=amplifier,
        description="Patch pipette.",
        location="V1",
        resistance="5 MOhm",
        cell_id="cell-1",
    )
    recordings = []
    for sweep in range(3):
        stimulus = CurrentClampStimulusSeries(
            name=f"ccss_{sweep}",
            data=np.repeat([0.0, 1e-10 * (sweep + 1), 0.0], 10),
            electrode=electrode,
            gain=0.02,
            starting_time=10.0 * sweep,
            rate=10000.0,
            sweep_number=np.uint32(sweep),
        )
        response = CurrentClampSeries(
            name=f"ccs_{sweep}",
            data=rng.normal(-0.065, 0.001, size=30),
            electrode=electrode,
            gain=0.02,
            bias_current=0.0,
            bridge_balance=1e7,
            capacitance_compensation=1e-12,
            starting_time=10.0 * sweep,
            rate=10000.0,
            sweep_number=np.uint32(sweep),
        )
        nwbfile.add_stimulus(stimulus)
        nwbfile.add_acquisition(response)
        recordings.append(
            nwbfile.add_intracellular_recording(electrode=electrode, stimulus=stimulus, response=response)
        )
    simultaneous = [nwbfile.add_icephys_simultaneous_recording(recordings=[r]) for r in recordings]
    sequential = nwbfile.add_icephys_sequential_recording(
        simultaneous_recordings=simultaneous, stimulus_type="current steps"
    )
    repetition = nwbfile.add_icephys_repetition(sequential_recordings=[sequential])
    nwbfile.add_icephys_experimental_condition(repetitions=[repetition])

    # ---- optogenetics ------------------------------------------------------------------------
    site = nwbfile.create_ogen_site(
        name="ogen_site", device=laser, description="Fiber above V1.", excitation_lambda=470.0, location="V1"
    )
    nwbfile.add_stimulus(
        OptogeneticSeries(
            name="ogen_series", data=np.abs(rng.normal(size=20)), site=site, rate=100.0, starting_time=0.0
        )
    )

    # ---- ophys -------------------------------------------------------------------------------
    optical_channel = OpticalChannel(name="green", description="GCaMP emission.", emission_lambda=525.0)
    plane = nwbfile.create_imaging_plane(
        name="imaging_plane",
        optical_channel=optical_channel,
        imaging_rate=30.0,
        description="Layer 2/3.",
        device=microscope,
        excitation_lambda=920.0,
        indicator="GCaMP6f",
        location="V1",
        grid_spacing=[0.002, 0.002],
        grid_spacing_unit="meters",
        origin_coords=[0.1, 0.2, 0.0],
        origin_coords_unit="meters",
    )
    two_photon = TwoPhotonSeries(
        name="two_photon",
        data=rng.integers(0, 4096, size=(6, 8, 8)).astype(np.uint16),
        imaging_plane=plane,
        rate=30.0,
        starting_time=0.0,
        unit="a.u.",
        field_of_view=[0.016, 0.016],
        dimension=[8, 8],
    )
    nwbfile.add_acquisition(two_photon)
    ophys = nwbfile.create_processing_module(name="ophys", description="Processed ophys data.")
    segmentation = ImageSegmentation()
    ophys.add(segmentation)
    pixel_rois = segmentation.create_plane_segmentation(
        name="pixel_rois", description="ROIs as pixel masks.", imaging_plane=plane, reference_images=two_photon
    )
    for n_pixels in (3, 1, 5):
        xy = rng.integers(0, 8, size=(n_pixels, 2))
        pixel_rois.add_roi(
            pixel_mask=[(int(x), int(y), float(w)) for (x, y), w in zip(xy, rng.uniform(0.1, 1.0, size=n_pixels))]
        )
    image_rois = segmentation.create_plane_segmentation(
        name="image_rois", description="ROIs as image masks.", imaging_plane=plane
    )
    for _ in range(2):
        image_rois.add_roi(image_mask=(rng.uniform(size=(8, 8)) > 0.7).astype(np.float32))
    fluorescence = Fluorescence()
    ophys.add(fluorescence)
    fluorescence.add_roi_response_series(
        RoiResponseSeries(
            name="pixel_roi_fluorescence",
            data=rng.normal(size=(6, 3)),
            unit="lumens",
            rate=30.0,
            rois=pixel_rois.create_roi_table_region(region=[0, 1, 2], description="all pixel ROIs"),
        )
    )
    dff = DfOverF()
    ophys.add(dff)
    dff.add_roi_response_series(
        RoiResponseSeries(
            name="image_roi_dff",
            data=rng.normal(size=(6, 1)),
            unit="n.a.",
            rate=30.0,
            rois=image_rois.create_roi_table_region(region=[1], description="second image ROI"),
        )
    )

    # ---- analysis and scratch ----------------------------------------------------------------
    nwbfile.add_analysis(TimeSeries(name="mean_rate", data=rng.uniform(size=10), unit="Hz", rate=1.0))
    nwbfile.add_scratch(
        np.arange(12, dtype=np.int32).reshape(3, 4), name="scratch_array", description="A scratch numpy array."
    )
    nwbfile.add_scratch("Free-form scratch notes.", name="scratch_notes", description="Scratch notes.")
    nwbfile.add_scratch(
        pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]}), name="scratch_table", description="A scratch DataFrame."
    )
    return nwbfile


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------
def _container_path(obj) -> str:
    """Location of a container in the container tree, e.g. ``root/behavior/presentations`` (names of
    the container and its ancestors; NWBFile children hang directly off ``root``)."""
    names = []
    while obj is not None:
        names.append(obj.name)
        obj = obj.parent
    return "/".join(reversed(names))


def _tables_by_path(nwbfile: NWBFile) -> dict[str, DynamicTable]:
    return {_container_path(obj): obj for obj in nwbfile.objects.values() if isinstance(obj, DynamicTable)}


def _assert_values_equal(a, b, where: str) -> None:
    """Deep comparison of to_dataframe() cells (nested frames, arrays, containers, NaNs)."""
    if isinstance(a, pd.DataFrame):
        assert isinstance(b, pd.DataFrame), where
        _assert_frames_equal(a, b, where)
    elif isinstance(a, Container | Data):
        # objects of two different files: same type, same place in the file
        assert type(a) is type(b), where
        assert _container_path(a) == _container_path(b), where
    elif isinstance(a, tuple) and hasattr(a, "_fields"):  # e.g. TimeSeriesReference
        assert type(a) is type(b) and a._fields == b._fields, where
        for field, x, y in zip(a._fields, a, b):
            _assert_values_equal(x, y, f"{where}.{field}")
    elif isinstance(a, np.ndarray | list | tuple):
        a_arr, b_arr = np.asarray(a, dtype=object), np.asarray(b, dtype=object)
        assert a_arr.shape == b_arr.shape, where
        for i, (x, y) in enumerate(zip(a_arr.ravel(), b_arr.ravel())):
            _assert_values_equal(x, y, f"{where}[{i}]")
    elif isinstance(a, float | np.floating) and math.isnan(a):
        assert isinstance(b, float | np.floating) and math.isnan(b), where
    else:
        if isinstance(a, bytes):
            a = a.decode()
        if isinstance(b, bytes):
            b = b.decode()
        assert a == b, f"{where}: {a!r} != {b!r}"


def _assert_frames_equal(a: pd.DataFrame, b: pd.DataFrame, where: str) -> None:
    assert list(a.columns) == list(b.columns), where
    assert list(a.index) == list(b.index), where
    assert a.index.name == b.index.name, where
    for column in a.columns:
        for row, (x, y) in enumerate(zip(a[column], b[column])):
            _assert_values_equal(x, y, f"{where}[{column!r}][{row}]")


def _storage_summary(root: GroupBuilder) -> dict[str, tuple]:
    """Per node of a builder tree read from a file: dataset shape and numeric dtype, numeric attribute
    types, link targets. Strings, compounds and empty attributes are left out (backends legitimately
    differ there: e.g. h5py stores an empty list attribute as float64)."""
    summary: dict[str, tuple] = {}

    def visit(builder, path: str) -> None:
        for key, value in builder.attributes.items():
            if isinstance(value, np.generic | np.ndarray) and value.dtype.kind in "biuf" and value.size:
                summary[f"{path}@{key}"] = (np.shape(value), value.dtype.str)
        if isinstance(builder, DatasetBuilder):
            dtype = getattr(builder.data, "dtype", None)
            if isinstance(dtype, np.dtype) and dtype.kind in "biuf":
                summary[path] = (tuple(builder.data.shape), dtype.str)
            return
        for name, group in builder.groups.items():
            visit(group, f"{path}/{name}")
        for name, dataset in builder.datasets.items():
            visit(dataset, f"{path}/{name}")
        for name, link in builder.links.items():
            summary[f"{path}/{name}"] = ("link", link.builder.path)

    visit(root, "")
    return summary


def make_link_target_nwbfile() -> NWBFile:
    """A small file another one links into (see :func:`make_external_nwbfile`)."""
    nwbfile = NWBFile(
        session_description="Holds data another file links to.",
        identifier="hdmf-zarr3-link-target-0001",
        session_start_time=SESSION_START,
    )
    nwbfile.add_acquisition(
        TimeSeries(
            name="speed",
            data=np.linspace(0.0, 1.0, 20),
            unit="m/s",
            timestamps=np.arange(20) / 10.0,
            description="Running speed.",
        )
    )
    return nwbfile


def make_external_nwbfile(source: NWBFile) -> NWBFile:
    """A small file whose TimeSeries links to data and timestamps held by ``source`` (another file,
    built by :func:`make_link_target_nwbfile` and read back).

    Written with ``link_data=True``, ``data`` becomes an external link to the source file's dataset and
    ``timestamps`` (given as a TimeSeries) a link to that TimeSeries' timestamps.
    """
    speed = source.acquisition["speed"]
    nwbfile = NWBFile(
        session_description="Links into another file.",
        identifier="hdmf-zarr3-external-0001",
        session_start_time=SESSION_START,
    )
    nwbfile.add_acquisition(
        TimeSeries(
            name="speed_again",
            data=speed.data,
            timestamps=speed,
            unit="m/s",
            description="Speed, held by another file.",
        )
    )
    return nwbfile
