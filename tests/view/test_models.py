"""The viewer's models, without HTTP: the tree, node details, table pages, series windows, image frames."""

from __future__ import annotations

import numpy as np
import pytest
from viewer_files import CHANNELS, RATE, SAMPLES, decode_png, viewer_nwbfile

from hdmf_zarr3.errors import ViewRequestError
from hdmf_zarr3.view import display, images, lanes, rois, series, spikes, tables, timeline, tree


def _find(entry, path):
    if entry["path"] == path:
        return entry
    for child in entry.get("children", []):
        found = _find(child, path)
        if found:
            return found
    return None


def test_tree_shows_nwb_types_views_arrays_and_links(opened):
    root = tree.tree(opened)["root"]
    es = _find(root, "/acquisition/ElectricalSeries")
    assert es["type"] == "core:ElectricalSeries" and es["views"] == ["series"]
    data = _find(root, "/acquisition/ElectricalSeries/data")
    assert data["shape"] == [SAMPLES, CHANNELS] and data["dtype"] == "int16"
    assert _find(root, "/units")["views"] == ["table", "raster"]
    assert _find(root, "/intervals/trials")["type"] == "core:TimeIntervals"
    assert _find(root, "/acquisition/movie")["views"] == ["image"]
    assert set(_find(root, "/processing/ophys/ImageSegmentation/cells")["views"]) == {"image", "table"}
    link = _find(root, "/acquisition/two_photon/imaging_plane")
    assert link == {
        "name": "imaging_plane",
        "path": "/acquisition/two_photon/imaging_plane",
        "kind": "link",
        "target": "/general/optophysiology/plane",
    }


def test_node_details_of_an_array_say_its_storage_and_first_values(opened):
    details = tree.node(opened, "/acquisition/ElectricalSeries/data")
    assert details["chunks"] == [4096, CHANNELS] and details["shards"] is None
    assert details["codecs"][0] == "bytes" and details["codecs"][1].startswith("blosc")
    assert details["logical_bytes"] == SAMPLES * CHANNELS * 2 and 0 < details["stored_bytes"]
    assert len(details["preview"]) == tree.PREVIEW_ITEMS and details["attributes"]["unit"] == "volts"
    assert [len(row) for row in details["preview"]] == [CHANNELS] * tree.PREVIEW_ITEMS
    movie = tree.node(opened, "/acquisition/movie/data")["preview"]
    assert len(movie) == 6 and len(movie[0]) == 16  # a corner of each frame: its first column


def test_node_details_give_references_as_paths_to_jump_to(opened):
    region = tree.node(opened, "/acquisition/ElectricalSeries/electrodes")
    assert region["attributes"]["table"] == {"ref": "/general/extracellular_ephys/electrodes"}
    group = tree.node(opened, "/general/extracellular_ephys/electrodes/group")
    assert group["preview"][0] == {"ref": "/general/extracellular_ephys/shank0"}
    series_node = tree.node(opened, "/acquisition/two_photon")
    assert series_node["links"] == {"imaging_plane": "/general/optophysiology/plane"}
    with pytest.raises(ViewRequestError) as caught:
        tree.node(opened, "/acquisition/nothing")
    assert caught.value.status == 404 and caught.value.path == "/acquisition/nothing"


def test_a_table_page_shows_ragged_region_and_reference_columns_readably(opened):
    page = tables.table_page(opened, "/units", start=0, count=3)
    names = [c["name"] for c in page["columns"]]
    assert page["rows"] == 4 and names[0] == "id" and {"spike_times", "quality", "electrodes"} <= set(names)
    spikes = page["data"][0][names.index("spike_times")]
    assert spikes == {"items": [0.1, 0.2, 0.3], "count": 3}
    electrodes = page["columns"][names.index("electrodes")]
    assert electrodes["kind"] == "ragged region" and electrodes["target"] == "/general/extracellular_ephys/electrodes"
    electrode_page = tables.table_page(opened, "/general/extracellular_ephys/electrodes", count=2)
    group_column = [c["name"] for c in electrode_page["columns"]].index("group")
    assert electrode_page["data"][1][group_column] == {"text": "shank0", "ref": "/general/extracellular_ephys/shank0"}
    epochs = tables.table_page(opened, "/intervals/epochs")
    cells = dict(zip([c["name"] for c in epochs["columns"]], epochs["data"][0]))
    assert cells["tags"] == {"items": ["run"], "count": 1}
    assert cells["timeseries"] == {"items": [{"text": "speed[0:2]", "ref": "/acquisition/speed"}], "count": 1}


def test_a_table_sorts_by_a_column_and_pages(opened):
    page = tables.table_page(opened, "/intervals/trials", sort="score", start=1, count=3)
    assert [row[3] for row in page["data"]] == [1.0, 3.0, 4.0] and page["row_numbers"] == [3, 0, 2]
    last = tables.table_page(opened, "/intervals/trials", sort="stop_time", descending=True, count=2)
    assert last["row_numbers"] == [4, 3]
    down = tables.table_page(opened, "/units", sort="spike_times", descending=True, count=4)
    assert [row[0] for row in down["data"]] == [3, 0, 2, 1]  # by the number of spikes
    masks = tables.table_page(opened, "/processing/ophys/ImageSegmentation/cells", count=3)
    assert masks["data"][0][1] == "[24×24 float32]"
    with pytest.raises(ViewRequestError, match="no column"):
        tables.table_page(opened, "/units", sort="nope")
    with pytest.raises(ViewRequestError, match="no table"):
        tables.table_page(opened, "/acquisition/ElectricalSeries")


def test_a_short_window_is_sent_as_it_is_with_time_and_units(opened):
    out = series.window(opened, "/acquisition/ElectricalSeries", start=2.0, stop=2.1, channels=[0, 3])
    assert out["decimation"] == "none" and out["unit"] == "volts" and out["channels"] == [0, 3]
    assert out["t"][0] == 2.0 and abs(out["t"][-1] - 2.1) < 1e-9 and len(out["t"]) == 101
    stored = np.sin(2 * np.pi * 4 * np.arange(101) / RATE) * 1000
    assert np.allclose(out["min"][1], stored.astype("int16") * 1e-6)  # conversion applied
    stamped = series.window(opened, "/acquisition/speed", start=1.6, stop=3.0)
    assert stamped["t"] == [2.0, 2.5, 3.0] and stamped["min"][0] == [2.0, 3.0, 4.0]


def test_a_long_window_is_min_max_per_pixel_column_and_bounded(opened):
    out = series.window(opened, "/acquisition/ElectricalSeries", start=0, stop=1e9, width=100)
    assert out["decimation"] == "minmax" and len(out["t"]) == 100 and out["first"] == 0 and out["last"] == SAMPLES
    assert len(out["min"]) == series.DEFAULT_CHANNELS and all(len(c) <= 200 for c in out["min"] + out["max"])
    assert abs(min(out["min"][0]) + 1000e-6) < 2e-6 and abs(max(out["max"][0]) - 1000e-6) < 2e-6


def test_past_the_decode_budget_each_bin_decodes_one_chunk(opened, monkeypatch):
    monkeypatch.setattr(series, "DECODE_BYTES", 5 * 4096 * CHANNELS * 2)  # five of the window's eight chunks
    monkeypatch.setattr(series, "MIN_RUNS", 5)
    reads = []
    rows = series._rows
    monkeypatch.setattr(series, "_rows", lambda data, lo, hi, *a: reads.append((lo, hi)) or rows(data, lo, hi, *a))
    out = series.window(opened, "/acquisition/ElectricalSeries", start=0, stop=1e9, width=300)
    assert out["decimation"] == "minmax-sampled" and len(out["t"]) == 5 and len(reads) == 5
    chunks = [lo // 4096 for lo, hi in reads]
    assert all(lo // 4096 == (hi - 1) // 4096 for lo, hi in reads) and len(set(chunks)) == 5  # one chunk each
    assert out["t"][0] == 2.0 and all(v is not None for v in out["min"][0])


def test_an_exact_window_decodes_each_chunk_once(opened, monkeypatch):
    reads = []
    rows = series._rows
    monkeypatch.setattr(series, "BLOCK_VALUES", 4096 * CHANNELS * 2)  # two chunks per read
    monkeypatch.setattr(series, "_rows", lambda data, lo, hi, *a: reads.append((lo, hi)) or rows(data, lo, hi, *a))
    out = series.window(opened, "/acquisition/ElectricalSeries", start=2.5, stop=30, width=500)
    assert out["decimation"] == "minmax" and reads[0][0] == 500 and reads[-1][1] == 28001
    assert all(hi - lo <= 2 * 4096 and lo // 8192 == (hi - 1) // 8192 for lo, hi in reads)
    monkeypatch.undo()
    whole = series.window(opened, "/acquisition/ElectricalSeries", start=2.5, stop=30, width=500)
    assert whole["min"] == out["min"] and whole["max"] == out["max"]


def test_a_timestamps_search_reads_each_chunk_once(tmp_path):
    from pynwb import TimeSeries

    from hdmf_zarr3 import NWBZarrIO, ZarrDataIO
    from hdmf_zarr3.view.viewed_file import ViewedFile

    nwb = viewer_nwbfile()
    stamps = np.arange(100_000) * 0.001 + 0.5
    data = ZarrDataIO(np.arange(100_000, dtype="float32"), chunks=(1000,))
    nwb.add_acquisition(TimeSeries(name="stamped", data=data, timestamps=ZarrDataIO(stamps, chunks=(1000,)), unit="V"))
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="w") as io:
        io.write(nwb)
    opened = ViewedFile(str(tmp_path / "f.nwb.zarr"))
    try:
        timestamps = opened.nwbfile.acquisition["stamped"].timestamps
        reads = []
        original = type(timestamps).__getitem__
        type(timestamps).__getitem__ = lambda self, key: (
            (self is timestamps and reads.append(key)) or original(self, key)
        )
        try:
            out = series.window(opened, "/acquisition/stamped", start=50.0, stop=50.5)
        finally:
            type(timestamps).__getitem__ = original
        assert out["first"] == 49_500 and out["last"] == 50_001 and out["t"][0] == 50.0
        assert len(reads) <= 2 * 8 + 2  # two searches over 100 chunks, then the window's times
    finally:
        opened.close()


def test_series_requests_out_of_range_are_typed_errors(opened):
    with pytest.raises(ViewRequestError, match="channels"):
        series.window(opened, "/acquisition/ElectricalSeries", channels=[99])
    with pytest.raises(ViewRequestError, match="no TimeSeries"):
        series.window(opened, "/units")


def test_frames_of_movies_two_photon_and_images_are_pngs(opened):
    assert images.image_info(opened, "/acquisition/movie")["frames"] == 6
    frame = decode_png(images.frame_png(opened, "/acquisition/movie", 2))
    expected = (np.arange(6 * 16 * 20).reshape(6, 16, 20) % 251).astype("uint8")[2]
    assert np.array_equal(frame, expected)  # uint8 frames are shown as they are
    assert decode_png(images.frame_png(opened, "/acquisition/two_photon", 3)).shape == (24, 24)
    info = images.image_info(opened, "/processing/ophys/summary_images")
    assert info["names"] == ["mean"]
    with pytest.raises(ViewRequestError, match="frame 9"):
        images.frame_png(opened, "/acquisition/movie", 9)


def test_plane_segmentation_masks_are_drawn_over_the_mean_image(opened):
    pixels = decode_png(images.frame_png(opened, "/processing/ophys/ImageSegmentation/cells", 0))
    assert pixels.shape == (24, 24, 3)
    inside, outside = pixels[3, 4], pixels[20, 1]
    assert inside[0] > inside[2] and outside[0] == outside[1] == outside[2]  # red ROI 0; gray background


def test_colour_frames_and_large_frames():
    rgb = np.zeros((4, 5, 3), dtype="uint8")
    rgb[..., 0] = 200
    assert np.array_equal(decode_png(images.png(images._picture(rgb, "/x"))), rgb)
    big = np.arange(3000 * 3000, dtype="float32").reshape(3000, 3000)
    shown = decode_png(images.png(images._picture(big, "/x")))
    assert shown.shape == (1500, 1500) and shown[0, 0] == 0 and shown[-1, -1] == 255  # every 2nd pixel, stretched
    with pytest.raises(ViewRequestError, match="no picture"):
        images._picture(np.zeros((2, 2, 5)), "/x")


def test_the_details_of_a_scalar_read_with_the_file_give_its_value(opened):
    """A scalar dataset read when the file opens (``starting_time``) is a numpy scalar, which has a shape but no
    storage to describe: its details give its value (they were a 500, ``AttributeError: ... 'filters'``)."""
    details = tree.node(opened, "/acquisition/ElectricalSeries/starting_time")
    assert details["value"] == 2.0 and details["shape"] == []


def test_a_window_names_its_lanes_by_electrode_and_brings_the_intervals_it_overlaps(opened, monkeypatch):
    """Lanes were ``ch N`` and trials and epochs were not shown (issue #41, point 2)."""
    window = series.window(opened, "/acquisition/ElectricalSeries", channels=[2, 5], width=200)
    assert window["labels"] == ["e2 shank0 CA1", "e5 shank0 CA1"]
    bands = {entry["name"]: entry["bands"] for entry in window["intervals"]}
    assert bands == {"epochs": [[1.0, 2.0]], "trials": [[2.0, 2.5], [3.0, 3.5], [4.0, 4.5]]}
    later = series.window(opened, "/acquisition/ElectricalSeries", start=10.0, stop=20.0, width=200)
    assert {entry["name"]: entry["bands"] for entry in later["intervals"]} == {"epochs": [], "trials": []}
    speed = series.window(opened, "/acquisition/speed", width=200)
    assert speed["labels"] is None  # no electrodes: the page numbers the lanes
    monkeypatch.setattr(lanes, "BAND_ROWS", 2)  # a table too long to read whole is named, its bands left out
    left = {e["name"]: e for e in series.window(opened, "/acquisition/speed", width=200)["intervals"]}
    assert left["trials"]["bands"] == [] and "5 rows" in left["trials"]["left_out"]
    assert left["epochs"]["bands"] == [[1.0, 2.0]]


def test_an_interval_table_is_a_timeline_on_lines_by_a_column(opened, monkeypatch):
    """Interval tables were tables only (issue #41, point 4)."""
    assert tree.node(opened, "/intervals/trials")["views"] == ["table", "timeline"]
    found = timeline.timeline(opened, "/intervals/trials", group="score")
    assert found["rows"] == found["shown"] == 5 and found["groupable"] == ["score"]
    assert found["lines"] == [3.0, 1.0, 4.0, 5.0]
    assert found["bands"] == [[0.0, 0.5, 0], [1.0, 1.5, 1], [2.0, 2.5, 2], [3.0, 3.5, 1], [4.0, 4.5, 3]]
    one_line = timeline.timeline(opened, "/intervals/trials")
    assert one_line["lines"] == ["all"] and {band[2] for band in one_line["bands"]} == {0}
    assert timeline.timeline(opened, "/intervals/epochs")["groupable"] == []  # tags are ragged
    with pytest.raises(ViewRequestError, match="choose one of score"):
        timeline.timeline(opened, "/intervals/trials", group="start_time")
    with pytest.raises(ViewRequestError, match="no interval table"):
        timeline.timeline(opened, "/units")
    monkeypatch.setattr(timeline, "GROUPS", 2)
    assert timeline.timeline(opened, "/intervals/trials", group="score")["lines"] == [3.0, 1.0, "other"]
    monkeypatch.setattr(timeline, "TIMELINE_ROWS", 2)  # a long table: its first rows, and how many it has
    first = timeline.timeline(opened, "/intervals/trials")
    assert first["rows"] == 5 and first["shown"] == 2 and len(first["bands"]) == 2


def test_a_units_table_is_a_raster_in_the_order_of_a_column_and_a_psth_against_trials(opened, monkeypatch):
    """Units were a table only (issue #41, point 3)."""
    assert tree.node(opened, "/units")["views"] == ["table", "raster"]
    found = spikes.raster(opened, "/units", None, None, None)
    assert (found["start"], found["stop"]) == (0.1, 10.1) and found["sortable"] == ["quality", "electrode depth"]
    assert [r["times"] for r in found["rows"]] == [[0.1, 0.2, 0.3], [1.5], [0.7, 0.9], [2.5, 2.6, 2.7, 2.8]]
    by_quality = spikes.raster(opened, "/units", 0.0, 2.0, "quality")  # good, good, mua, noise
    assert [r["row"] for r in by_quality["rows"]] == [0, 2, 3, 1] and by_quality["rows"][2]["times"] == []
    psth = spikes.psth(opened, "/units", [0, 3], "/intervals/trials", before=0.5, after=1.0, bins=3, group="score")
    assert psth["edges"] == [-0.5, 0.0, 0.5, 1.0] and psth["events"] == 5 and psth["groups"] == [3.0, 1.0, 4.0, 5.0]
    first, last = psth["units"]
    assert first["rates"]["3.0"] == [0.0, 6.0, 0.0]  # 3 spikes in one trial's 0.5 s bin: 6 per second
    assert last["rates"]["1.0"] == [4.0, 0.0, 0.0] and last["rates"]["4.0"] == [0.0, 0.0, 8.0]
    assert last["trials"][3] == [-0.5, -0.4, -0.3, -0.2]  # the trial at 3 s, its spikes before it
    for bad, message in [
        ({"chosen": [9]}, "choose 1 to"),
        ({"align": "/units"}, "align to a time column"),
        ({"group": "start_time_index"}, "no such column"),
        ({"bins": 10_000}, "bins"),
    ]:
        args = {"chosen": [0], "align": "/intervals/trials", "before": 0.5, "after": 1.0, "bins": 3, **bad}
        with pytest.raises(ViewRequestError, match=message):
            spikes.psth(opened, "/units", args.pop("chosen"), args.pop("align"), **args)
    monkeypatch.setattr(spikes, "SPIKE_VALUES", 5)  # spike times past what one request reads: refused by name
    with pytest.raises(ViewRequestError, match="10 spike times") as refused:
        spikes.raster(opened, "/units", None, None, None)
    assert refused.value.status == 413


def test_table_rows_are_filtered_by_a_column_value(opened):
    """No search in tables (issue #41, point 7): text contains (any case), numbers equal, sorts still apply."""
    good = tables.table_page(opened, "/units", where="quality", equals="GOO")
    assert good["row_numbers"] == [0, 2] and good["matched"] == 2 and good["rows"] == 4
    assert tables.table_page(opened, "/units", where="id", equals="3")["row_numbers"] == [3]
    by_score = tables.table_page(
        opened, "/intervals/trials", where="score", equals="1", sort="start_time", descending=True
    )
    assert by_score["row_numbers"] == [3, 1] and by_score["matched"] == 2
    assert tables.table_page(opened, "/units", where="quality", equals="nothing")["row_numbers"] == []
    with pytest.raises(ViewRequestError, match="holds numbers"):
        tables.table_page(opened, "/intervals/trials", where="score", equals="high")
    with pytest.raises(ViewRequestError, match="no column"):
        tables.table_page(opened, "/units", where="nope", equals="x")


def test_a_segmentation_gives_the_traces_of_its_rois_and_the_roi_under_a_pixel(opened):
    """Masks were shown without their traces, and "masks over the mean image" was printed over black where the
    file had none (issue #41, point 6)."""
    cells = "/processing/ophys/ImageSegmentation/cells"
    found = rois.traces(opened, cells)
    assert found["rows"] == 3 and found["mask_shape"] == [24, 24]
    assert found["traces"] == [
        {
            "path": "/processing/ophys/Fluorescence/RoiResponseSeries",
            "name": "RoiResponseSeries",
            "columns": [1, None, 0],
        }
    ]
    assert rois.roi_at(opened, cells, 3, 4)["rois"] == [0] and rois.roi_at(opened, cells, 15, 14)["rois"] == [2]
    assert rois.roi_at(opened, cells, 0, 0)["rois"] == []
    with pytest.raises(ViewRequestError, match="outside the masks"):
        rois.roi_at(opened, cells, 24, 0)
    with pytest.raises(ViewRequestError, match="no plane segmentation"):
        rois.traces(opened, "/units")
    assert images.image_info(opened, cells)["background"] == "the image 'mean'"


def test_a_segmentation_without_a_mean_image_says_so(tmp_path):
    from hdmf_zarr3 import NWBZarrIO
    from hdmf_zarr3.view.viewed_file import ViewedFile

    nwb = viewer_nwbfile()
    nwb.processing["ophys"].data_interfaces.pop("summary_images")  # no mean image left to draw the masks over
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="w") as io:
        io.write(nwb)
    opened = ViewedFile(str(tmp_path / "f.nwb.zarr"))
    try:
        assert images.image_info(opened, "/processing/ophys/ImageSegmentation/cells")["background"] is None
    finally:
        opened.close()


def test_a_frame_is_shown_with_the_contrast_and_colour_map_asked_and_has_its_time(opened):
    """No contrast or colour control, no colour bar, no frame time (issue #41, point 6)."""
    movie = "/acquisition/two_photon"
    gray = decode_png(images.frame_png(opened, movie, 0))
    assert gray.ndim == 2
    viridis = decode_png(images.frame_png(opened, movie, 0, display.contrast(0.5, 99.5, "viridis", movie)))
    assert viridis.shape == (*gray.shape, 3) and tuple(viridis[gray == gray.min()][0]) == (68, 1, 84)
    narrow = decode_png(images.frame_png(opened, movie, 0, display.contrast(40.0, 60.0, "gray", movie)))
    assert (narrow == 0).sum() > (gray == 0).sum() and (narrow == 255).sum() > (gray == 255).sum()
    for low, high, colours, message in [
        (60.0, 40.0, "gray", "percentiles"),
        (0.0, 101.0, "gray", "percentiles"),
        (0.5, 99.5, "rainbow", "choose one of"),
    ]:
        with pytest.raises(ViewRequestError, match=message):
            display.contrast(low, high, colours, movie)
    assert images.image_info(opened, movie)["rate"] == 30.0
    info = images.image_info(opened, "/acquisition/movie")
    assert info["rate"] == 10.0 and info["starting_time"] == 0.0


def test_the_mean_waveforms_of_chosen_units(opened):
    """waveform_mean printed as unbracketed 16-digit floats in the table only (issue #41, point 3)."""
    found = spikes.waveforms(opened, "/units", [0, 3])
    assert found["channels"] == 2 and found["unit"] == "volts" and [u["row"] for u in found["units"]] == [0, 3]
    first, last = (u["channels"] for u in found["units"])
    assert len(first) == 2 and len(first[0]) == 30
    assert np.allclose(last[0], np.array(first[0]) * 4) and min(first[0]) == pytest.approx(-60.0, abs=0.5)
    assert spikes.raster(opened, "/units", None, None, None)["waveforms"] is True
    with pytest.raises(ViewRequestError, match="choose 1 to"):
        spikes.waveforms(opened, "/units", [4])


@pytest.mark.parametrize("span_bytes", [tables.SPAN_BYTES, 24, 8])
def test_the_ragged_cells_of_a_page_are_read_by_as_few_requests_as_their_bounds_allow(span_bytes, monkeypatch):
    """Neighbouring rows' cells come from one read of their span (a page of a Units table read its spike times
    once per row), a span never past ``SPAN_BYTES``; the cells are what one read per row gives, empty and
    backwards rows included."""
    monkeypatch.setattr(tables, "SPAN_BYTES", span_bytes)
    data = np.arange(100.0)  # float64: 8 bytes a value
    reads = []

    class Counted:
        shape, dtype = data.shape, data.dtype

        def __getitem__(self, key):
            reads.append((key.start, key.stop))
            return data[key]

    bounds = [(0, 3), (3, 3), (5, 2), (3, 6), (90, 100), (6, 8), (-3, 2)]  # (-3: a damaged index)
    cells = tables._spans(Counted(), bounds)
    assert [list(c) for c in cells] == [list(data[lo:hi]) if hi > lo else [] for lo, hi in bounds]
    assert all((stop - start) * 8 <= max(span_bytes, 8 * 10) for start, stop in reads)
    if span_bytes >= 800:  # (the default)
        assert reads == [(-3, 2), (0, 100)]  # (the damaged bound alone, every other row at once)
    else:
        assert len(reads) > 1 and sorted(reads) == reads
