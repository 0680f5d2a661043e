"""A zarr store wrapper that records the requests made through it (a stand-in for an object store)."""

from __future__ import annotations

import collections

from zarr.storage import WrapperStore


class CountingStore(WrapperStore):
    """Counts reads (``gets``, and ``keys`` in order), writes (``sets``) and listings (``lists``)."""

    def __init__(self, store):
        super().__init__(store)
        self.keys: list[str] = []
        self.gets: collections.Counter = collections.Counter()
        self.sets: collections.Counter = collections.Counter()
        self.lists = 0

    def _read(self, key):
        self.keys.append(key)
        self.gets[key] += 1

    async def get(self, key, prototype, byte_range=None):
        self._read(key)
        return await self._store.get(key, prototype, byte_range)

    def get_sync(self, key, *args, **kwargs):
        self._read(key)
        return self._store.get_sync(key, *args, **kwargs)

    async def get_partial_values(self, prototype, key_ranges):
        key_ranges = list(key_ranges)
        for key, _ in key_ranges:
            self._read(key)
        return await self._store.get_partial_values(prototype, key_ranges)

    async def set(self, key, value):
        self.sets[key] += 1
        await self._store.set(key, value)

    def set_sync(self, key, value):
        self.sets[key] += 1
        self._store.set_sync(key, value)

    def list(self):
        self.lists += 1
        return self._store.list()

    def list_dir(self, prefix):
        self.lists += 1
        return self._store.list_dir(prefix)

    def list_prefix(self, prefix):
        self.lists += 1
        return self._store.list_prefix(prefix)
