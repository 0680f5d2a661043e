"""Runs of one stored object read one after another, in the order they are stored, each handed on to be
decoded as soon as it arrives.

Read so, a local file is read ahead by the kernel (its readahead follows a file read in order) while the runs
already read are decoded: a 1 s window of the ephys layout (17.5 MB of chunks in one stretch of a shard) came
from a cold page cache in 11.6 ms as 512 KiB reads one after another, against 14.5 ms as one read and 16.4 ms
as 4 MiB reads four at once, and its first bytes after 0.7 ms instead of 14.5 or 5.8 (docs/performance.md).
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable, Sequence
from typing import Any

from ..safety import ObjectFile
from ..stores import record

#: Runs read but not yet decoded, at most: what a read running ahead of its decoding holds in memory.
RUNS_AHEAD = 16

#: ``(name, offset, size)`` of each stored piece of a run, in the order stored.
Run = Sequence[tuple[Any, int, int]]
#: What decodes one run: its pieces as ``(name, bytes)``.
Decode = Callable[[list[tuple[Any, memoryview]]], None]


def read_in_order(
    source: ObjectFile,
    runs: Sequence[Run],
    decode: Decode,
    pool: concurrent.futures.Executor,
    stop: threading.Event,
    short: Callable[[], Exception],
) -> list[concurrent.futures.Future[None]]:
    """Read ``runs`` of ``source`` one after another, handing each to ``decode`` on ``pool`` as it arrives;
    return the decoding jobs. Stops before the next run once ``stop`` is set (by the caller, or by a
    decoding that failed: its error is its job's); a run ``source`` holds only part of is ``short()``."""
    jobs: list[concurrent.futures.Future[None]] = []
    ahead = threading.Semaphore(RUNS_AHEAD)

    def decoded(job: concurrent.futures.Future[None]) -> None:
        ahead.release()
        if job.cancelled() or job.exception() is not None:
            stop.set()

    for run in runs:
        start, end = run[0][1], max(offset + size for _, offset, size in run)
        ahead.acquire()
        if stop.is_set():
            break
        data = memoryview(source.read(start, end))
        if len(data) != end - start:
            raise short()
        job = pool.submit(decode, [(name, data[offset - start : offset - start + size]) for name, offset, size in run])
        record(job)  # (a member of the read's task group, when this runs in its context)
        job.add_done_callback(decoded)
        jobs.append(job)
    return jobs
