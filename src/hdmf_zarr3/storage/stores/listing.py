"""Every object of a store, as a tool that uploads it sees them: keys and sizes (raw bytes: ``nodes.get_keys``).

``hdmf-zarr3 check-dandi`` applies dandi-cli's rules to the objects an upload sends (dandi-cli walks the
directory): it needs the listing, the raw text of each ``zarr.json`` (not our parsed and checked
documents: dandi-cli's own parser decides) and the size of each object (one PUT each, at most 5 GiB).
"""

from __future__ import annotations

import functools

from zarr.abc.store import Store

from .nodes import bounded
from .zarr_adapter import sync


def list_objects(store: Store) -> list[str]:
    """The keys of every object in ``store``, sorted."""

    async def listed() -> list[str]:
        return sorted([key async for key in store.list()])

    return sync(listed())


def object_sizes(store: Store, keys: list[str]) -> list[int]:
    """The size in bytes of each of ``keys`` (all stored: ``FileNotFoundError`` naming one that is not)."""
    sizes = stored_sizes(store, keys)
    for key, size in zip(keys, sizes):
        if size is None:
            raise FileNotFoundError(key)
    return [size for size in sizes if size is not None]


def stored_sizes(store: Store, keys: list[str]) -> list[int | None]:
    """The size in bytes of each of ``keys`` (``None``: not stored), asked at most :data:`.nodes.CONCURRENCY`
    at a time (one round of requests on an object store, no body read)."""

    async def size(key: str) -> int | None:
        try:
            return await store.getsize(key)
        except FileNotFoundError:
            return None

    return sync(bounded([functools.partial(size, k) for k in keys]))
