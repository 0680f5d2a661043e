"""The runs of an exhaustive sweep, shared among worker processes (one per core).

Every run of a sweep (one operation index k) starts from its own copy of the file and checks what it left, so
runs are independent; what is left of their cost once the shared work is done once (``sweep_memo.py``) is the
library's and HDMF's work for that k, which only more cores make shorter.

Workers are started with ``spawn`` (a fork would copy the parent's zarr event loop and I/O threads as dead
locks) and set up once by ``initializer``. Each run reports ``None`` or the first line of its failed assertion,
as the sweep's loop did; any other error of a run is raised in the test. ``HDMF_ZARR3_SWEEP_WORKERS`` sets
how many workers (default: the cores, at most 4, shared among pytest-xdist's processes: with as many of those as
cores, each sweep runs in its own test's process, which spares each sweep starting its pool); 1 runs the sweep in
the test's own process.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

#: How long one run may take in a worker before the sweep is declared hung (a run takes well under a second).
RUN_TIMEOUT = 120


def worker_count() -> int:
    """How many worker processes a sweep uses (1: none, the test's own process runs it)."""
    processes = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))  # set by pytest-xdist in its workers
    return int(os.environ.get("HDMF_ZARR3_SWEEP_WORKERS", "0")) or min((os.cpu_count() or 1) // processes, 4) or 1


@contextlib.contextmanager
def pool(initializer: Callable[..., None], *initargs: Any) -> Iterator[ProcessPoolExecutor | None]:
    """Worker processes, each set up by ``initializer(*initargs)``; ``None`` when one process is wanted."""
    count = worker_count()
    if count <= 1:
        yield None
        return
    context = multiprocessing.get_context("spawn")
    executor = ProcessPoolExecutor(count, mp_context=context, initializer=initializer, initargs=initargs)
    try:
        yield executor
    finally:
        executor.shutdown(wait=True, cancel_futures=True)


def run_all(executor: ProcessPoolExecutor, run: Callable[[int], str | None], indices: Iterable[int]) -> list[str]:
    """``run(k)`` for every k, in the workers (a few consecutive k per task); the failures, in order of k."""
    indices = list(indices)
    chunk = max(1, min(8, len(indices) // (4 * worker_count())))  # small tasks: the workers end together
    results = executor.map(run, indices, chunksize=chunk, timeout=RUN_TIMEOUT * max(1, len(indices)))
    return [failure for failure in results if failure is not None]
