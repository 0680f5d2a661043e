"""Data the benchmarks write, built from seeded generators so every run (and both venvs) sees the same bytes.

Imports only numpy, hdmf and pynwb: the hdmf-zarr 0.14 scratch venv loads this module too.
"""

from __future__ import annotations

import datetime

import numpy as np
from hdmf.common import DynamicTable
from pynwb import NWBFile, TimeSeries
from pynwb.ecephys import ElectricalSeries

RATE = 30_000
CHANNELS = 384
START = datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)


def _spike_waveform(rng: np.random.Generator) -> np.ndarray:
    """A 1 ms extracellular spike shape (trough then slower rebound), peak -1."""
    t = np.arange(30) / RATE
    trough = -np.exp(-(((t - 0.0003) / 0.00012) ** 2))
    rebound = 0.35 * np.exp(-(((t - 0.0007) / 0.00025) ** 2))
    return (trough + rebound).astype(np.float32)


def ephys_block(rng: np.random.Generator, rows: int, channels: int = CHANNELS, t0: int = 0) -> np.ndarray:
    """``rows`` samples of int16 band-passed ephys: correlated noise, a shared LFP, and spikes.

    Noise is white Gaussian smoothed by a 4-tap moving average (sd about 20 LSB), the LFP a few
    slow sines common to all channels with a depth gradient (up to about 60 LSB), and spikes
    (about 10 Hz per channel, -60 to -250 LSB) span five neighbouring channels.
    """
    white = rng.standard_normal((rows + 3, channels), dtype=np.float32)
    x = white[3:] + white[2:-1] + white[1:-2] + white[:-3]
    x *= 10.0
    t = (t0 + np.arange(rows, dtype=np.float64)) / RATE
    gradient = np.linspace(1.0, 0.3, channels, dtype=np.float32)
    lfp = np.zeros(rows, dtype=np.float32)
    for freq, amp in ((4.0, 35.0), (9.0, 15.0), (23.0, 8.0)):
        lfp += (amp * np.sin(2 * np.pi * freq * t + freq)).astype(np.float32)
    x += lfp[:, None] * gradient[None, :]
    n_spikes = int(rows / RATE * 10 * channels)
    times = rng.integers(0, max(1, rows - 30), n_spikes)
    centres = rng.integers(2, channels - 2, n_spikes)
    amps = rng.uniform(60, 250, n_spikes).astype(np.float32)
    wave = _spike_waveform(rng)
    spread = np.array([0.25, 0.6, 1.0, 0.6, 0.25], dtype=np.float32)
    rows_idx = times[:, None, None] + np.arange(30)[None, :, None]
    cols_idx = centres[:, None, None] + np.arange(-2, 3)[None, None, :]
    values = amps[:, None, None] * wave[None, :, None] * spread[None, None, :]
    rows_idx, cols_idx = np.broadcast_arrays(rows_idx, cols_idx)
    np.add.at(x, (rows_idx.ravel(), cols_idx.ravel()), values.ravel())
    return np.rint(x).astype(np.int16)


def ephys_rows(start: int, stop: int, channels: int = CHANNELS, seed: int = 0) -> np.ndarray:
    """Rows ``start:stop`` of the recording; second ``b`` is generated from ``seed`` and ``b`` alone.

    Any row range is therefore reproducible on its own (a streaming source can produce its buffers
    independently), and memory beyond the int16 result stays at a few 1 s float32 blocks.
    """
    out = np.empty((stop - start, channels), dtype=np.int16)
    for block in range(start // RATE, -(-stop // RATE)):
        b0, b1 = block * RATE, (block + 1) * RATE
        values = ephys_block(np.random.default_rng([seed, block]), RATE, channels, b0)
        lo, hi = max(start, b0), min(stop, b1)
        out[lo - start : hi - start] = values[lo - b0 : hi - b0]
    return out


def ephys(seconds: float, channels: int = CHANNELS, seed: int = 0) -> np.ndarray:
    """``seconds`` of 30 kHz int16 ephys on ``channels`` channels (see :func:`ephys_block`)."""
    return ephys_rows(0, int(round(seconds * RATE)), channels, seed)


def ephys_nwbfile(data: object, channels: int = CHANNELS) -> NWBFile:
    """An NWBFile with one probe of ``channels`` electrodes and ``data`` as its ElectricalSeries."""
    nwb = NWBFile(session_description="bulk ephys", identifier="bench-ephys", session_start_time=START)
    device = nwb.create_device(name="probe")
    group = nwb.create_electrode_group("shank", description="s", location="CA1", device=device)
    for _ in range(channels):
        nwb.add_electrode(group=group, location="CA1")
    region = nwb.create_electrode_table_region(list(range(channels)), "all electrodes")
    nwb.add_acquisition(
        ElectricalSeries(name="ephys", data=data, electrodes=region, rate=float(RATE), conversion=0.195e-6)
    )
    return nwb


def many_small(
    series: int = 500, units: int = 1000, trials: int = 200, electrodes: int = 384, rich: bool = False
) -> NWBFile:
    """An NWBFile of many small objects: TimeSeries, units with spike times and electrodes, trials;
    ``rich`` adds optical physiology, intracellular electrophysiology, images and a scratch table
    (:func:`add_rich_parts`)."""
    rng = np.random.default_rng(0)
    nwb = NWBFile(session_description="many small objects", identifier="bench", session_start_time=START)
    device = nwb.create_device(name="probe")
    group = nwb.create_electrode_group("shank", description="s", location="CA1", device=device)
    for _ in range(electrodes):
        nwb.add_electrode(group=group, location="CA1")
    for i in range(series):
        nwb.add_acquisition(TimeSeries(name=f"ts{i:04d}", data=rng.random(100), unit="V", rate=10.0))
    for u in range(units):
        nwb.add_unit(spike_times=np.sort(rng.uniform(0, 100, rng.integers(1, 50))), electrodes=[u % electrodes])
    for t in range(trials):
        nwb.add_trial(start_time=float(t), stop_time=t + 0.5)
    if rich:
        add_rich_parts(nwb, rng, max(1, series // 10))
    return nwb


def add_rich_parts(nwb: NWBFile, rng: np.random.Generator, count: int) -> None:
    """Add ``count`` ROIs with fluorescence traces (ophys), ``count`` current-clamp sweeps in the
    intracellular recordings table (icephys), ``count`` small images and a scratch table of ``count`` rows."""
    from pynwb.base import Images
    from pynwb.icephys import CurrentClampSeries, CurrentClampStimulusSeries
    from pynwb.image import GrayscaleImage
    from pynwb.ophys import Fluorescence, ImageSegmentation, OpticalChannel, RoiResponseSeries

    microscope = nwb.create_device(name="microscope")
    channel = OpticalChannel(name="green", description="GCaMP", emission_lambda=520.0)
    plane = nwb.create_imaging_plane(
        name="plane",
        optical_channel=channel,
        description="one plane",
        device=microscope,
        excitation_lambda=920.0,
        imaging_rate=30.0,
        indicator="GCaMP6f",
        location="V1",
    )
    ophys = nwb.create_processing_module(name="ophys", description="optical physiology")
    segmentation = ImageSegmentation()
    ophys.add(segmentation)
    rois = segmentation.create_plane_segmentation(name="rois", description="ROIs", imaging_plane=plane)
    for _ in range(count):
        rois.add_roi(image_mask=(rng.random((16, 16)) > 0.8).astype(np.float32))
    region = rois.create_roi_table_region(region=list(range(count)), description="all ROIs")
    traces = RoiResponseSeries(name="dff", data=rng.random((100, count)), rois=region, unit="a.u.", rate=30.0)
    ophys.add(Fluorescence(roi_response_series=traces))

    amplifier = nwb.create_device(name="amplifier")
    pipette = nwb.create_icephys_electrode(name="pipette", description="patch", device=amplifier)
    for i in range(count):
        stimulus = CurrentClampStimulusSeries(
            name=f"stim{i:04d}", data=rng.random(50), electrode=pipette, rate=10_000.0, gain=1.0, sweep_number=i
        )
        response = CurrentClampSeries(
            name=f"resp{i:04d}", data=rng.random(50), electrode=pipette, rate=10_000.0, gain=1.0, sweep_number=i
        )
        nwb.add_intracellular_recording(electrode=pipette, stimulus=stimulus, response=response)

    images = [GrayscaleImage(name=f"img{i:04d}", data=rng.random((8, 8))) for i in range(count)]
    nwb.add_acquisition(Images(name="images", images=images, description="small images"))

    scratch = DynamicTable(name="scratch_table", description="a scratch table")
    scratch.add_column(name="value", description="a value")
    for _ in range(count):
        scratch.add_row(value=float(rng.random()))
    nwb.add_scratch(scratch)


def tables(nwb: NWBFile) -> int:
    """Materialise every DynamicTable of ``nwb`` as a DataFrame; return the total row count."""
    frames = [obj.to_dataframe() for obj in nwb.objects.values() if isinstance(obj, DynamicTable)]
    return sum(len(f) for f in frames)
