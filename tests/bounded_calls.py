"""What a call raises, checked to come within a time and a memory bound (the hostile-input tests)."""

from __future__ import annotations

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
