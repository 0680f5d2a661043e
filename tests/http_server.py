"""A file server on 127.0.0.1 for tests of HTTP sources: ``Range`` requests, ``ETag`` and
``Last-Modified`` (each can be turned off), the conditional headers ``If-Match`` and
``If-Unmodified-Since`` (412 when they fail), redirects, and a log of every request. No other network."""

from __future__ import annotations

import contextlib
import email.utils
import hashlib
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from http_ranges import start_answer


@dataclass
class Served:
    """What the server does, changed by tests as they go."""

    root: Path
    etag: bool = True  # send an ETag (a strong one: size and modification time hashed)
    weak_etag: bool = False  # send it as W/"..." (If-Match never matches a weak ETag)
    last_modified: bool = True
    head: bool = True  # answer HEAD requests (else 405)
    unquoted_if_match: bool = False  # also match an ETag sent without its quotes (as S3 does)
    redirects: dict[str, str] = field(default_factory=dict)  # path -> Location (answered with 302)
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)  # (method, path, Range)
    headers: list[dict[str, str]] = field(default_factory=list)  # each request's headers, in order


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64  # conversions open many connections in a row
    served: Served


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"  # connections kept alive (every answer says its Content-Length)

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self._answer(body=True)

    def do_HEAD(self) -> None:
        if not self.server.served.head:
            self.server.served.requests.append((self.command, self.path, None))
            self.server.served.headers.append(dict(self.headers.items()))
            self._bare(405)
            return
        self._answer(body=False)

    def _answer(self, body: bool) -> None:
        served = self.server.served
        served.requests.append((self.command, self.path, self.headers.get("Range")))
        served.headers.append(dict(self.headers.items()))
        if self.path in served.redirects:
            self.send_response(302)
            self.send_header("Location", served.redirects[self.path])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path = (served.root / self.path.lstrip("/").split("?")[0]).resolve()
        if not path.is_file() or served.root.resolve() not in path.parents:
            self._bare(404)
            return
        stat = path.stat()
        size = stat.st_size
        tag = '"' + hashlib.sha1(f"{size}-{stat.st_mtime_ns}".encode()).hexdigest() + '"'
        tag = "W/" + tag if served.weak_etag else tag
        modified = email.utils.formatdate(stat.st_mtime, usegmt=True)
        if not self._preconditions_hold(tag if served.etag else None, stat.st_mtime):
            self._bare(412)
            return
        span = start_answer(self, size)
        if span is None:
            return
        start, end = span
        if served.etag:
            self.send_header("ETag", tag)
        if served.last_modified:
            self.send_header("Last-Modified", modified)
        self.end_headers()
        if body:
            with open(path, "rb") as f:
                f.seek(start)
                self.wfile.write(f.read(end - start + 1))

    def _preconditions_hold(self, tag: str | None, mtime: float) -> bool:
        wanted = self.headers.get("If-Match")
        if wanted is not None and wanted.strip() != "*":
            tags = [t.strip() for t in wanted.split(",")]
            if self.server.served.unquoted_if_match:
                tags += [f'"{t}"' for t in tags if not t.startswith('"')]
            if tag is None or tag.startswith("W/") or tag not in tags:  # If-Match compares strongly
                return False
        since = self.headers.get("If-Unmodified-Since")
        if since is not None:
            limit = email.utils.parsedate_to_datetime(since).timestamp()
            if int(mtime) > limit:
                return False
        return True

    def _bare(self, status: int) -> None:
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()


@contextlib.contextmanager
def http_server(root: Path) -> Iterator[tuple[str, Served]]:
    """Serve the files under ``root`` on a free loopback port; yield its base URL (``http://127.0.0.1:N``)
    and the :class:`Served` settings and request log."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.served = Served(Path(root))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", server.served
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def touch_later(path: Path, seconds: int = 5) -> None:
    """Move ``path``'s modification time forward (a file replaced by another of the same size)."""
    stat = os.stat(path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + seconds * 10**9))
