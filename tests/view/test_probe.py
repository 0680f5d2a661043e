"""A many-channel probe in the series view (issue #41, point 2): lanes named and ordered by their electrodes,
each electrodes column read once for all the window's channels, and a minimap of every channel."""

from __future__ import annotations

import numpy as np
import pytest
from viewer_files import PROBE_CHANNELS, PROBE_DEPTHS, PROBE_UNIT_ELECTRODES, write_probe_file

from hdmf_zarr3.errors import ViewRequestError
from hdmf_zarr3.view import lanes, series, spikes


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    from hdmf_zarr3.view.viewed_file import ViewedFile

    opened = ViewedFile(str(write_probe_file(tmp_path_factory.mktemp("probe") / "probe.nwb.zarr")))
    yield opened
    opened.close()


def test_lanes_are_ordered_by_the_depth_of_their_electrodes(probe):
    """Lanes came in channel order whatever the probe's geometry."""
    window = series.window(probe, "/acquisition/es", channels=[0, 1, 2], width=100)
    assert window["channels"] == sorted([0, 1, 2], key=lambda c: -PROBE_DEPTHS[c])  # the deepest first, as on the probe
    assert window["labels"] == [f"e{c} shank CA1" for c in window["channels"]]
    for lane, channel in enumerate(window["channels"]):  # each lane its own channel's values
        assert window["max"][lane][0] == pytest.approx((channel + 1) * 1e-6, rel=0.01)


def test_a_window_reads_each_electrodes_column_once_for_all_its_channels(probe, monkeypatch):
    """Each channel's electrode row was read cell by cell: 5 reads a channel, 320 for a window of 64."""
    calls = []
    cells = lanes._cells
    monkeypatch.setattr(lanes, "_cells", lambda data, rows, path: calls.append(len(rows)) or cells(data, rows, path))
    chosen = list(range(100, 100 + series.MAX_CHANNELS))
    window = series.window(probe, "/acquisition/es", channels=chosen, width=200)
    assert sorted(window["channels"]) == chosen and len(window["labels"]) == len(chosen)
    # the region, id, group_name, location, rel_y: one read each, every channel at once
    assert calls == [len(chosen)] * 5


def test_a_minimap_shows_every_channel_by_depth_with_its_amplitude(probe):
    found = series.minimap(probe, "/acquisition/es", start=0.5, stop=2.5, bins=20)
    assert found["channel_count"] == PROBE_CHANNELS and found["decimation"] == "minmax"
    assert found["channels"] == sorted(range(PROBE_CHANNELS), key=lambda c: -PROBE_DEPTHS[c])
    assert len(found["spread"]) == PROBE_CHANNELS and all(len(row) == len(found["t"]) == 20 for row in found["spread"])
    assert found["t"][0] == pytest.approx(0.5) and found["labels"][0] == f"e{found['channels'][0]} shank CA1"
    for row, channel in enumerate(found["channels"]):  # a bin is a period of a sine of amplitude channel + 1 µV
        assert np.allclose(found["spread"][row], 2 * (channel + 1) * 1e-6, rtol=0.01)


def test_a_minimap_of_few_samples_bins_them_and_refuses_what_it_cannot_show(probe, monkeypatch):
    few = series.minimap(probe, "/acquisition/es", start=0.0, stop=0.05, bins=40)
    assert few["decimation"] == "none" and len(few["t"]) == 40 and len(few["spread"][0]) == 40
    assert few["t"][:3] == pytest.approx([0.0, 0.001, 0.002])  # 51 samples in 40 bins of 1 or 2
    with pytest.raises(ViewRequestError, match="start=nan is not a finite time"):
        series.minimap(probe, "/acquisition/es", start=float("nan"))
    monkeypatch.setattr(series, "MINIMAP_CHANNELS", 100)
    with pytest.raises(ViewRequestError, match="384 channels: a minimap shows at most 100"):
        series.minimap(probe, "/acquisition/es")


def test_units_are_sorted_by_the_depth_of_their_electrode_when_the_file_stores_no_depth(probe):
    """The raster sorted by any column of the units: a file without a depth column could not be sorted by depth."""
    found = spikes.raster(probe, "/units", None, None, spikes.ELECTRODE_DEPTH)
    assert found["sortable"][-1] == spikes.ELECTRODE_DEPTH
    depth = [PROBE_DEPTHS[e[0]] if e else None for e in PROBE_UNIT_ELECTRODES]  # a unit's first electrode
    expected = sorted(range(len(depth)), key=lambda u: (depth[u] is None, -(depth[u] or 0)))  # deepest first
    assert [row["row"] for row in found["rows"]] == expected and expected[-1] == 3
