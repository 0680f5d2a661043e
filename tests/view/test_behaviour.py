"""Behaviour in the viewer (issue #41, point 5): a SpatialSeries (or a Position holding one) as an x-y path over
a time window, and the series of a BehavioralEvents as ticks."""

from __future__ import annotations

import pytest

from hdmf_zarr3.errors import ViewRequestError
from hdmf_zarr3.view import behaviour, session, tree

EVENTS = "/processing/behavior/BehavioralEvents"


def test_a_spatial_series_is_a_path_in_x_y_with_its_times(opened, monkeypatch):
    """SpatialSeries were plotted as lanes only (issue #41, point 5)."""
    track = "/processing/behavior/Position/track"
    assert tree.node(opened, track)["views"] == ["path", "series"]
    whole = behaviour.path(opened, track)
    assert whole["samples"] == 400 and len(whole["x"]) == len(whole["y"]) == len(whole["t"]) == 400
    assert whole["unit"] == "meters" and whole["x"][0] == 0.5 and whole["t"][:2] == [0.0, 0.05]
    window = behaviour.path(opened, track, start=1.0, stop=2.0)
    assert (window["first"], window["last"]) == (20, 41) and window["t"][0] == 1.0 and window["t"][-1] == 2.0
    monkeypatch.setattr(behaviour, "PATH_POINTS", 50)  # a long window: evenly spaced points, first and last kept
    thinned = behaviour.path(opened, track)
    assert len(thinned["x"]) == 50 and thinned["t"][0] == 0.0 and thinned["t"][-1] == 399 / 20
    monkeypatch.setattr(behaviour, "PATH_ROWS", 10)  # beyond a block read whole: the points sent, one read each
    assert behaviour.path(opened, track)["x"] == thinned["x"]
    with pytest.raises(ViewRequestError, match="SpatialSeries"):
        behaviour.path(opened, "/acquisition/speed")


def test_a_position_opens_as_the_path_of_its_spatial_series(opened):
    position = "/processing/behavior/Position"
    assert tree.node(opened, position)["views"] == ["path"]
    found = behaviour.path(opened, position, start=2.0)
    assert found["series"] == position + "/track" and found["first"] == 40 and found["extent"] == [0.0, 399 / 20]
    assert behaviour.path(opened, position, stop=-1.0)["x"] == []  # an empty window: no points


def test_behavioural_events_are_ticks_per_series_in_a_window(opened, monkeypatch):
    """BehavioralEvents were shown as plots of their values (all ones), not as events in time."""
    assert tree.node(opened, EVENTS)["views"] == ["events"]
    assert tree.node(opened, EVENTS + "/licks")["views"] == ["events", "series"]
    found = behaviour.events(opened, EVENTS)
    assert found["series"] == 2 and [line["name"] for line in found["lines"]] == ["licks", "rewards"]
    licks, rewards = found["lines"]
    assert licks["count"] == 40 and licks["t"][:2] == [0.25, 0.75] and rewards["path"] == EVENTS + "/rewards"
    window = behaviour.events(opened, EVENTS, start=3.0, stop=5.0)
    assert window["lines"][0]["t"] == [3.25, 3.75, 4.25, 4.75] and window["lines"][1]["t"] == [3.0, 5.0]
    one = behaviour.events(opened, EVENTS + "/rewards", start=10.0)
    assert one["series"] == 1 and one["lines"][0]["t"] == [11.0, 13.0, 15.0, 17.0, 19.0]
    monkeypatch.setattr(behaviour, "EVENT_TICKS", 3)  # the first ticks of the window, the count of all
    assert behaviour.events(opened, EVENTS)["lines"][0] == {**licks, "t": [0.25, 0.75, 1.25]}
    with pytest.raises(ViewRequestError, match="not a Units"):
        behaviour.events(opened, "/units")
    with pytest.raises(ViewRequestError, match="start=nan is not a finite time"):
        behaviour.events(opened, EVENTS, start=float("nan"))


def test_an_events_table_is_a_line_of_ticks_in_time_order(opened):
    """NWB 2.9's EventsTable, which PyNWB 4 asks for instead of BehavioralEvents, was a table only."""
    tones = next(i for s in session.overview(opened)["contents"] if s["section"] == "events" for i in s["items"])
    assert tones["name"] == "tones" and tones["views"] == ["events", "table"] and tones["rows"] == 3
    found = behaviour.events(opened, tones["path"])
    assert found["lines"] == [{"name": "tones", "path": tones["path"], "count": 3, "t": [2.0, 4.5, 7.0]}]
    assert behaviour.events(opened, tones["path"], start=3.0, stop=5.0)["lines"][0]["t"] == [4.5]
