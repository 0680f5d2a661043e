"""The viewer on a remote file: S3 served by moto on 127.0.0.1, every request counted by a proxy in front."""

from __future__ import annotations

import json
import re
import urllib.request

from s3_faults import fault_proxy, through
from s3_server import new_bucket
from viewer_files import CHANNELS, write_viewer_file

from hdmf_zarr3 import NWBZarrIO
from hdmf_zarr3.view.server import ViewServer
from hdmf_zarr3.view.viewed_file import ViewedFile


def _get(server, route):
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}{route}&token={server.token}", timeout=60) as answer:
        return json.load(answer)


def test_a_file_on_s3_is_browsed_and_one_window_reads_only_its_chunks(s3):
    url = f"s3://{new_bucket(s3)}/session.nwb.zarr"
    write_viewer_file(url, storage_options=s3["options"])
    with fault_proxy(s3) as proxy:
        with ViewServer(ViewedFile(url, through(proxy, s3["options"]))) as server:
            opening = len(proxy.requests)
            assert _get(server, "/api/tree?x=1")["root"]["path"] == "/"
            assert len(proxy.requests) == opening  # the tree is the metadata read at open
            before = len(proxy.requests)
            # samples 3000..10000 of the ElectricalSeries (rate 1 kHz from 2 s; chunks of 4096 samples)
            window = _get(server, "/api/series?path=/acquisition/ElectricalSeries&start=5&stop=12&width=400")
            requests = proxy.requests[before:]
            print(f"\none series window over S3: {len(requests)} requests: {[(m, p) for m, p, _ in requests]}")
            print(f"opening the file and reading its tree: {opening} requests")
            assert window["decimation"] == "minmax" and len(window["t"]) == 400
            chunk_gets = sorted(p.split("?")[0].rsplit("/data/", 1)[1] for m, p, _ in requests if m == "GET")
            assert chunk_gets == ["c/0/0", "c/1/0", "c/2/0"]  # the three chunks the window touches, once each
            assert len(requests) == 3
            page = _get(server, "/api/table?path=/units&count=10")
            assert page["rows"] == 4 and len(page["columns"]) == 5
            node = _get(server, "/api/node?path=/acquisition/ElectricalSeries/data")
            assert node["chunks"] == [4096, CHANNELS] and node["stored_bytes"] > 0


def test_the_page_of_a_file_on_s3_draws_its_views_in_a_browser(s3, tmp_path):
    """Every view was rendered by a browser for local files only (issue #41: locally and from S3)."""
    from browser_pages import render

    url = f"s3://{new_bucket(s3)}/session.nwb.zarr"
    write_viewer_file(url, storage_options=s3["options"])
    with ViewServer(ViewedFile(url, s3["options"])) as server:
        pages = {
            "#node=/acquisition/ElectricalSeries": r'<canvas id="plot"[^>]*data-state="drawn"',
            "#node=/units&view=raster&sort=quality": r'<canvas id="raster"[^>]*data-state="drawn"',
            "#node=/intervals/trials&view=timeline": r'<canvas id="timeline"[^>]*data-state="drawn"',
            "#node=/processing/behavior/Position": r'<canvas id="path"[^>]*data-state="drawn"',
            "#node=/processing/behavior/BehavioralEvents": r'<canvas id="events"[^>]*data-state="drawn"',
            "#node=/acquisition/movie": r'<img id="frame"[^>]*data-loaded="1"',
            "": r'<div id="session">',
        }
        for hash_, drawn in pages.items():
            dom = render(server.url + hash_, tmp_path)
            assert re.search(drawn, dom), (hash_, dom[-2000:])


def test_a_page_of_a_units_table_on_s3_reads_each_chunk_of_its_ragged_columns_once(s3):
    """500 units of ~460 spikes each: a page of 50 rows read the chunk of the spike times once per row (50 GETs
    of the same object); now once, and the cells are the units' first spikes."""
    from viewer_files import write_big_recording

    url = f"s3://{new_bucket(s3)}/session.nwb.zarr"
    write_big_recording(url, samples=1_400_000, channels=2, units=500, trials=2, storage_options=s3["options"])
    with fault_proxy(s3) as proxy:
        with ViewServer(ViewedFile(url, through(proxy, s3["options"]))) as server:
            before = len(proxy.requests)
            page = _get(server, "/api/table?path=/units&count=50")
            gets = [p.split("?")[0].split("session.nwb.zarr/")[1] for m, p, _ in proxy.requests[before:] if m == "GET"]
            assert len(page["data"]) == 50
            assert sorted(gets) == sorted(set(gets)) and any(g.startswith("units/spike_times/") for g in gets), gets
            with NWBZarrIO(url, mode="r", storage_options=s3["options"]) as io:
                units = io.read().units
                names = [c["name"] for c in page["columns"]]
                for row in (0, 17, 49):
                    spikes = page["data"][row][names.index("spike_times")]
                    assert spikes["items"] == list(units["spike_times"][row][:10]), row
                    assert spikes["count"] == len(units["spike_times"][row])
