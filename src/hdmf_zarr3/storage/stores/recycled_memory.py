"""Memory for the blocks of lazy reads, handed back when the last array using it is gone, and used again.

A dask computation reads its blocks into new arrays and drops them once used (a reduction block by block)
or once copied into its result (``compute()`` of a selection). A new array's pages cost the kernel a fault
and zeroing each, and far more on a virtual machine whose host takes free memory back: measured here
(docs/performance.md), touching 264 MiB of fresh memory took 24 ms when just freed and 200–550 ms when the
host had reclaimed it, against 40–60 ms to decode the same bytes. Blocks read into memory already touched
do not pay it.

Safety rests on one object per block handed out (:class:`_Lease`): the array given out is a view of the
lease's buffer, and NumPy makes every further view, slice, reshape or memoryview keep the lease alive, not
the array it came from. Only when nothing refers to the lease any more does its buffer come back here
(``weakref.finalize``); a buffer is never given out twice at once.
"""

from __future__ import annotations

import math
import os
import threading
import weakref
from typing import Any

import numpy as np

_MEMORY = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
#: The most bytes one open file keeps idle for reuse: 1 GiB, or a 16th of the machine's memory where that
#: is less (a whole read through dask holds its blocks and its result at once: twice the array).
FILE_IDLE_BYTES = min(2**30, _MEMORY // 16)
#: The most bytes kept idle by all open files of the process together (an 8th of the machine's memory).
#: More than either bound, given back, goes to the allocator as any array would.
IDLE_BYTES = _MEMORY // 8
#: Blocks smaller than this are left to the allocator, which reuses small blocks well on its own.
SMALLEST = 4 * 2**20


class _Lease:
    """One buffer lent out: exposes its memory (PEP 688) and, when collected, gives it back."""

    __slots__ = ("raw", "__weakref__")

    def __init__(self, raw: np.ndarray) -> None:
        self.raw = raw

    def __buffer__(self, flags: int) -> memoryview:
        return memoryview(self.raw)

    def __release_buffer__(self, view: memoryview) -> None:
        view.release()


class IdleBudget:
    """The idle bytes of every :class:`RecycledMemory` of the process, held within a bound."""

    def __init__(self, bound: int) -> None:
        self.bound, self.used = bound, 0
        self._lock = threading.Lock()

    def reserve(self, nbytes: int) -> bool:
        with self._lock:
            if self.used + nbytes > self.bound:
                return False
            self.used += nbytes
            return True

    def release(self, nbytes: int) -> None:
        with self._lock:
            self.used -= nbytes


#: The process's idle memory, shared by every open file's :class:`RecycledMemory`.
PROCESS_BUDGET = IdleBudget(IDLE_BYTES)


class RecycledMemory:
    """Empty arrays for lazy reads, made from buffers given back by arrays no longer used.

    ``empty(shape, dtype)`` is ``np.empty`` (the values are whatever the buffer held: the caller writes
    every element). At most ``bound`` bytes are kept idle (:data:`FILE_IDLE_BYTES`), and they count against
    ``budget`` (:data:`PROCESS_BUDGET`: at most :data:`IDLE_BYTES` idle in the process); :meth:`close` drops
    them and keeps nothing given back later.
    """

    def __init__(self, budget: IdleBudget = PROCESS_BUDGET, bound: int = FILE_IDLE_BYTES) -> None:
        self._idle: dict[int, list[np.ndarray]] = {}
        self._idle_bytes = 0
        self._budget, self._bound = budget, bound
        self._open = True
        # gc may give a buffer back from inside a locked section of the same thread
        self._lock = threading.RLock()

    def empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """An uninitialised array of ``shape`` and ``dtype``, backed by reused memory when there is some."""
        dtype = np.dtype(dtype)
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes < SMALLEST or not self._open:
            return np.empty(shape, dtype=dtype)
        raw = self._take(nbytes)
        lease = _Lease(raw)
        weakref.finalize(lease, self._give_back, raw).atexit = False
        return np.frombuffer(lease, dtype=dtype, count=math.prod(shape)).reshape(shape)

    def _take(self, nbytes: int) -> np.ndarray:
        """An idle buffer of ``nbytes`` up to a quarter more (the smallest such), or a new one."""
        with self._lock:
            fits = [size for size, idle in self._idle.items() if idle and nbytes <= size <= nbytes * 5 // 4]
            if fits:
                size = min(fits)
                self._idle_bytes -= size
                self._budget.release(size)
                return self._idle[size].pop()
        return np.empty(nbytes, dtype=np.uint8)

    def _give_back(self, raw: np.ndarray) -> None:
        with self._lock:
            if self._open and self._idle_bytes + raw.nbytes <= self._bound and self._budget.reserve(raw.nbytes):
                self._idle.setdefault(raw.nbytes, []).append(raw)
                self._idle_bytes += raw.nbytes

    @property
    def idle_bytes(self) -> int:
        """The bytes kept for reuse now."""
        return self._idle_bytes

    def __del__(self) -> None:  # a file never closed: its idle bytes leave the budget with it
        self.close()

    def close(self) -> None:
        """Drop the idle buffers; buffers given back from now on are freed."""
        with self._lock:
            self._open = False
            self._idle.clear()
            self._budget.release(self._idle_bytes)
            self._idle_bytes = 0
