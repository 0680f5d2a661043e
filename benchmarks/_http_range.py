"""A local HTTP server that honours ``Range`` requests, adds a delay to each request and counts them.

Benchmark (c) reads the HDF5 benchmark file through it with ``NWBHDF5IO`` (h5py on fsspec's
``HTTPFileSystem``), as one streams an NWB file from DANDI, so that the HDF5 baseline pays per request
what the Zarr files pay through :class:`_latency_store.LatencyStore`. It listens on 127.0.0.1 only.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from _latency_store import Rounds

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # (its Range parsing: tests/http_ranges.py)
from http_ranges import start_answer  # noqa: E402


class RangeServer(ThreadingHTTPServer):
    """Serves the files of ``root``; every request waits ``latency`` seconds (in its own thread, so
    concurrent requests overlap) and is counted by method in ``counts`` and in ``rounds``."""

    daemon_threads = True
    # connections waiting to be accepted: the default 5 made a burst of requests (h5py's, the test's 8) wait
    # a SYN retransmit (1 s) on a loaded machine, and a round sent together count as two
    request_queue_size = 128

    def __init__(self, root: Path, latency: float) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.root = Path(root)
        self.latency = latency
        self.counts: Counter = Counter()
        self.rounds = Rounds()
        self.lock = threading.Lock()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/{name}"

    def reset(self) -> None:
        with self.lock:
            self.counts.clear()
            self.rounds.rounds = 0


class _Handler(BaseHTTPRequestHandler):
    server: RangeServer

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def _file(self) -> Path | None:
        path = (self.server.root / self.path.lstrip("/").split("?")[0]).resolve()
        return path if path.is_file() and self.server.root.resolve() in path.parents else None

    def _serve(self, body: bool) -> None:
        with self.server.lock:
            self.server.counts[self.command] += 1
        self.server.rounds.start()
        try:
            time.sleep(self.server.latency)
            path = self._file()
        finally:
            # before a byte of the answer goes out: once the client has it, it may send its next request at
            # once, and that request must find this one ended (else two rounds counted as one under load)
            self.server.rounds.end()
        if path is None:
            self.send_error(404)
            return
        span = start_answer(self, os.path.getsize(path))
        if span is None:
            return
        start, end = span
        self.end_headers()
        if body:
            with open(path, "rb") as f:
                f.seek(start)
                self.wfile.write(f.read(end - start + 1))

    def do_GET(self) -> None:
        self._serve(body=True)

    def do_HEAD(self) -> None:
        self._serve(body=False)


@contextmanager
def serving(root: Path, latency: float) -> Iterator[RangeServer]:
    """A :class:`RangeServer` for ``root`` running in a background thread while the block runs."""
    server = RangeServer(root, latency)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
