"""Every object of a store, as a tool that uploads it sees them: keys, raw bytes and sizes.

``hdmf-zarr3 check-dandi`` applies dandi-cli's rules to the objects an upload sends (dandi-cli walks the
directory): it needs the listing, the raw text of each ``zarr.json`` (not our parsed and checked
documents: dandi-cli's own parser decides) and the size of each object (one PUT each, at most 5 GiB).
"""

from __future__ import annotations

import asyncio

from zarr.abc.store import Store
from zarr.buffer import default_buffer_prototype

from .nodes import bounded
from .zarr_adapter import sync


def list_objects(store: Store) -> list[str]:
    """The keys of every object in ``store``, sorted."""

    async def listed() -> list[str]:
        return sorted([key async for key in store.list()])

    return sync(listed())


def read_objects(store: Store, keys: list[str]) -> list[bytes | None]:
    """The raw bytes of each of ``keys`` (None for one that is gone)."""
    proto = default_buffer_prototype()
    jobs = [lambda k=k: store.get(k, prototype=proto) for k in keys]
    return [None if buf is None else buf.to_bytes() for buf in sync(bounded(jobs))]


def object_sizes(store: Store, keys: list[str]) -> list[int]:
    """The size in bytes of each of ``keys``."""

    async def sized() -> list[int]:
        return list(await asyncio.gather(*(store.getsize(k) for k in keys)))

    return sync(sized())
