"""The page in a real browser: headless Chromium loads it for a file with ecephys, units, trials and an
ImageSeries, runs its JavaScript, and the rendered DOM shows the tree, a table and a plotted window."""

from __future__ import annotations

import re

import pytest
from browser_pages import render

from hdmf_zarr3.view.server import ViewServer
from hdmf_zarr3.view.viewed_file import ViewedFile


@pytest.fixture(scope="module")
def viewer(viewer_file):
    with ViewServer(ViewedFile(viewer_file)) as server:
        yield server


def test_the_page_shows_the_tree_and_plots_a_window_of_an_electrical_series(viewer, tmp_path):
    dom = render(viewer.url + "#node=/acquisition/ElectricalSeries", tmp_path)
    nodes = int(re.search(r'id="tree"[^>]*data-nodes="(\d+)"', dom).group(1))
    assert nodes > 50
    for path in ("/acquisition/ElectricalSeries", "/units", "/intervals/trials", "/acquisition/movie"):
        assert f'data-path="{path}"' in dom
    canvas = re.search(r'<canvas id="plot"[^>]*>', dom).group(0)
    assert 'data-state="drawn"' in canvas and 'data-decimation="minmax"' in canvas, dom[-3000:]
    points = int(re.search(r'data-points="(\d+)"', canvas).group(1))
    width = int(re.search(r' width="(\d+)"', canvas).group(1))
    assert 0 < points <= 8 * 2 * width  # eight channels, two points (min and max) per pixel column at most
    assert "samples 0–30000 of 30000" in dom
    # lanes named by electrode, one amplitude scale in the unit's natural prefix, the trials as bands
    assert 'data-lanes="e0 shank0 CA1|e1 shank0 CA1|' in canvas and 'data-scale="1 mV"' in canvas
    assert int(re.search(r'data-bands="(\d+)"', canvas).group(1)) >= 3


def test_the_page_shows_a_table_with_its_ragged_and_region_columns(viewer, tmp_path):
    dom = render(viewer.url + "#node=/units&view=table", tmp_path)
    table = re.search(r'<table class="rows" id="rows" data-rows="4"[^>]*>.*?</table>', dom, re.S).group(0)
    assert ">spike_times<" in table and "[0.1, 0.2, 0.3]" in table
    assert 'href="#node=%2Fgeneral%2Fextracellular_ephys%2Felectrodes"' in table  # a region is a jump


def test_the_page_shows_a_frame_of_the_image_series(viewer, tmp_path):
    dom = render(viewer.url + "#node=/acquisition/movie", tmp_path)
    image = re.search(r'<img id="frame"[^>]*>', dom).group(0)
    assert 'data-loaded="1"' in image and "frame 1 of 6 · 0 s" in dom and 'id="frame-slider"' in dom
    assert 'id="colour-bar"' in dom and 'data-colours="gray"' in dom and 'id="contrast-low"' in dom


def test_the_page_draws_an_interval_table_as_a_timeline_on_lines_by_a_column(viewer, tmp_path):
    dom = render(viewer.url + "#node=/intervals/trials&view=timeline&group=score", tmp_path)
    canvas = re.search(r'<canvas id="timeline"[^>]*>', dom).group(0)
    assert 'data-bands="5"' in canvas and 'data-lines="4"' in canvas and 'data-state="drawn"' in canvas
    assert '<option value="score">score</option>' in dom and "(5 rows)" in dom


def test_the_page_draws_the_units_as_a_raster_and_a_psth_against_the_trials(viewer, tmp_path):
    dom = render(viewer.url + "#node=/units&view=raster&sort=quality", tmp_path)
    raster = re.search(r'<canvas id="raster"[^>]*>', dom).group(0)
    assert 'data-units="4"' in raster and 'data-spikes="10"' in raster and 'data-state="drawn"' in raster
    assert re.search(r'<div id="psth" data-state="drawn">', dom)
    curves = re.search(r'<canvas class="psth"[^>]*>', dom).group(0)
    assert 'data-unit="0"' in curves and 'data-state="drawn"' in curves
    waveform = re.search(r'<canvas class="waveform"[^>]*>', dom).group(0)
    assert 'data-channels="2"' in waveform and 'data-state="drawn"' in waveform


def test_the_tree_and_a_table_are_filtered_from_the_url(viewer, tmp_path):
    dom = render(viewer.url + "#node=/units&view=table&where=quality&equals=good&find=trials", tmp_path)
    table = re.search(r'<table class="rows" id="rows"[^>]*>', dom).group(0)
    assert 'data-matched="2"' in table and "rows 1–2 of 2 matching (of 4)" in dom
    nodes = re.search(r'<div id="tree-nodes">.*?</nav>', dom, re.S).group(0)
    assert 'data-path="/intervals/trials"' in nodes and 'data-path="/acquisition/ElectricalSeries"' not in nodes


def test_the_page_draws_a_spatial_series_as_a_path(viewer, tmp_path):
    dom = render(viewer.url + "#node=/processing/behavior/Position/track", tmp_path)
    canvas = re.search(r'<canvas id="path"[^>]*>', dom).group(0)
    assert 'data-points="400"' in canvas and 'data-state="drawn"' in canvas and "samples 0–400 of 400" in dom


def test_a_path_is_drawn_over_the_time_window_of_the_url(viewer, tmp_path):
    dom = render(viewer.url + "#node=/processing/behavior/Position&view=path&start=2&stop=4", tmp_path)
    canvas = re.search(r'<canvas id="path"[^>]*>', dom).group(0)
    assert 'data-points="41"' in canvas and 'data-state="drawn"' in canvas and "samples 40–81 of 400" in dom
    assert re.search(r'<input type="number" id="window-start"[^>]*value="2"', dom)


def test_behavioural_events_are_drawn_as_ticks(viewer, tmp_path):
    dom = render(viewer.url + "#node=/processing/behavior/BehavioralEvents", tmp_path)
    canvas = re.search(r'<canvas id="events"[^>]*>', dom).group(0)
    assert 'data-lines="2"' in canvas and 'data-ticks="50"' in canvas and 'data-state="drawn"' in canvas


def test_the_page_plots_the_trace_of_a_roi_beside_the_masks(viewer, tmp_path):
    dom = render(viewer.url + "#node=/processing/ophys/ImageSegmentation/cells&view=image", tmp_path)
    assert "masks over the image &#39;mean&#39;" in dom or "masks over the image 'mean'" in dom
    box = re.search(r'<div id="roi-traces"[^>]*>', dom).group(0)
    assert 'data-traces="1"' in box and 'data-roi="0"' in box  # the first ROI with a trace: row 0, its column 1
    canvas = re.search(r'<canvas class="roi-trace"[^>]*>', dom).group(0)
    assert 'data-column="1"' in canvas and 'data-state="drawn"' in canvas


def test_a_probe_of_384_channels_is_plotted_by_a_range_chosen_on_its_minimap(tmp_path):
    """At 64 channels the lanes' labels printed over each other; 384 could not be shown (issue #41, point 2)."""
    from viewer_files import PROBE_CHANNELS, PROBE_DEPTHS, write_probe_file

    path = write_probe_file(tmp_path / "probe.nwb.zarr")
    with ViewServer(ViewedFile(str(path))) as server:
        first = render(server.url + "#node=/acquisition/es", tmp_path)
        chosen = render(server.url + "#node=/acquisition/es&view=series&channels=100-163", tmp_path)
    minimap = re.search(r'<canvas id="minimap"[^>]*>', first).group(0)
    assert f'data-rows="{PROBE_CHANNELS}"' in minimap and 'data-plotted="8"' in minimap, minimap
    assert 'data-state="drawn"' in minimap
    plot = re.search(r'<canvas id="plot"[^>]*>', chosen).group(0)
    lanes = re.search(r'data-lanes="([^"]*)"', plot).group(1).split("|")
    by_depth = sorted(range(100, 164), key=lambda c: -PROBE_DEPTHS[c])
    assert lanes == [f"e{c} shank CA1" for c in by_depth]  # 64 lanes from the URL, deepest first
    assert int(re.search(r'style="height: (\d+)px', plot).group(1)) >= 26 * 64  # the plot grew with them
    assert 'data-plotted="64"' in re.search(r'<canvas id="minimap"[^>]*>', chosen).group(0)
    assert 'value="100-163"' in chosen


def test_the_page_opens_on_the_session_overview(viewer, tmp_path):
    dom = render(viewer.url, tmp_path)
    box = re.search(r'<div id="session">.*?</div>', dom, re.S).group(0)
    for shown in (
        "viewer test session",
        "VIEW1",
        "2024-01-02T03:04:05+00:00",
        "Doe, Jane; Roe, Richard",
        "Mus musculus",
        "P90D",
    ):
        assert shown in box, shown
    assert 'data-path="/acquisition/ElectricalSeries"' in box and 'data-section="processing/ophys"' in box
    assert 'href="#node=%2Facquisition%2FElectricalSeries&amp;view=series"' in box  # straight to its plot
    assert 'class="active" role="tab" data-view="session"' in dom


#: Text a file may hold that a page would run if it were inserted as HTML.
HOSTILE = '<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script><b>bold</b>'


def test_text_from_the_file_is_shown_as_text_and_never_run(tmp_path):
    import datetime

    from dateutil.tz import tzutc
    from pynwb import NWBFile
    from pynwb.file import Subject

    from hdmf_zarr3 import NWBZarrIO

    nwb = NWBFile(
        session_description=HOSTILE,
        identifier=HOSTILE,
        session_start_time=datetime.datetime(2024, 1, 2, tzinfo=tzutc()),
        experimenter=[HOSTILE],
        institution=HOSTILE,
        keywords=[HOSTILE],
        subject=Subject(subject_id=HOSTILE, species=HOSTILE, description=HOSTILE),
    )
    nwb.create_device(name="probe", description=HOSTILE)
    with NWBZarrIO(tmp_path / "hostile.nwb.zarr", mode="w") as io:
        io.write(nwb)
    with ViewServer(ViewedFile(str(tmp_path / "hostile.nwb.zarr"))) as server:
        dom = render(server.url, tmp_path)
    assert "pwned" not in re.search(r"<title>(.*?)</title>", dom).group(1)
    assert "<img src=" not in dom and "<script>document" not in dom and "<b>bold</b>" not in dom
    box = re.search(r'<div id="session">.*?</div>', dom, re.S).group(0)
    assert box.count("&lt;img src=x onerror=") >= 7  # every field, as text


def test_without_the_token_the_page_is_refused(viewer, tmp_path):
    dom = render(viewer.url.split("?")[0], tmp_path)
    assert "403" in dom and 'id="tree"' not in dom
