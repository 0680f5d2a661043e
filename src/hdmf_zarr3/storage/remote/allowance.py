"""Bytes downloading at once: what a reader asking for many objects together may hold before it parses them.

A reader of a file that is not consolidated asks for every node document at once (hundreds of requests in
flight hide the latency of an object store). Each document is bounded (its size comes with the response,
before the body), but hundreds of them in flight are not: :class:`ByteAllowance` lets a body download only
while the bodies downloading and not yet handed over stay within its limit, however many requests wait.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from ...format.documents import MAX_DOCUMENT_BYTES

#: Bytes of node documents downloading at once per store: two documents at their limit, or thousands of
#: ordinary ones (a node document of an NWB file takes about 1 KiB).
DOCUMENTS_IN_FLIGHT = 2 * MAX_DOCUMENT_BYTES


class ByteAllowance:
    """At most ``limit`` bytes taken at once, each taker waiting until its bytes fit (a larger one alone)."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = DOCUMENTS_IN_FLIGHT if limit is None else limit
        self.taken = 0
        self.most = 0  # the most ever taken at once (what tests read)
        self._changed: asyncio.Condition | None = None  # made in the loop that first uses it

    @contextlib.asynccontextmanager
    async def take(self, nbytes: int) -> AsyncIterator[None]:
        """Hold ``nbytes`` of the allowance for the block (waiting until they fit)."""
        nbytes = min(nbytes, self.limit)
        if self._changed is None:
            self._changed = asyncio.Condition()
        changed = self._changed
        async with changed:
            await changed.wait_for(lambda: self.taken + nbytes <= self.limit)
            self.taken += nbytes
            self.most = max(self.most, self.taken)
        try:
            yield
        finally:
            async with changed:
                self.taken -= nbytes
                changed.notify_all()
