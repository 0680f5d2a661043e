"""The thread pools of one owner (an io, a worker process, a single call), shut down by that owner.

Chunks are encoded and decoded on one pool (numcodecs releases the GIL while it compresses), and
sources copied into a file are read on another: those may be synchronous zarr arrays, whose reads
wait on the event loop and on its default executor, so they must neither run on the loop nor occupy
its executor. Pools start their threads on first use; :meth:`WorkPools.close` waits for the work
given to them and ends their threads, so nothing of a closed io keeps running.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Self

from .task_groups import ShieldingExecutor

#: Threads of the prefix every pool here names its threads with.
THREAD_PREFIX = "hdmf_zarr3-"
#: Threads reading sources of a copy at once.
SOURCE_THREADS = 4


def before_threads_stop(hook: Callable[[], None]) -> None:
    """Run ``hook`` at interpreter exit before thread pools refuse work (zarr's stores run on them): after the
    main thread ends, before ``atexit`` hooks run.

    Why private: CPython 3.12's ``threading._register_atexit`` is its only hook at that moment, and has no
    public name (not in typeshed either); tests/project/test_zarr_adapter.py checks that it is there."""
    threading._register_atexit(hook)  # type: ignore[attr-defined]


def default_encoder_threads() -> int:
    """One per core (zarr's ``threading.max_workers`` when set), at least two."""
    import zarr

    configured = zarr.config.get("threading.max_workers", None)
    return max(2, int(configured) if configured else os.cpu_count() or 2)


class WorkPools:
    """The encoder pool and the source-reader pool of one owner, started lazily.

    Parameters
    ----------
    encoder_threads : int, optional
        Threads encoding and decoding chunks (default: :func:`default_encoder_threads`).
    source_threads : int
        Threads reading the sources of copies.
    """

    def __init__(self, encoder_threads: int | None = None, source_threads: int = SOURCE_THREADS):
        self.encoder_threads = encoder_threads or default_encoder_threads()
        self.source_threads = source_threads
        self._encoders: ThreadPoolExecutor | None = None
        self._sources: ThreadPoolExecutor | None = None
        self._closed = False
        self._pid = os.getpid()
        self._lock = threading.Lock()  # two threads' first uses make one pool

    def _pool(self, attribute: str, threads: int, name: str) -> ThreadPoolExecutor:
        with self._lock:
            if self._closed:
                raise RuntimeError("these thread pools were shut down with their owner (a closed io)")
            if self._pid != os.getpid():
                # A forked child inherits the pools without their threads: work given to them would
                # wait forever. It gets pools of its own (the parent's objects are left alone).
                self._pid, self._encoders, self._sources = os.getpid(), None, None
            pool = getattr(self, attribute)
            if pool is None:
                # (a Ctrl-C in one of their threads must not end the event loop: see task_groups)
                pool = ShieldingExecutor(max_workers=threads, thread_name_prefix=THREAD_PREFIX + name)
                setattr(self, attribute, pool)
            return pool

    @property
    def encoders(self) -> ThreadPoolExecutor:
        """The pool encoding and decoding chunks."""
        return self._pool("_encoders", self.encoder_threads, "encode")

    @property
    def sources(self) -> ThreadPoolExecutor:
        """The pool reading the sources of copies."""
        return self._pool("_sources", self.source_threads, "source")

    def close(self, wait: bool = True) -> None:
        """End the pools' threads (after the work given to them when ``wait``); later uses raise."""
        with self._lock:
            self._closed = True
            if self._pid != os.getpid():  # the parent's pools (see _pool): not this process's to end
                self._encoders, self._sources = None, None
            pools, self._encoders, self._sources = (self._encoders, self._sources), None, None
        for pool in pools:
            if pool is not None:
                pool.shutdown(wait=wait, cancel_futures=not wait)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
