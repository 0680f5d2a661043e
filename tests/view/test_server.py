"""The viewer's HTTP server: its endpoints, the token, the Host check, 127.0.0.1 only, GET only, and a
damaged chunk answered as our typed error for that node only."""

from __future__ import annotations

import http.client
import json
import shutil
import socket
import sys
import urllib.parse

import numpy as np
import pytest
from viewer_files import CHANNELS, decode_png

from hdmf_zarr3.view.server import ROUTES, STATIC, ViewServer
from hdmf_zarr3.view.viewed_file import ViewedFile


@pytest.fixture
def viewer(viewer_file):
    with ViewServer(ViewedFile(viewer_file)) as server:
        yield server


def get(server, route, token=True, host=None, method="GET", **query):
    """``(status, headers, body)`` of one request to ``server``."""
    if token:
        query["token"] = server.token if token is True else token
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        connection.putrequest(method, route + ("?" + urllib.parse.urlencode(query) if query else ""), skip_host=True)
        connection.putheader("Host", host or f"127.0.0.1:{server.port}")
        connection.endheaders()
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def get_json(server, route, **query):
    status, headers, body = get(server, route, **query)
    assert headers["Content-Type"] == "application/json", body
    return status, json.loads(body)


def test_the_page_and_its_files_are_served_with_the_token_in_their_links(viewer):
    status, headers, body = get(viewer, "/")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert viewer.token.encode() in body and b"__TOKEN__" not in body
    assert headers["Cache-Control"] == "no-store" and headers["Referrer-Policy"] == "no-referrer"
    assert get(viewer, "/static/app.js")[0] == 200
    assert get(viewer, "/static/../viewed_file.py")[0] == 404 and get(viewer, "/static/nothing.js")[0] == 404


def test_tree_and_node_endpoints(viewer):
    status, found = get_json(viewer, "/api/tree")
    assert status == 200 and found["root"]["path"] == "/"
    assert [c["name"] for c in found["root"]["children"]][:2] == ["acquisition", "analysis"]
    status, node = get_json(viewer, "/api/node", path="/acquisition/ElectricalSeries/data")
    assert status == 200 and node["chunks"] == [4096, CHANNELS] and node["shape"][1] == CHANNELS
    status, missing = get_json(viewer, "/api/node", path="/nothing/here")
    assert status == 404 and missing == {
        "error": "ViewRequestError",
        "path": "/nothing/here",
        "message": "/nothing/here: the file has no such node",
    }


def test_the_session_overview_names_the_session_its_subject_devices_and_what_the_file_holds(viewer):
    status, found = get_json(viewer, "/api/session")
    assert status == 200
    session = {f["name"]: f["value"] for f in found["session"]["fields"]}
    assert session["session_description"] == "viewer test session" and session["identifier"] == "VIEW1"
    assert session["session_start_time"] == "2024-01-02T03:04:05+00:00" and session["session_id"] == "S01"
    assert session["experimenter"] == ["Doe, Jane", "Roe, Richard"] and session["keywords"] == [
        "hippocampus",
        "place cells",
    ]
    assert session["institution"] == "Example Institute" and session["related_publications"] == ["doi:10.1000/example"]
    subject = {f["name"]: f["value"] for f in found["subject"]["fields"]}
    assert subject == {
        "subject_id": "mouse-7",
        "species": "Mus musculus",
        "sex": "F",
        "age": "P90D",
        "description": "a mouse",
    }
    assert found["subject"]["path"] == "/general/subject"
    assert [(d["name"], d["path"]) for d in found["devices"]] == [("probe", "/general/devices/probe")]
    sections = {s["section"]: s["items"] for s in found["contents"]}
    assert set(sections) == {
        "acquisition",
        "units",
        "intervals",
        "events",
        "electrodes",
        "processing/behavior",
        "processing/ophys",
    }
    assert {i["name"]: i["rows"] for i in sections["intervals"]} == {"epochs": 1, "trials": 5}
    assert sections["units"][0]["rows"] == 4 and sections["electrodes"][0]["rows"] == CHANNELS
    assert {i["name"]: i["views"] for i in sections["acquisition"]}["ElectricalSeries"] == ["series"]
    for item in [entry for items in sections.values() for entry in items] + found["devices"]:
        assert get_json(viewer, "/api/node", path=item["path"])[0] == 200, item  # every link leads somewhere
    assert get_json(viewer, "/api/node", path="/")[1]["views"] == ["session"]  # the page opens on it


def test_table_page_and_sort_endpoint(viewer):
    status, page = get_json(viewer, "/api/table", path="/intervals/trials", sort="score", desc="1", count=2)
    assert status == 200 and page["rows"] == 5 and page["row_numbers"] == [4, 2]
    status, bad = get_json(viewer, "/api/table", path="/units", start="x")
    assert status == 400 and bad["error"] == "ViewRequestError" and "start='x'" in bad["message"]


def test_series_window_endpoint_decimates_to_the_width(viewer):
    status, window = get_json(
        viewer, "/api/series", path="/acquisition/ElectricalSeries", start=0, stop=100, channels="0-2,5", width=300
    )
    assert status == 200 and window["channels"] == [0, 1, 2, 5] and window["decimation"] == "minmax"
    assert len(window["t"]) == 300 and all(len(v) == 300 for v in window["min"] + window["max"])
    status, short = get_json(viewer, "/api/series", path="/acquisition/speed")
    assert status == 200 and short["decimation"] == "none" and len(short["t"]) == 10


def test_image_frame_endpoint_is_a_png(viewer):
    status, info = get_json(viewer, "/api/image", path="/acquisition/movie")
    assert status == 200 and info["frames"] == 6
    status, headers, body = get(viewer, "/api/frame", path="/acquisition/movie", index=5)
    assert status == 200 and headers["Content-Type"] == "image/png"
    assert decode_png(body).shape == (16, 20)


@pytest.mark.parametrize("token", [False, "wrong", "x" * 43])
def test_a_request_without_the_token_is_refused(viewer, token):
    for route in (*STATIC, *ROUTES):  # every page, script and route of the API
        status, _, body = get(viewer, route, token=token, path="/acquisition/movie")
        assert status == 403 and b"token" in body


def test_the_token_may_come_in_a_header(viewer):
    connection = http.client.HTTPConnection("127.0.0.1", viewer.port, timeout=30)
    connection.request("GET", "/api/tree", headers={"Authorization": f"token {viewer.token}"})
    assert connection.getresponse().status == 200
    connection.close()


@pytest.mark.parametrize("host", ["evil.example:{port}", "127.0.0.1:1", "localhost", "", "127.0.0.1.evil:{port}"])
def test_a_foreign_host_header_is_refused_even_with_the_token(viewer, host):
    # DNS rebinding: a page of another site resolving its name to 127.0.0.1 sends its own Host
    assert get(viewer, "/api/tree", host=host.format(port=viewer.port) or " ")[0] == 403
    assert get(viewer, "/api/tree", host=f"localhost:{viewer.port}")[0] == 200


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "HEAD"])
def test_only_get_is_answered(viewer, method):
    status, headers, _ = get(viewer, "/api/tree", method=method)
    assert status == 405 and headers["Allow"] == "GET"


def test_a_browser_hanging_up_prints_no_traceback(viewer, capfd):
    """A request cancelled by the browser (the user pans on) resets its connection: the server goes on, and the
    user's terminal gets no traceback."""
    import struct
    import time

    for _ in range(3):
        sock = socket.create_connection(("127.0.0.1", viewer.port), timeout=5)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close = reset
        sock.sendall(b"GET /api/tree")  # an unfinished request line
        sock.close()
    time.sleep(0.5)  # (the server's threads see the resets)
    assert get(viewer, "/api/tree")[0] == 200
    assert "Traceback" not in capfd.readouterr().err


def test_the_server_listens_on_127_0_0_1_only(viewer):
    assert viewer.httpd.server_address[0] == "127.0.0.1"
    addresses = {info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)}
    # 127.0.0.2 reaches a server bound to every interface (Linux routes 127/8 to the loopback), not ours
    addresses |= {"127.0.0.2"} if sys.platform.startswith("linux") else set()
    addresses.discard("127.0.0.1")
    for address in addresses:  # the machine's other addresses do not reach it
        with pytest.raises(OSError), socket.create_connection((address, viewer.port), timeout=2):
            pass
    assert viewer.url.startswith(f"http://127.0.0.1:{viewer.port}/?token=")


def test_a_damaged_chunk_is_our_typed_error_for_that_node_and_the_file_stays_browsable(viewer_file, tmp_path):
    damaged = tmp_path / "damaged.nwb.zarr"
    shutil.copytree(viewer_file, damaged)
    (damaged / "acquisition/ElectricalSeries/data/c/0/0").write_bytes(b"not a blosc chunk at all")
    with ViewServer(ViewedFile(str(damaged))) as server:
        status, error = get_json(server, "/api/series", path="/acquisition/ElectricalSeries", start=2, stop=2.5)
        assert status == 500 and error["error"] == "CorruptStoreError"
        assert error["path"].startswith("/acquisition/ElectricalSeries/data") and "c/0/0" in error["message"]
        status, node = get_json(server, "/api/node", path="/acquisition/ElectricalSeries/data")
        assert status == 200 and node["preview"]["error"] == "CorruptStoreError"  # the details still show
        assert get_json(server, "/api/tree")[0] == 200
        status, window = get_json(server, "/api/series", path="/acquisition/ElectricalSeries", start=20, stop=20.1)
        assert status == 200 and np.isfinite(window["min"][0]).all()  # other chunks read


def test_an_answer_json_cannot_hold_is_still_an_answer(viewer, monkeypatch):
    """The answer is encoded inside the error handling: a value JSON lacks (NaN), or a model failing in a way
    nobody foresaw, gives the browser a JSON error, never a dropped connection."""
    from hdmf_zarr3.view import server

    monkeypatch.setitem(server.ROUTES, "/api/tree", lambda opened, query: {"value": float("nan")})
    status, error = get_json(viewer, "/api/tree")
    assert status == 500 and error["error"] == "ValueError" and error["path"] == "/"

    def fails(opened, query):
        raise MemoryError("a model that did not foresee it")

    monkeypatch.setitem(server.ROUTES, "/api/tree", fails)
    status, error = get_json(viewer, "/api/tree")
    assert status == 500 and error == {
        "error": "MemoryError",
        "path": "/",
        "message": "a model that did not foresee it",
    }


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ({"start": "nan"}, "start="),
        ({"stop": "inf"}, "stop="),
        ({"start": "-inf"}, "start="),
        ({"channels": "0-30000000"}, "channels="),
        ({"channels": "0-3,4-70"}, "channels="),
        ({"channels": "x"}, "channels="),
    ],
)
def test_series_parameters_out_of_bounds_are_refused_naming_the_parameter(viewer, query, named):
    status, error = get_json(viewer, "/api/series", path="/acquisition/ElectricalSeries", **query)
    assert status == 400 and error["error"] == "ViewRequestError" and named in error["message"]
