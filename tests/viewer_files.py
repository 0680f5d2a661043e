"""The NWB file the viewer's tests browse: ecephys, units, trials, an ImageSeries, two-photon imaging with a
plane segmentation over a mean image, and a TimeSeries with timestamps (small, deterministic)."""

from __future__ import annotations

import datetime
import struct
import zlib

import numpy as np
from dateutil.tz import tzutc
from hdmf.data_utils import GenericDataChunkIterator
from pynwb import NWBFile, TimeSeries
from pynwb.base import Images
from pynwb.behavior import BehavioralEvents, Position
from pynwb.ecephys import ElectricalSeries
from pynwb.epoch import TimeIntervals
from pynwb.file import Subject
from pynwb.image import GrayscaleImage, ImageSeries
from pynwb.ophys import Fluorescence, ImageSegmentation, OpticalChannel, TwoPhotonSeries

from hdmf_zarr3 import NWBZarrIO, ZarrDataIO

#: the ElectricalSeries: samples, channels, rate
SAMPLES, CHANNELS, RATE = 30_000, 8, 1000.0


def viewer_nwbfile() -> NWBFile:
    nwb = NWBFile(
        session_description="viewer test session",
        identifier="VIEW1",
        session_start_time=datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=tzutc()),
        experimenter=["Doe, Jane", "Roe, Richard"],
        institution="Example Institute",
        lab="Example Lab",
        keywords=["hippocampus", "place cells"],
        related_publications=["doi:10.1000/example"],
        session_id="S01",
        subject=Subject(subject_id="mouse-7", species="Mus musculus", sex="F", age="P90D", description="a mouse"),
    )
    device = nwb.create_device(name="probe")
    group = nwb.create_electrode_group(name="shank0", description="a shank", location="CA1", device=device)
    for i in range(CHANNELS):
        nwb.add_electrode(group=group, location="CA1", x=float(i), y=0.0, z=0.0)
    region = nwb.create_electrode_table_region(list(range(CHANNELS)), "all electrodes")
    t = np.arange(SAMPLES) / RATE
    waves = np.stack([np.sin(2 * np.pi * (c + 1) * t) * 1000 for c in range(CHANNELS)], axis=1).astype("int16")
    nwb.add_acquisition(
        ElectricalSeries(
            name="ElectricalSeries",
            data=ZarrDataIO(waves, chunks=(4096, CHANNELS)),
            electrodes=region,
            rate=RATE,
            starting_time=2.0,
            conversion=1e-6,
        )
    )
    speed = TimeSeries(name="speed", data=np.linspace(0, 9, 10), timestamps=np.arange(10) * 0.5 + 1.0, unit="m/s")
    nwb.add_acquisition(speed)
    nwb.add_epoch(start_time=1.0, stop_time=2.0, tags=["run"], timeseries=[speed])
    nwb.add_unit_column("quality", "a text column")
    spikes = [[0.1, 0.2, 0.3], [1.5], [0.7, 0.9], [2.5, 2.6, 2.7, 2.8]]
    shape = np.sin(np.linspace(0, 2 * np.pi, 30))[:, None] * np.array([[-60.0, -20.0]])  # 30 samples, 2 channels
    for i, times in enumerate(spikes):
        quality = ["good", "noise", "good", "mua"][i]
        nwb.add_unit(spike_times=times, quality=quality, electrodes=[i % CHANNELS], waveform_mean=shape * (i + 1))
    nwb.add_trial_column("score", "a score per trial")
    for i, score in enumerate([3.0, 1.0, 4.0, 1.0, 5.0]):
        nwb.add_trial(start_time=float(i), stop_time=float(i) + 0.5, score=score)
    frames = (np.arange(6 * 16 * 20).reshape(6, 16, 20) % 251).astype("uint8")
    nwb.add_acquisition(ImageSeries(name="movie", data=frames, unit="n.a.", rate=10.0))
    plane = _imaging_plane(nwb, device)
    rng = np.random.default_rng(0)
    nwb.add_acquisition(
        TwoPhotonSeries(
            name="two_photon",
            data=rng.integers(0, 1000, size=(4, 24, 24)).astype("uint16"),
            imaging_plane=plane,
            rate=30.0,
            unit="n.a.",
        )
    )
    behavior = nwb.create_processing_module(name="behavior", description="behaviour")
    angle = np.linspace(0, 4 * np.pi, 400)
    position = Position(name="Position")
    position.create_spatial_series(
        name="track",
        data=np.stack([np.cos(angle), np.sin(angle)], axis=1) * 0.5,
        reference_frame="arena centre",
        rate=20.0,
        unit="meters",
    )
    behavior.add(position)
    events = BehavioralEvents(name="BehavioralEvents")  # licks at 0.5 s steps, rewards at 2 s steps
    events.create_timeseries(name="licks", data=np.ones(40), timestamps=np.arange(40) * 0.5 + 0.25, unit="n.a.")
    events.create_timeseries(name="rewards", data=np.ones(10), timestamps=np.arange(10) * 2.0 + 1.0, unit="n.a.")
    behavior.add(events)
    tones = nwb.create_events_table(name="tones", description="tone onsets (EventsTable, NWB 2.9)")
    for onset in (7.0, 2.0, 4.5):  # not in time order
        tones.add_row(timestamp=onset)
    ophys = nwb.create_processing_module(name="ophys", description="optical physiology")
    mean = np.outer(np.linspace(0, 1, 24), np.linspace(1, 0, 24))
    ophys.add(Images(name="summary_images", images=[GrayscaleImage(name="mean", data=mean)]))
    segmentation = ImageSegmentation()
    ophys.add(segmentation)
    cells = segmentation.create_plane_segmentation(name="cells", description="cells", imaging_plane=plane)
    for r in range(3):
        mask = np.zeros((24, 24), dtype="float32")
        mask[2 + 6 * r : 6 + 6 * r, 3 + 5 * r : 8 + 5 * r] = 1.0
        cells.add_roi(image_mask=mask)
    # traces of cells 2 and 0 (in that order: a trace's column is not its ROI's row)
    region = cells.create_roi_table_region(region=[2, 0], description="two cells")
    traces = np.stack([np.sin(np.arange(100) / 5.0), np.cos(np.arange(100) / 7.0)], axis=1)
    fluorescence = Fluorescence()
    ophys.add(fluorescence)  # first: the region's table and the series then share an ancestor
    fluorescence.create_roi_response_series(name="RoiResponseSeries", data=traces, rois=region, rate=30.0, unit="n.a.")
    return nwb


def write_viewer_file(target, **io_kwargs):
    """Write :func:`viewer_nwbfile` to ``target``; return ``target``."""
    with NWBZarrIO(target, mode="w", **io_kwargs) as io:
        io.write(viewer_nwbfile())
    return target


def decode_png(data: bytes) -> np.ndarray:
    """A PNG we wrote, decoded (filter 0 rows only), to check what it shows."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        tag, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        assert struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])[0] == zlib.crc32(tag + body)
        if tag == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif tag == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color = header[:4]
    channels = {0: 1, 2: 3, 6: 4}[color]
    rows = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(height, 1 + width * channels)
    assert not rows[:, 0].any()
    return rows[:, 1:].reshape(height, width, channels).squeeze()


#: The large recording of the memory test: 384 channels of int16 at 30 kHz, 1.4 M samples (1.0 GiB).
BIG_CHANNELS, BIG_SAMPLES, BIG_RATE = 384, 1_400_000, 30_000.0


class SawtoothIterator(GenericDataChunkIterator):
    """A recording made up block by block (never whole in memory): channel ``c`` at sample ``i`` holds
    ``(i * (c + 1)) % 2000 - 1000``."""

    def __init__(self, samples: int, channels: int, **kwargs):
        self.samples, self.channels = samples, channels
        super().__init__(**kwargs)

    def _get_data(self, selection):
        rows, columns = selection
        i = np.arange(rows.start or 0, rows.stop, dtype=np.int64)[:, None]
        c = np.arange(columns.start or 0, columns.stop, dtype=np.int64)[None, :]
        return ((i * (c + 1)) % 2000 - 1000).astype(np.int16)

    def _get_maxshape(self):
        return (self.samples, self.channels)

    def _get_dtype(self):
        return np.dtype(np.int16)


def write_big_recording(
    target, samples: int = BIG_SAMPLES, channels: int = BIG_CHANNELS, units: int = 0, trials: int = 0, **io_kwargs
):
    """An NWB file holding one ElectricalSeries of ``samples`` × ``channels`` int16 (1 GiB by default), its
    electrodes along a probe (``rel_y``); with ``units`` and ``trials``, a session around it (:func:`_session`)."""
    nwb = NWBFile(
        session_description="a long recording",
        identifier="BIG",
        session_start_time=datetime.datetime(2024, 1, 2, tzinfo=tzutc()),
    )
    device = nwb.create_device(name="probe")
    group = nwb.create_electrode_group(name="shank", description="probe", location="CA1", device=device)
    nwb.add_electrode_column("rel_y", "depth along the probe (µm)")
    for channel in range(channels):
        nwb.add_electrode(group=group, location="CA1", rel_y=20.0 * (channel // 2))
    region = nwb.create_electrode_table_region(list(range(channels)), "all")
    data = SawtoothIterator(samples, channels, buffer_gb=0.05)
    nwb.add_acquisition(ElectricalSeries(name="ElectricalSeries", data=data, electrodes=region, rate=BIG_RATE))
    if units or trials:
        _session(nwb, samples / BIG_RATE, units, trials, channels)
    with NWBZarrIO(target, mode="w", **io_kwargs) as io:
        io.write(nwb)
    return target


def _session(nwb: NWBFile, duration: float, units: int, trials: int, channels: int) -> None:
    """``units`` units (Poisson spike trains of 1–20 Hz, a depth and a quality each), ``trials`` trials (a
    condition each), a Position over the session and an EventsTable of licks: the session the viewer's
    benchmark opens."""
    rng = np.random.default_rng(41)
    nwb.add_unit_column("depth", "depth of the unit along the probe (µm)")
    nwb.add_unit_column("quality", "curation label")
    for unit in range(units):
        count = rng.poisson(rng.uniform(1.0, 20.0) * duration)
        spikes = np.sort(rng.uniform(0.0, duration, count))
        quality = "good" if unit % 3 else "mua"
        nwb.add_unit(
            spike_times=spikes, electrodes=[unit % channels], depth=float(rng.uniform(0, 3840)), quality=quality
        )
    nwb.add_trial_column("condition", "the side of the cue")
    for trial in range(trials):
        start = trial * duration / trials
        nwb.add_trial(
            start_time=start, stop_time=start + 0.8 * duration / trials, condition=("left", "right")[trial % 2]
        )
    behavior = nwb.create_processing_module(name="behavior", description="behaviour")
    angle = np.linspace(0, 8 * np.pi, int(duration * 50))
    position = Position(name="Position")
    track = np.stack([np.cos(angle), np.sin(angle)], axis=1) * 0.5
    position.create_spatial_series(name="track", data=track, reference_frame="arena centre", rate=50.0, unit="meters")
    behavior.add(position)
    licks = nwb.create_events_table(name="licks", description="lick times")
    for onset in np.sort(rng.uniform(0.0, duration, 500)):
        licks.add_row(timestamp=float(onset))


# --- a probe of 384 channels whose electrodes give their depth -------------------------------------------
PROBE_CHANNELS, PROBE_SAMPLES, PROBE_RATE = 384, 3000, 1000.0
#: Each channel's depth along the probe: not channel order (neighbouring channels sit apart).
#: The electrodes of each unit of the probe file (the last names none).
PROBE_UNIT_ELECTRODES = ([5], [100, 3], [7], [])
PROBE_DEPTHS = (np.arange(PROBE_CHANNELS) * 7) % PROBE_CHANNELS * 10.0


def write_probe_file(target):
    """384 channels whose channel ``c`` is a sine of amplitude ``c + 1`` µV (int16 in 0.1 µV steps)."""
    nwb = NWBFile(
        session_description="d", identifier="P", session_start_time=datetime.datetime(2024, 1, 2, tzinfo=tzutc())
    )
    device = nwb.create_device(name="probe")
    group = nwb.create_electrode_group(name="shank", description="s", location="CA1", device=device)
    nwb.add_electrode_column("rel_y", "depth along the probe")
    for depth in PROBE_DEPTHS:
        nwb.add_electrode(group=group, location="CA1", rel_y=float(depth))
    region = nwb.create_electrode_table_region(list(range(PROBE_CHANNELS)), "all")
    phase = np.sin(np.arange(PROBE_SAMPLES) * 2 * np.pi / 100)[:, None]
    values = np.round(phase * (np.arange(PROBE_CHANNELS) + 1) * 10).astype("int16")
    nwb.add_acquisition(ElectricalSeries(name="es", data=values, electrodes=region, rate=PROBE_RATE, conversion=1e-7))
    for electrodes in PROBE_UNIT_ELECTRODES:  # units on electrodes of known depth, and one on none
        nwb.add_unit(spike_times=[0.5, 1.0], electrodes=electrodes)
    with NWBZarrIO(target, mode="w") as io:
        io.write(nwb)
    return target


# --- hostile files: small on disk, huge by their metadata, values JSON cannot hold ---------------------------
#: What the hostile file declares: a 40000 x 40000 image, 8000 x 8000 float frames and image masks, a table of
#: 2**28 rows, a channel_conversion of 2**28 values, a series whose one chunk decodes to 512 MiB.
HUGE_IMAGE, HUGE_FRAME, HUGE_ROWS = (40_000, 40_000), (8_000, 8_000), 2**28


def declare(target, node: str, shape, chunks) -> None:
    """Make the array ``node`` of the file at ``target`` declare ``shape`` and ``chunks`` (its own zarr.json and
    the root's consolidated copy) with no chunk stored and no promise that every chunk is (so missing chunks
    read as the fill value): a file of a few KiB that is huge by its metadata."""
    import shutil
    from pathlib import Path

    from hdmf_zarr3.format.vocabulary import ALL_CHUNKS_ATTR

    def change(doc):
        doc["shape"] = list(shape)
        doc["chunk_grid"]["configuration"]["chunk_shape"] = list(chunks)
        doc["attributes"].pop(ALL_CHUNKS_ATTR, None)

    edit_document(target, node, change)
    folder = Path(target) / node.strip("/")
    for stored in folder.iterdir():  # the chunks written for the small shape
        if stored.name != "zarr.json":
            shutil.rmtree(stored) if stored.is_dir() else stored.unlink()


def edit_document(target, node: str, change) -> None:
    """Apply ``change(doc)`` to the zarr.json of ``node`` and to its copy in the root's consolidated metadata."""
    import json
    from pathlib import Path

    folder = Path(target) / node.strip("/")
    for key in [folder / "zarr.json", Path(target) / "zarr.json"]:
        doc = json.loads(key.read_text())
        change(doc if key.parent == folder else doc["consolidated_metadata"]["metadata"][node.strip("/")])
        key.write_text(json.dumps(doc))


def store_zero_chunk(target, node: str) -> None:
    """Store the first chunk of the array ``node`` as gzip-compressed zeros (compressed piece by piece: a chunk of
    512 MiB takes half a MiB on disk and never 512 MiB in the writing process)."""
    import json
    import math
    import zlib
    from pathlib import Path

    folder = Path(target) / node.strip("/")
    doc = json.loads((folder / "zarr.json").read_text())
    size = math.prod(doc["chunk_grid"]["configuration"]["chunk_shape"]) * np.dtype(doc["data_type"]).itemsize
    gzip = {"name": "gzip", "configuration": {"level": 1}}
    edit_document(target, node, lambda d: d.update(codecs=[d["codecs"][0], gzip]))
    separator = doc["chunk_key_encoding"]["configuration"]["separator"]
    key = folder / separator.join(["c", *["0"] * len(doc["shape"])])
    key.parent.mkdir(parents=True, exist_ok=True)
    packer, piece = zlib.compressobj(1, zlib.DEFLATED, 31), bytes(2**24)
    with open(key, "wb") as out:
        for start in range(0, size, len(piece)):
            out.write(packer.compress(piece[: min(len(piece), size - start)]))
        out.write(packer.flush())


def hostile_nwbfile() -> NWBFile:
    """The containers of :func:`write_hostile_viewer_file`, before their arrays are made huge."""
    nwb = NWBFile(session_description="hostile", identifier="HOSTILE", session_start_time=_START)
    times = np.array([np.nan, 0.1, 0.2, np.inf, 0.4, 0.5, -np.inf, 0.7, 0.8, np.nan])
    values = np.array([1.0, np.nan, 3.0, np.inf, 5.0, -np.inf, 7.0, 8.0, 9.0, 10.0])
    nwb.add_acquisition(TimeSeries(name="bad_times", data=values, timestamps=times, unit="V"))
    nwb.add_acquisition(TimeSeries(name="huge_chunk", data=np.zeros(16, dtype="int16"), rate=1000.0, unit="V"))
    nwb.add_acquisition(TimeSeries(name="zero_rate", data=np.zeros(16), rate=1000.0, unit="V"))
    nwb.add_acquisition(TimeSeries(name="short_times", data=np.zeros(16), timestamps=np.arange(16.0), unit="V"))
    nwb.add_acquisition(
        Images(
            name="huge_images",
            images=[GrayscaleImage(name=name, data=np.zeros((4, 4), "uint8")) for name in ("huge", "tiny_chunks")],
        )
    )
    nwb.add_acquisition(TimeSeries(name="tiny_chunks", data=np.zeros(16, dtype="int16"), rate=1000.0, unit="V"))
    frames = np.zeros((2, 4, 4), dtype="float64")
    nwb.add_acquisition(ImageSeries(name="huge_movie", data=frames, unit="n.a.", rate=10.0))
    device = nwb.create_device(name="probe")
    group = nwb.create_electrode_group(name="shank", description="a shank", location="CA1", device=device)
    for _ in range(4):
        nwb.add_electrode(group=group, location="CA1")
    region = nwb.create_electrode_table_region([0, 1, 2, 3], "all")
    series = ElectricalSeries(
        name="huge_conversion",
        data=np.ones((100, 4), "int16"),
        electrodes=region,
        rate=1000.0,
        channel_conversion=np.ones(4, "float32"),
    )
    nwb.add_acquisition(series)
    plane = _imaging_plane(nwb, device)
    module = nwb.create_processing_module(name="hostile_ophys", description="no mean image here")
    segmentation = ImageSegmentation()
    module.add(segmentation)
    far = segmentation.create_plane_segmentation(name="far_pixels", description="far", imaging_plane=plane)
    far.add_roi(pixel_mask=[(0, 0, 1.0), (7999, 7999, 1.0)])
    far.add_roi(pixel_mask=[(10, 10, 1.0)])
    farther = segmentation.create_plane_segmentation(name="farther_pixels", description="far", imaging_plane=plane)
    farther.add_roi(pixel_mask=[(10, 10, 1.0), (4_000_000_000, 3, 1.0)])
    clipped_module = nwb.create_processing_module(name="clipped_ophys", description="a 24 x 24 mean image")
    clipped_module.add(Images(name="summary", images=[GrayscaleImage(name="mean", data=np.ones((24, 24)))]))
    clipped_segmentation = ImageSegmentation()
    clipped_module.add(clipped_segmentation)
    clipped = clipped_segmentation.create_plane_segmentation(name="cells", description="c", imaging_plane=plane)
    clipped.add_roi(pixel_mask=[(1, 2, 1.0), (7999, 7999, 1.0), (4_000_000_000, 5, 1.0)])
    big = segmentation.create_plane_segmentation(name="big_masks", description="big", imaging_plane=plane)
    for _ in range(2):
        big.add_roi(image_mask=np.ones((4, 4), "float32"))
    nwb.add_time_intervals(_huge_intervals())
    wide = TimeIntervals(name="wide_table", description="250 columns")
    for column in range(250):
        wide.add_column(name=f"c{column}", description="a column")
    for i in range(2):
        wide.add_interval(start_time=float(i), stop_time=float(i) + 0.5, **{f"c{c}": float(c) for c in range(250)})
    nwb.add_time_intervals(wide)
    return nwb


def _huge_intervals():
    intervals = TimeIntervals(name="huge_table", description="2**28 rows by its metadata")
    for i in range(4):
        intervals.add_interval(start_time=float(i), stop_time=float(i) + 0.5)
    return intervals


_START = datetime.datetime(2024, 1, 2, tzinfo=tzutc())


def write_hostile_viewer_file(target):
    """An NWB file of a few MiB that asks a viewer for gigabytes: :data:`HUGE_IMAGE` pixels of an image, frames
    and image masks of :data:`HUGE_FRAME` floats, a pixel mask reaching (7999, 7999) and 4e9 with no image to
    bound it, a table and a channel_conversion of :data:`HUGE_ROWS` values, a series of one 512 MiB chunk (stored);
    an image and a series of one-element chunks (1.6e9 and 2**27 of them), a series of rate 0, one of 2**20
    samples and 16 timestamps, NaN and infinite timestamps and values. Returns ``target``."""
    with NWBZarrIO(target, mode="w") as io:
        io.write(hostile_nwbfile())
    declare(target, "/acquisition/huge_images/huge", HUGE_IMAGE, (4000, 4000))
    declare(target, "/acquisition/huge_images/tiny_chunks", HUGE_IMAGE, (1, 1))  # 1.6e9 chunks of one pixel
    declare(target, "/acquisition/tiny_chunks/data", (2**27,), (1,))  # 2**27 chunks of one sample
    declare(target, "/acquisition/huge_movie/data", (2, *HUGE_FRAME), (1, 1000, 1000))
    declare(target, "/acquisition/huge_chunk/data", (HUGE_ROWS,), (HUGE_ROWS,))
    store_zero_chunk(target, "/acquisition/huge_chunk/data")  # stored for real: decoding it takes 512 MiB
    declare(target, "/acquisition/short_times/data", (2**20,), (4096,))  # 16 timestamps for 2**20 samples
    rate = {"zarr_dtype": "float64", "value": 0.0}
    edit_document(target, "/acquisition/zero_rate/starting_time", lambda doc: doc["attributes"].update(rate=rate))
    declare(target, "/acquisition/huge_conversion/channel_conversion", (HUGE_ROWS,), (2**20,))
    declare(
        target, "/processing/hostile_ophys/ImageSegmentation/big_masks/image_mask", (2, *HUGE_FRAME), (1, 1000, 1000)
    )
    for column in ("id", "start_time", "stop_time"):
        declare(target, f"/intervals/huge_table/{column}", (HUGE_ROWS,), (2**20,))
    return target


def _imaging_plane(nwb, device):
    """The fixture's imaging plane (a green channel over V1), on ``device``."""
    channel = OpticalChannel(name="green", description="green", emission_lambda=520.0)
    return nwb.create_imaging_plane(
        name="plane",
        optical_channel=channel,
        description="a plane",
        device=device,
        excitation_lambda=920.0,
        imaging_rate=30.0,
        indicator="GCaMP6f",
        location="V1",
    )
