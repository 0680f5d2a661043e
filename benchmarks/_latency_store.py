"""A zarr store wrapper that adds a fixed delay to every request and counts the requests.

Only zarr is imported, so the module also loads in the hdmf-zarr 0.14 scratch venv. The wrapper
reports no synchronous I/O (as remote stores such as ``FsspecStore`` do), so every request goes
through the delayed asynchronous methods; concurrent requests overlap their delays, as they would
against an object store.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import AsyncIterator, Iterable
from typing import Any

from zarr.abc.store import ByteRequest, Store
from zarr.core.buffer import Buffer, BufferPrototype
from zarr.storage import WrapperStore


class Rounds:
    """Counts rounds of requests: a round starts when a request starts while none is in flight.

    Requests sent together (concurrently) share one round; requests sent one after the other take one
    round each. With a fixed latency per request, the time spent waiting is about ``rounds * latency``.
    Thread-safe: the HTTP server of :mod:`_http_range` counts from its handler threads.
    """

    def __init__(self) -> None:
        self.rounds = 0
        self._in_flight = 0
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            if self._in_flight == 0:
                self.rounds += 1
            self._in_flight += 1

    def end(self) -> None:
        with self._lock:
            self._in_flight -= 1


class LatencyStore(WrapperStore[Store]):
    """Wrap ``store``, sleeping ``latency`` seconds before each request and counting requests by kind.

    Parameters
    ----------
    store : zarr.abc.store.Store
        The store to wrap (typically a ``LocalStore``).
    latency : float
        Seconds added to each request (``asyncio.sleep``; concurrent requests overlap).
    counts : collections.Counter, optional
        Where to count requests; shared by the copies zarr makes (``with_read_only``).
    rounds : Rounds, optional
        Where to count rounds of requests (also shared by the copies).
    """

    def __init__(
        self, store: Store, latency: float = 0.02, counts: Counter | None = None, rounds: Rounds | None = None
    ) -> None:
        super().__init__(store)
        self.latency = latency
        self.counts = Counter() if counts is None else counts
        self.rounds = Rounds() if rounds is None else rounds
        self._lock = threading.Lock()

    def _with_store(self, store: Store) -> LatencyStore:
        return type(self)(store, self.latency, self.counts, self.rounds)

    @property
    def _supports_sync_io(self) -> bool:
        return False

    async def _delay(self, kind: str, n: int = 1) -> None:
        with self._lock:
            self.counts[kind] += n
        self.rounds.start()
        try:
            await asyncio.sleep(self.latency)
        finally:
            self.rounds.end()

    @property
    def requests(self) -> int:
        """Total number of requests made so far."""
        return sum(self.counts.values())

    def __str__(self) -> str:
        return f"latency-{self._store}"

    async def get(self, key: str, prototype: BufferPrototype, byte_range: ByteRequest | None = None) -> Buffer | None:
        await self._delay("get")
        return await self._store.get(key, prototype, byte_range)

    async def get_partial_values(
        self, prototype: BufferPrototype, key_ranges: Iterable[tuple[str, ByteRequest | None]]
    ) -> list[Buffer | None]:
        key_ranges = list(key_ranges)
        await self._delay("get_partial_values", len(key_ranges))
        return await self._store.get_partial_values(prototype, key_ranges)

    async def get_ranges(
        self, key: str, byte_ranges: Any, *, prototype: BufferPrototype, **kwargs: Any
    ) -> AsyncIterator[Any]:
        # The base implementation coalesces the ranges over self.get, which is delayed.
        async for group in Store.get_ranges(self, key, byte_ranges, prototype=prototype, **kwargs):
            yield group

    async def _get_many(
        self, requests: Iterable[tuple[str, BufferPrototype, ByteRequest | None]]
    ) -> AsyncIterator[tuple[str, Buffer | None]]:
        async for item in Store._get_many(self, requests):  # one delayed get each
            yield item

    async def _set_many(self, values: Iterable[tuple[str, Buffer]]) -> None:
        await asyncio.gather(*(self.set(key, value) for key, value in values))

    async def exists(self, key: str) -> bool:
        await self._delay("exists")
        return await self._store.exists(key)

    async def getsize(self, key: str) -> int:
        await self._delay("getsize")
        return await self._store.getsize(key)

    async def set(self, key: str, value: Buffer) -> None:
        await self._delay("set")
        await self._store.set(key, value)

    async def set_if_not_exists(self, key: str, value: Buffer) -> None:
        await self._delay("set")
        await self._store.set_if_not_exists(key, value)

    async def delete(self, key: str) -> None:
        await self._delay("delete")
        await self._store.delete(key)

    async def delete_dir(self, prefix: str) -> None:
        await self._delay("delete")
        await self._store.delete_dir(prefix)

    async def is_empty(self, prefix: str) -> bool:
        await self._delay("list")
        return await self._store.is_empty(prefix)

    async def _list(self, source: AsyncIterator[str]) -> AsyncIterator[str]:
        await self._delay("list")
        async for key in source:
            yield key

    def list(self) -> AsyncIterator[str]:
        return self._list(self._store.list())

    def list_prefix(self, prefix: str) -> AsyncIterator[str]:
        return self._list(self._store.list_prefix(prefix))

    def list_dir(self, prefix: str) -> AsyncIterator[str]:
        return self._list(self._store.list_dir(prefix))
