"""A small HTTP proxy on 127.0.0.1 in front of moto's S3 server that injects faults into chosen requests.

Each request from the client (obstore) is read whole, then ``rule(method, path, count)`` decides what
happens to it (``count``: how many requests matched so far, 1-based, per rule call):

- ``None``: forwarded to moto and its answer returned;
- ``"5xx"``: answered ``503 Slow Down`` (S3's retryable error) without reaching moto;
- ``"reset"``: the connection is dropped (RST) without an answer;
- ``"truncate"``: forwarded, and the answer cut after half its body (then the connection is closed);
- ``"hang"``: never answered (the connection is held open until the proxy stops);
- ``("slow", seconds)``: forwarded after ``seconds``.

No other address is ever contacted.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

Rule = Callable[[str, str, int], Any]


class FaultProxy:
    """The proxy; ``endpoint`` is its URL, ``requests`` the (method, path, action) of every request seen."""

    def __init__(self, upstream: str, rule: Rule | None = None):
        host, port = upstream.removeprefix("http://").split(":")
        self.upstream = (host, int(port))
        self.rule: Rule = rule or (lambda method, path, count: None)
        self.requests: list[tuple[str, str, Any]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server = socket.socket()
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(64)
        self._server.settimeout(0.2)
        self.endpoint = f"http://127.0.0.1:{self._server.getsockname()[1]}"
        self._threads: list[threading.Thread] = []
        self._matched = 0

    def start(self) -> FaultProxy:
        thread = threading.Thread(target=self._accept, daemon=True)
        thread.start()
        self._threads.append(thread)
        return self

    def stop(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):  # wakes the accepting thread now, not at its next timeout
            self._server.shutdown(socket.SHUT_RDWR)
        for thread in self._threads:
            thread.join(timeout=5)
        self._server.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            thread = threading.Thread(target=self._serve, args=(client,), daemon=True)
            thread.start()

    def _serve(self, client: socket.socket) -> None:
        client.settimeout(0.2)
        reader = _Reader(client, self._stop)
        try:
            while not self._stop.is_set():
                request = reader.request()
                if request is None:
                    return
                method, path, headers, body = request
                with self._lock:
                    self._matched += 1
                    action = self.rule(method, path, self._matched)
                    self.requests.append((method, path, action))
                if action == "reset":
                    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    return
                if action == "hang":
                    self._stop.wait()
                    return
                if action == "5xx":
                    text = b"<Error><Code>SlowDown</Code><Message>injected</Message></Error>"
                    client.sendall(
                        b"HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\n"
                        + f"Content-Length: {len(text)}\r\n\r\n".encode()
                        + text
                    )
                    continue
                if isinstance(action, tuple) and action[0] == "slow":
                    time.sleep(action[1])
                status, reason, answer_headers, answer = self._forward(method, path, headers, body)
                head = f"HTTP/1.1 {status} {reason}\r\n" + "".join(
                    f"{k}: {v}\r\n" for k, v in answer_headers if k.lower() not in ("transfer-encoding", "connection")
                )
                if not any(k.lower() == "content-length" for k, _ in answer_headers):
                    head += f"Content-Length: {len(answer)}\r\n"
                client.sendall(head.encode("latin-1") + b"\r\n")
                if action == "truncate":
                    client.sendall(answer[: len(answer) // 2])
                    return
                client.sendall(answer)
        except OSError:
            return
        finally:
            with contextlib.suppress(OSError):
                client.close()

    def _forward(self, method: str, path: str, headers: list[tuple[str, str]], body: bytes) -> tuple:
        connection = http.client.HTTPConnection(*self.upstream, timeout=30)
        try:
            connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            for k, v in headers:
                connection.putheader(k, v)
            connection.endheaders(body or None)
            response = connection.getresponse()
            return response.status, response.reason, response.getheaders(), response.read()
        finally:
            connection.close()


class _Reader:
    """Reads HTTP/1.1 requests (Content-Length bodies) from a client connection."""

    def __init__(self, sock: socket.socket, stop: threading.Event):
        self.sock, self.stop, self.buffer = sock, stop, b""

    def _fill(self) -> bool:
        while not self.stop.is_set():
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                continue
            if not data:
                return False
            self.buffer += data
            return True
        return False

    def request(self) -> tuple[str, str, list[tuple[str, str]], bytes] | None:
        while b"\r\n\r\n" not in self.buffer:
            if not self._fill():
                return None
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = [tuple(part.strip() for part in line.split(":", 1)) for line in lines[1:] if ":" in line]
        length = next((int(v) for k, v in headers if k.lower() == "content-length"), 0)
        while len(self.buffer) < length:
            if not self._fill():
                return None
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return method, path, headers, body  # type: ignore[return-value]


@contextlib.contextmanager
def fault_proxy(server: dict[str, Any], rule: Rule | None = None) -> Iterator[FaultProxy]:
    """A :class:`FaultProxy` in front of the session's moto server (``s3`` fixture); stopped on exit."""
    proxy = FaultProxy(server["endpoint"], rule).start()
    try:
        yield proxy
    finally:
        proxy.stop()


def through(proxy: FaultProxy, options: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """``storage_options`` reaching moto through ``proxy``."""
    return {**options, "endpoint": proxy.endpoint, **extra}
