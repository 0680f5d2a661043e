"""What a call raises, checked to come within a time and a memory bound (the hostile-input tests)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from format.test_json_limits import _peak_of


def error_within(call: Callable[[], Any], seconds: float, memory: int) -> Exception | None:
    """``call()``'s error (``None`` if it returns), asserting it came in under ``seconds`` and ``memory`` bytes."""

    def run() -> Exception | None:
        try:
            call()
        except Exception as exc:
            return exc
        return None

    start = time.perf_counter()
    error, peak = _peak_of(run)
    elapsed = time.perf_counter() - start
    assert elapsed < seconds, f"took {elapsed:.1f} s"
    assert peak < memory, f"took {peak / 2**20:.0f} MiB"
    return error


def returns_within(function: Callable[..., Any], *args: Any, seconds: float = 60.0) -> Any:
    """``function(*args)`` run in a thread: its value, or its exception raised here; the test fails (instead of
    hanging on a FIFO, say) when it has not ended within ``seconds``."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = function(*args)
        except BaseException as exc:  # handed to the test
            outcome["error"] = exc

    worker = threading.Thread(target=run, daemon=True, name="bounded-call")
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"{getattr(function, '__name__', function)} blocked for more than {seconds} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")
