"""What a ``Range`` header asks of a file of a given size, answered as a file server does (RFC 9110 §14): the
one place the test server (``tests/http_server.py``) and the benchmarks' latency server
(``benchmarks/_http_range.py``) read it."""

from __future__ import annotations

import re
from http.server import BaseHTTPRequestHandler

_RANGE = re.compile(r"bytes=(\d*)-(\d*)$")


def requested_span(header: str, size: int) -> tuple[int, int, bool] | None:
    """``(start, end, ranged)``: the inclusive byte span ``header`` asks of ``size`` bytes, and whether it asked a
    range (else the whole file: no header, or not a single range served here); ``None`` when it cannot be
    satisfied (416)."""
    match = _RANGE.match(header)
    if not match or not (match.group(1) or match.group(2)):
        return 0, size - 1, False
    if match.group(1):
        start = int(match.group(1))
        end = min(int(match.group(2)), size - 1) if match.group(2) else size - 1
    else:  # the last N bytes
        start, end = max(size - int(match.group(2)), 0), size - 1
    return None if start >= size or start > end else (start, end, True)


def start_answer(handler: BaseHTTPRequestHandler, size: int) -> tuple[int, int] | None:
    """Send the status and range headers of the answer to ``handler``'s request for a file of ``size`` bytes:
    206 with its ``Content-Range`` or 200, then ``Accept-Ranges`` and ``Content-Length``, and return the span to
    send (the caller adds its own headers, then ends them); or a whole 416 answer, and ``None``."""
    span = requested_span(handler.headers.get("Range", ""), size)
    if span is None:
        handler.send_response(416)
        handler.send_header("Content-Range", f"bytes */{size}")
        handler.send_header("Content-Length", "0")
        handler.end_headers()
        return None
    start, end, ranged = span
    handler.send_response(206 if ranged else 200)
    if ranged:
        handler.send_header("Content-Range", f"bytes {start}-{end}/{size}")
    handler.send_header("Accept-Ranges", "bytes")
    handler.send_header("Content-Length", str(end - start + 1))
    return start, end
