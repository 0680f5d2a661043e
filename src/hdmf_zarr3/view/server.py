"""The viewer's HTTP server: the standard library's, on 127.0.0.1 only, GET only, one token per start.

Every request must carry the token printed in the URL (``?token=`` or ``Authorization: token ...``;
compared in constant time) and a ``Host`` of ``127.0.0.1`` or ``localhost`` (a page of another site that
renamed itself to our address by DNS rebinding cannot read the file). The page and its scripts are the
package's own files (``static/``); the JSON endpoints call the view models. An error answers only the
request that met it, as ``{"error": type, "path": node, "message": ...}``: the tree stays browsable.
"""

from __future__ import annotations

import hmac
import json
import math
import secrets
import sys
import threading
import webbrowser
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..errors import HdmfZarrError, ViewRequestError
from ..format.data import printable
from . import behaviour, display, images, rois, series, session, spikes, tables, timeline, tree
from .viewed_file import ViewedFile

#: The page's files (nothing else is served from the package).
STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/static/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/static/plot.js": ("plot.js", "text/javascript; charset=utf-8"),
    "/static/panels.js": ("panels.js", "text/javascript; charset=utf-8"),
    "/static/behaviour.js": ("behaviour.js", "text/javascript; charset=utf-8"),
    "/static/style.css": ("style.css", "text/css; charset=utf-8"),
}
#: Host names a request may name (the server listens on 127.0.0.1 only).
HOSTS = ("127.0.0.1", "localhost")
#: Headers of every answer: nothing cached, no framing, no other origin, the token never sent on.
SAFE_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' blob: data:; frame-ancestors 'none'",
}


class ViewServer:
    """The viewer of one file, listening on ``127.0.0.1:port`` (``port=0``: a free one).

    Parameters
    ----------
    opened : ViewedFile
        The file to show (closed by :meth:`close`).
    port : int
        The port; 0 lets the system choose.
    token : str, optional
        The secret the URL carries (a fresh ``secrets.token_urlsafe(32)`` by default).
    """

    def __init__(self, opened: ViewedFile, port: int = 0, token: str | None = None):
        self.opened = opened
        self.token = token or secrets.token_urlsafe(32)
        try:
            self.httpd = _HTTPServer(("127.0.0.1", port), _Handler)
        except OSError as exc:  # the port is taken, or not ours to take
            raise ViewRequestError(
                f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}", opened.location
            ) from exc
        self.httpd.viewer = self
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def url(self) -> str:
        """The page's address, token included (what the user opens)."""
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

    def serve_forever(self) -> None:
        """Answer requests until :meth:`shutdown` (from another thread) or Ctrl-C."""
        self.httpd.serve_forever(poll_interval=0.2)

    def start(self) -> ViewServer:
        """Answer requests in a background thread."""
        self._thread = threading.Thread(target=self.serve_forever, name="hdmf-zarr3-view", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop answering, then close the file."""
        if self._thread is not None:
            self.httpd.shutdown()
            self._thread.join(timeout=10)
        self.httpd.server_close()
        self.opened.close()

    def __enter__(self) -> ViewServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def allowed(self, host: str | None, token: str | None) -> bool:
        """Whether a request naming ``host`` and carrying ``token`` is answered."""
        if not host or not token:
            return False
        name, _, port = host.rpartition(":") if not host.endswith("]") else (host, "", "")
        if not name or name not in HOSTS or port != str(self.port):
            return False
        return hmac.compare_digest(token.encode(), self.token.encode())

    def answer(self, route: str, query: dict[str, str]) -> tuple[int, str, bytes]:
        """``(status, content type, body)`` of a GET of ``route`` with ``query``."""
        if route in STATIC:
            name, kind = STATIC[route]
            body = resources.files(__package__).joinpath("static", name).read_bytes()
            return 200, kind, body.replace(b"__TOKEN__", self.token.encode())
        handler = ROUTES.get(route)
        if handler is None:
            return _error(ViewRequestError("no such page", route, status=404), route)
        path = query.get("path", "/")
        # the answer is encoded inside the handling too: a value JSON cannot hold is an answer, not a hang-up
        try:
            with self.opened.lock:  # one read at a time (see ViewedFile)
                result = handler(self.opened, query)
            if isinstance(result, bytes):
                return 200, "image/png", result
            return 200, "application/json", json.dumps(result, allow_nan=False).encode()
        except HdmfZarrError as exc:  # ours: a damaged chunk, a bad request; this request only
            return _error(exc, path)
        except Exception as exc:  # a failure the models did not foresee: answered, logged, not fatal
            print(printable(f"hdmf-zarr3 view: {route} {path}: {type(exc).__name__}: {exc}"), file=sys.stderr)
            return _error(exc, path)


def _error(exc: BaseException, path: str) -> tuple[int, str, bytes]:
    status = getattr(exc, "status", 500) if isinstance(exc, ViewRequestError) else 500
    where = getattr(exc, "path", None)
    body = {"error": type(exc).__name__, "path": where if isinstance(where, str) else path, "message": str(exc)}
    return status, "application/json", json.dumps(body).encode()


def _number(query: dict[str, str], key: str, default: Any, kind: Callable[[str], Any] = int) -> Any:
    text = query.get(key)
    if text in (None, ""):
        return default
    try:
        number = kind(text)
    except ValueError:
        raise ViewRequestError(f"{key}={text!r} is not a number", query.get("path")) from None
    if not math.isfinite(number):  # float() takes "nan" and "inf"
        raise ViewRequestError(f"{key}={text!r} is not a finite number", query.get("path"))
    return number


def _channels(query: dict[str, str]) -> list[int] | None:
    text = query.get("channels")
    if not text:
        return None
    chosen: set[int] = set()
    for part in text.split(","):
        first, last = _channel_range(part, text, query.get("path"))
        # a range's size is checked before it is made: "0-30000000" never becomes a list of 3e7 numbers
        if last - first + 1 > series.MAX_CHANNELS or len(chosen.union(range(first, last + 1))) > series.MAX_CHANNELS:
            raise ViewRequestError(
                f"channels={text[:40]!r}: at most {series.MAX_CHANNELS} channels at once", query.get("path")
            )
        chosen.update(range(first, last + 1))
    return sorted(chosen)


def _rows(query: dict[str, str], key: str) -> list[int]:
    """Row numbers given as ``1,4,7`` (at most :data:`~.spikes.PSTH_UNITS` of them)."""
    parts = (query.get(key) or "0").split(",")
    try:
        return sorted({int(part) for part in parts[: spikes.PSTH_UNITS + 1]})
    except ValueError:
        raise ViewRequestError(
            f"{key}={query.get(key, '')[:40]!r}: give row numbers, e.g. 0,3,7", query.get("path")
        ) from None


def _channel_range(part: str, text: str, path: str | None) -> tuple[int, int]:
    lo, _, hi = part.partition("-")
    try:
        return int(lo), int(hi or lo)
    except ValueError:
        raise ViewRequestError(f"channels={text[:40]!r}: give numbers and ranges, e.g. 0-3,7", path) from None


ROUTES: dict[str, Callable[[ViewedFile, dict[str, str]], Any]] = {
    "/api/tree": lambda opened, q: tree.tree(opened),
    "/api/node": lambda opened, q: tree.node(opened, q.get("path", "/")),
    "/api/session": lambda opened, q: session.overview(opened),
    "/api/table": lambda opened, q: tables.table_page(
        opened,
        q.get("path", "/"),
        start=_number(q, "start", 0),
        count=_number(q, "count", 50),
        sort=q.get("sort") or None,
        descending=q.get("desc") in ("1", "true"),
        where=q.get("where") or None,
        equals=q.get("equals", ""),
    ),
    "/api/series": lambda opened, q: series.window(
        opened,
        q.get("path", "/"),
        start=_number(q, "start", None, float),
        stop=_number(q, "stop", None, float),
        channels=_channels(q),
        width=_number(q, "width", 1000),
    ),
    "/api/minimap": lambda opened, q: series.minimap(
        opened,
        q.get("path", "/"),
        start=_number(q, "start", None, float),
        stop=_number(q, "stop", None, float),
        bins=_number(q, "bins", 160),
    ),
    "/api/timeline": lambda opened, q: timeline.timeline(opened, q.get("path", "/"), q.get("group") or None),
    "/api/traces": lambda opened, q: rois.traces(opened, q.get("path", "/")),
    "/api/roi": lambda opened, q: rois.roi_at(
        opened, q.get("path", "/"), _number(q, "row", 0), _number(q, "column", 0)
    ),
    "/api/path": lambda opened, q: behaviour.path(
        opened, q.get("path", "/"), start=_number(q, "start", None, float), stop=_number(q, "stop", None, float)
    ),
    "/api/events": lambda opened, q: behaviour.events(
        opened, q.get("path", "/"), start=_number(q, "start", None, float), stop=_number(q, "stop", None, float)
    ),
    "/api/raster": lambda opened, q: spikes.raster(
        opened,
        q.get("path", "/units"),
        start=_number(q, "start", None, float),
        stop=_number(q, "stop", None, float),
        sort=q.get("sort") or None,
    ),
    "/api/waveforms": lambda opened, q: spikes.waveforms(opened, q.get("path", "/units"), _rows(q, "units")),
    "/api/psth": lambda opened, q: spikes.psth(
        opened,
        q.get("path", "/units"),
        _rows(q, "units"),
        q.get("align") or "/intervals/trials",
        column=q.get("column") or None,
        group=q.get("group") or None,
        before=_number(q, "before", 0.5, float),
        after=_number(q, "after", 1.0, float),
        bins=_number(q, "bins", 50),
    ),
    "/api/image": lambda opened, q: images.image_info(opened, q.get("path", "/")),
    "/api/frame": lambda opened, q: images.frame_png(
        opened,
        q.get("path", "/"),
        _number(q, "index", 0),
        display.contrast(
            _number(q, "low", 0.5, float),
            _number(q, "high", 99.5, float),
            q.get("colours") or "gray",
            q.get("path", "/"),
        ),
    ),
}


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True  # a browser's kept-alive connection does not hold up Ctrl-C
    viewer: ViewServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A browser that hangs up (a request cancelled as the user pans, a tab closed) is no error worth a
        traceback in the user's terminal; anything else is printed as the standard library does."""
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"
    timeout = 120  # an idle kept-alive connection is dropped

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the URL carries the token
        pass

    def do_GET(self) -> None:
        try:
            self._get()
        except (ConnectionError, TimeoutError):  # the browser hung up: nothing to answer
            raise
        except Exception as exc:  # whatever went wrong, the browser gets an answer, never a dropped connection
            body = {"error": type(exc).__name__, "path": None, "message": str(exc)}
            self._send(500, "application/json", json.dumps(body).encode())

    def _get(self) -> None:
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        token = query.pop("token", None)
        header = self.headers.get("Authorization", "")
        if header.startswith("token "):
            token = header[len("token ") :]
        viewer = self.server.viewer
        if not viewer.allowed(self.headers.get("Host"), token):
            self._send(403, "text/plain; charset=utf-8", b"403: this viewer needs the URL it printed (with its token)")
            return
        self._send(*viewer.answer(parts.path, query))

    def _refuse(self) -> None:
        self._send(405, "text/plain; charset=utf-8", b"405: the viewer only reads (GET)", allow="GET")

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refuse

    def do_HEAD(self) -> None:
        self._refuse()

    def _send(self, status: int, kind: str, body: bytes, allow: str | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for key, value in SAFE_HEADERS.items():
            self.send_header(key, value)
        if allow:
            self.send_header("Allow", allow)
        self.end_headers()
        self.wfile.write(body)


def serve(
    location: str,
    storage_options: dict[str, Any] | None = None,
    port: int = 0,
    open_browser: bool = True,
    announce: Callable[[str], None] = print,
) -> None:
    """Show the NWB Zarr file at ``location`` (a path or URL) in the browser until Ctrl-C.

    The server listens on 127.0.0.1 only; ``announce`` is given the page's URL (with its token) once the
    server is ready, and the browser is opened on it unless ``open_browser`` is false.
    """
    _return_large_buffers()
    opened = ViewedFile(location, storage_options)
    try:
        viewer = ViewServer(opened, port=port)
    except BaseException:
        opened.close()
        raise
    try:
        announce(viewer.url)
        if open_browser:
            webbrowser.open(viewer.url)
        viewer.serve_forever()
    finally:
        viewer.httpd.server_close()
        viewer.opened.close()


#: glibc's ``mallopt`` parameter of the size from which buffers are mapped alone (and unmapped when freed).
M_MMAP_THRESHOLD = -3


def _return_large_buffers() -> None:
    """Give decoded chunks back to the system when freed (glibc only; elsewhere nothing changes).

    glibc raises its mmap threshold to the largest buffer freed so far (up to 32 MiB), so after the first
    chunk of a window every decoded chunk comes from the heaps of the pool threads that decoded it, which
    keep it: the server's resident memory grew by a chunk per thread. A fixed threshold of 1 MiB keeps
    chunk buffers mapped alone and unmapped when freed.
    """
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        if libc is not None and hasattr(libc, "mallopt"):
            libc.mallopt(M_MMAP_THRESHOLD, 1 << 20)
    except OSError:  # no C library to ask: the defaults stay
        pass
