"""Headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``): no client
library, no network port. Used to time how long a page takes until a view of it is drawn.

The protocol is JSON messages, each ended by a NUL byte, written to the browser's file descriptor 3 and read
from its descriptor 4. One page is opened and attached to (a flat session); a page is then loaded fresh for
each measurement, so every time counts a whole first visit: the page, its scripts, the tree and the view.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
from typing import Any

#: JavaScript resolving to ``performance.now()`` (ms since the page's navigation began) once ``selector``
#: matches, or to -1 after ``timeout`` ms; polled every 5 ms.
WAIT = """new Promise((done) => {
  const until = performance.now() + %(timeout)d;
  const look = () => {
    if (document.querySelector(%(selector)s)) done(performance.now());
    else if (performance.now() > until) done(-1);
    else setTimeout(look, 5);
  };
  look();
})"""


class Browser:
    """One headless Chromium with one page; :meth:`first_paint` times a page until a selector matches."""

    def __init__(self, width: int = 1400, height: int = 900) -> None:
        found = shutil.which("chromium") or shutil.which("chromium-browser")
        if found is None:
            raise RuntimeError("chromium is not installed (apt-get install chromium)")
        self.profile = tempfile.TemporaryDirectory(prefix="hdmf_zarr3_chromium_")
        argv = [found, "--headless", "--disable-gpu", "--remote-debugging-pipe", f"--window-size={width},{height}"]
        argv += [f"--user-data-dir={self.profile.name}", "--no-first-run", "about:blank"]
        if os.geteuid() == 0:  # Chromium's sandbox refuses to run as root
            argv.append("--no-sandbox")
        commands_read, self._commands = os.pipe()
        self._answers, answers_written = os.pipe()

        def onto_3_and_4() -> None:
            # the browser expects the pipe on its descriptors 3 (commands) and 4 (answers); moved above 10 first,
            # so that neither end is overwritten by the other's move whatever numbers the pipes got
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (commands_read, answers_written)]
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        self.process = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(3, 4), preexec_fn=onto_3_and_4
        )
        os.close(commands_read)
        os.close(answers_written)
        self._next, self._buffer = 0, b""
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.call("Page.enable", session=True)

    def call(self, method: str, session: bool = False, **params: Any) -> dict[str, Any]:
        """Send one command and return its result (events arriving meanwhile are dropped)."""
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._message()
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})

    def _message(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._answers, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed its pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def first_paint(
        self, url: str, selector: str, settled: str | None = None, timeout_ms: int = 30_000
    ) -> float | None:
        """Seconds from the start of loading ``url`` (a fresh page) until ``selector`` matches; None if never.
        ``settled``: a selector matching once the page has nothing more under way, awaited before returning
        (what the page still asks for after the view is drawn is not left to slow down the next page)."""
        self.call("Page.navigate", session=True, url="about:blank")
        self.call("Page.navigate", session=True, url=url)
        seconds = self._when(selector, timeout_ms)
        if settled is not None:
            self._when(settled, timeout_ms)
        return seconds

    def _when(self, selector: str, timeout_ms: int) -> float | None:
        expression = WAIT % {"timeout": timeout_ms, "selector": json.dumps(selector)}
        found = self.call(
            "Runtime.evaluate", session=True, expression=expression, awaitPromise=True, returnByValue=True
        )
        value = found.get("result", {}).get("value", -1)
        return None if value is None or value < 0 else value / 1000

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (RuntimeError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        os.close(self._commands)
        os.close(self._answers)
        self.profile.cleanup()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
