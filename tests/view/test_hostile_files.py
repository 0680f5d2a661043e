"""A file small on disk but huge by its metadata, or holding values JSON cannot hold, served by ``hdmf-zarr3 view``:
every request is answered (JSON, or a PNG), and each one grows the server's resident memory by less than
:data:`GROWTH_BYTES` (its peak measured per request, as tests/view/test_memory.py measures a whole run)."""

from __future__ import annotations

import json
import os
import resource
import struct
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from viewer_files import HUGE_ROWS, decode_png, write_hostile_viewer_file

from hdmf_zarr3.view import budget

TESTS = Path(__file__).resolve().parents[1]
#: What one request may add to the server's peak resident memory (the issue's bound).
GROWTH_BYTES = 200 * 2**20
#: The safety net: address space the server may take beyond what it has once serving (a request past it gets
#: MemoryError, so a regression fails this test instead of taking the machine down).
ADDRESS_MARGIN = 3 * 2**30

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/clear_refs").exists(), reason="measures each request's peak resident memory in /proc"
)


def _status(pid: int, field: str) -> int:
    text = Path(f"/proc/{pid}/status").read_text()
    return int(text.split(f"{field}:")[1].split()[0]) * 1024


class Server:
    """``hdmf-zarr3 view FILE`` in a process of its own; :meth:`get` measures what each request adds."""

    def __init__(self, path: Path):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
        command = [sys.executable, "-m", "hdmf_zarr3.cli", "view", str(path), "--no-browser"]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
        self.process.stdout.readline()  # "serving ... at"
        self.base, self.token = self.process.stdout.readline().strip().split("/?token=")
        limit = _status(self.process.pid, "VmSize") + ADDRESS_MARGIN
        resource.prlimit(self.process.pid, resource.RLIMIT_AS, (limit, resource.RLIM_INFINITY))

    def get(self, route: str, **query) -> tuple[int, str, bytes, int]:
        """``(status, content type, body, growth)`` of one request; growth: its peak resident memory minus the
        resident memory before it."""
        pid = self.process.pid
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # the peak starts again from the present
        before = _status(pid, "VmRSS")
        url = f"{self.base}{route}?" + urllib.parse.urlencode({**query, "token": self.token})
        try:
            with urllib.request.urlopen(url, timeout=300) as answer:
                status, kind, body = answer.status, answer.headers["Content-Type"], answer.read()
        except urllib.error.HTTPError as error:
            status, kind, body = error.code, error.headers["Content-Type"], error.read()
        return status, kind, body, _status(pid, "VmHWM") - before

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


@pytest.fixture(scope="module")
def hostile_server(tmp_path_factory):
    server = Server(write_hostile_viewer_file(tmp_path_factory.mktemp("hostile") / "hostile.nwb.zarr"))
    yield server
    server.close()


SEGMENTATIONS = "/processing/hostile_ophys/ImageSegmentation"
WHOLE = str(HUGE_ROWS / 1000.0)
#: (route, query, what the answer must be: a status, and for 200 a check of the JSON or PNG)
REQUESTS = [
    ("/api/tree", {}, 200),
    ("/api/session", {}, 200),
    ("/api/node", {"path": "/acquisition/huge_images/huge"}, 200),
    ("/api/node", {"path": "/intervals/huge_table/id"}, 200),
    ("/api/node", {"path": "/acquisition/huge_chunk/data"}, 200),
    ("/api/series", {"path": "/acquisition/zero_rate"}, 400),
    ("/api/image", {"path": "/acquisition/huge_images"}, 200),
    ("/api/frame", {"path": "/acquisition/huge_images", "index": "0"}, 200),
    ("/api/frame", {"path": "/acquisition/huge_movie", "index": "1"}, 200),
    ("/api/frame", {"path": "/acquisition/huge_images", "index": "1"}, 200),
    ("/api/series", {"path": "/acquisition/tiny_chunks"}, 200),
    ("/api/series", {"path": "/acquisition/tiny_chunks", "start": "0", "stop": str(2**27 / 1000)}, 200),
    ("/api/frame", {"path": f"{SEGMENTATIONS}/far_pixels"}, 200),
    ("/api/frame", {"path": f"{SEGMENTATIONS}/farther_pixels"}, 200),
    ("/api/frame", {"path": f"{SEGMENTATIONS}/big_masks"}, 200),
    ("/api/table", {"path": "/intervals/huge_table"}, 200),
    ("/api/timeline", {"path": "/intervals/huge_table"}, 200),
    ("/api/table", {"path": "/intervals/huge_table", "start": str(HUGE_ROWS - 50), "desc": "1"}, 200),
    ("/api/table", {"path": "/intervals/huge_table", "sort": "start_time"}, 413),
    ("/api/table", {"path": f"{SEGMENTATIONS}/far_pixels"}, 200),
    ("/api/traces", {"path": f"{SEGMENTATIONS}/big_masks"}, 200),
    ("/api/roi", {"path": f"{SEGMENTATIONS}/big_masks", "row": "5", "column": "5"}, 200),
    ("/api/roi", {"path": f"{SEGMENTATIONS}/far_pixels", "row": "5", "column": "5"}, 200),
    ("/api/frame", {"path": f"{SEGMENTATIONS}/big_masks", "colours": "magma", "low": "10", "high": "90"}, 200),
    ("/api/series", {"path": "/acquisition/bad_times"}, 200),
    ("/api/series", {"path": "/acquisition/bad_times", "start": "0", "stop": "1"}, 200),
    ("/api/series", {"path": "/acquisition/bad_times", "start": "nan"}, 400),
    ("/api/series", {"path": "/acquisition/bad_times", "stop": "inf"}, 400),
    ("/api/series", {"path": "/acquisition/huge_chunk"}, 413),
    ("/api/series", {"path": "/acquisition/huge_chunk", "start": "0", "stop": WHOLE}, 413),
    ("/api/series", {"path": "/acquisition/huge_conversion"}, 200),
    ("/api/series", {"path": "/acquisition/huge_conversion", "channels": "0-30000000"}, 400),
    ("/api/series", {"path": "/acquisition/huge_conversion", "channels": ",".join(["1"] * 2000)}, 200),
    ("/api/series", {"path": "/acquisition/huge_conversion", "channels": ",".join(map(str, range(65)))}, 400),
    ("/api/minimap", {"path": "/acquisition/huge_conversion", "bins": "100000"}, 200),
    ("/api/minimap", {"path": "/acquisition/huge_chunk"}, 413),
    ("/api/minimap", {"path": "/acquisition/tiny_chunks", "start": "0", "stop": str(2**27 / 1000)}, 200),
    ("/api/minimap", {"path": "/acquisition/bad_times", "start": "0", "stop": "1"}, 200),
    ("/api/minimap", {"path": "/acquisition/zero_rate"}, 400),
    ("/api/minimap", {"path": "/acquisition/bad_times", "stop": "inf"}, 400),
    ("/api/events", {"path": "/acquisition/huge_chunk"}, 413),
    ("/api/events", {"path": "/acquisition/bad_times"}, 200),
    ("/api/events", {"path": "/acquisition/bad_times", "start": "0", "stop": "1"}, 200),
    ("/api/events", {"path": "/acquisition/zero_rate"}, 400),
    ("/api/events", {"path": "/intervals/huge_table"}, 400),
    ("/api/path", {"path": "/acquisition/huge_chunk"}, 400),
]


@pytest.mark.parametrize(("route", "query", "expected"), REQUESTS, ids=[f"{r} {q}"[:90] for r, q, _ in REQUESTS])
def test_every_request_of_a_hostile_file_is_answered_in_bounded_memory(hostile_server, route, query, expected):
    status, kind, body, growth = hostile_server.get(route, **query)
    if kind == "image/png":
        width, height = struct.unpack(">II", body[16:24])  # (the PNG's header)
        assert width * height <= budget.PICTURE_PIXELS and decode_png(body).size
    else:
        answer = json.loads(body)  # valid JSON, never a dropped connection
        if status != 200:
            assert set(answer) == {"error", "path", "message"} and answer["error"] == "ViewRequestError", answer
    assert status == expected, body[:300]
    assert growth < GROWTH_BYTES, f"{route} {query}: the server grew by {growth / 2**20:.0f} MiB"


def test_non_finite_times_and_values_are_gaps(hostile_server):
    status, _, body, _ = hostile_server.get("/api/series", path="/acquisition/bad_times")
    window = json.loads(body)
    assert status == 200 and window["extent"] == [None, None]
    assert window["t"][:4] == [None, 0.1, 0.2, None] and window["min"][0][:4] == [1.0, None, 3.0, None]


def test_a_table_page_of_a_huge_table_reads_only_its_rows(hostile_server):
    start = HUGE_ROWS - 50
    status, _, body, _ = hostile_server.get("/api/table", path="/intervals/huge_table", start=str(start))
    page = json.loads(body)
    assert status == 200 and page["rows"] == HUGE_ROWS and page["row_numbers"] == list(range(start, HUGE_ROWS))


def test_refusals_name_what_is_too_large(hostile_server):
    _, _, body, _ = hostile_server.get("/api/series", path="/acquisition/huge_chunk")
    answer = json.loads(body)
    assert answer["path"] == "/acquisition/huge_chunk/data" and "512 MiB" in answer["message"]
    _, _, body, _ = hostile_server.get("/api/series", path="/acquisition/huge_conversion", channels="0-30000000")
    assert "channels=" in json.loads(body)["message"]


def test_the_details_of_an_array_of_huge_chunks_show_no_preview(hostile_server):
    status, _, body, growth = hostile_server.get("/api/node", path="/acquisition/huge_chunk/data")
    details = json.loads(body)
    assert status == 200 and details["chunks"] == [HUGE_ROWS] and details["preview"]["error"] == "ViewRequestError"
    assert "512 MiB" in details["preview"]["message"] and growth < GROWTH_BYTES


def test_pixel_masks_past_the_image_they_are_drawn_on_are_clipped(hostile_server):
    status, kind, body, _ = hostile_server.get("/api/frame", path="/processing/clipped_ophys/ImageSegmentation/cells")
    pixels = decode_png(body)
    assert status == 200 and pixels.shape == (24, 24, 3)  # the mean image's size: (7999, 7999) and 4e9 left out
    assert pixels[1, 2, 0] > pixels[1, 2, 2] and (pixels[0, 0] == pixels[0, 0, 0]).all()  # the ROI's colour


def test_samples_past_the_last_timestamp_are_not_shown(hostile_server):
    """2**20 samples and 16 timestamps (an IndexError, answered 500, before): the 16 samples that have a time."""
    status, _, body, _ = hostile_server.get("/api/series", path="/acquisition/short_times", start="0", stop="1e9")
    window = json.loads(body)
    assert status == 200 and window["samples"] == 16 and window["t"] == [float(i) for i in range(16)]


def test_a_page_of_a_wide_table_shows_its_first_columns(hostile_server):
    status, _, body, _ = hostile_server.get("/api/table", path="/intervals/wide_table")
    page = json.loads(body)
    assert status == 200 and page["column_count"] == 253 and len(page["columns"]) == 200
    assert [c["name"] for c in page["columns"][:4]] == ["id", "start_time", "stop_time", "c0"]
    assert all(len(row) == 200 for row in page["data"]) and len(page["data"]) == 2
