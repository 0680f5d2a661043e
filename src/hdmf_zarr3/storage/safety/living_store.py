"""A store that serves one file's node only while the file is open: the store of the zarr arrays handed out
to users (``data.dataset``), which outlive the io that made them.

zarr's arrays read through whatever store they were given, and a local store closed with its io simply
opens again on the next read: kept past ``close()``, such an array would go on reading the closed file, or
the file a later ``w`` put at the same path. Every call here first asks the file's
:class:`~.open_files.Lifetime`, which raises ``ClosedFileError`` naming the node once the file is closed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import Any, Self

from zarr.abc.store import Store
from zarr.storage import WrapperStore

from ..stores import wrapped_store
from .open_files import Lifetime


class LivingStore(WrapperStore[Any]):
    """``store`` while ``life`` says its file is open; else every call raises ``ClosedFileError`` naming
    ``path`` (the node whose array reads through it).

    Parameters
    ----------
    store : zarr.abc.store.Store
        The open file's store.
    life : Lifetime
        The file's lifetime (ended by the io's ``close``).
    path : str
        The node named by the error.
    """

    def __init__(self, store: Store, life: Lifetime, path: str) -> None:
        super().__init__(store)
        self.life = life
        self.path = path

    @property
    def wrapped(self) -> Store:
        """The file's store."""
        return wrapped_store(self)

    def _alive(self) -> Store:
        self.life.check(wrapped_store(self), self.path)
        return wrapped_store(self)

    def close(self) -> None:
        """Nothing: the store is its io's, closed with it."""

    def _with_store(self, store: Store) -> Self:
        return type(self)(store, self.life, self.path)

    # (every entry point of zarr's Store, read and write, async and sync: zarr picks among them)
    async def get(self, key: str, prototype: Any, byte_range: Any = None) -> Any:
        return await self._alive().get(key, prototype, byte_range)

    async def get_partial_values(self, prototype: Any, key_ranges: Any) -> Any:
        return await self._alive().get_partial_values(prototype, key_ranges)

    async def get_ranges(self, *args: Any, **kwargs: Any) -> Any:
        self._alive()
        async for group in super().get_ranges(*args, **kwargs):
            yield group

    async def _get_many(self, *args: Any, **kwargs: Any) -> Any:
        self._alive()
        async for item in super()._get_many(*args, **kwargs):
            yield item

    async def exists(self, key: str) -> bool:
        return await self._alive().exists(key)

    # (zarr's Store answers these by reading every object whole: a local directory and an object store know
    # the sizes without reading; ``nbytes_stored()`` of a 1 GiB array read 1 GiB)
    async def getsize(self, key: str) -> int:
        return await self._alive().getsize(key)

    async def getsize_prefix(self, prefix: str) -> int:
        return await self._alive().getsize_prefix(prefix)

    async def is_empty(self, prefix: str) -> bool:
        return await self._alive().is_empty(prefix)

    async def set(self, key: str, value: Any) -> None:
        await self._alive().set(key, value)

    async def set_if_not_exists(self, key: str, value: Any) -> None:
        await self._alive().set_if_not_exists(key, value)

    async def _set_many(self, values: Iterable[tuple[str, Any]]) -> None:
        self._alive()
        await super()._set_many(values)

    async def delete(self, key: str) -> None:
        await self._alive().delete(key)

    async def delete_dir(self, prefix: str) -> None:
        await self._alive().delete_dir(prefix)

    async def clear(self) -> None:
        await self._alive().clear()

    def get_sync(self, *args: Any, **kwargs: Any) -> Any:
        return self._alive().get_sync(*args, **kwargs)  # type: ignore[attr-defined]  # (sync stores only)

    def set_sync(self, key: str, value: Any) -> None:
        self._alive().set_sync(key, value)  # type: ignore[attr-defined]  # (sync stores only)

    def delete_sync(self, key: str) -> None:
        self._alive().delete_sync(key)  # type: ignore[attr-defined]  # (sync stores only)

    def list(self) -> AsyncIterator[str]:
        return self._alive().list()

    def list_prefix(self, prefix: str) -> AsyncIterator[str]:
        return self._alive().list_prefix(prefix)

    def list_dir(self, prefix: str) -> AsyncIterator[str]:
        return self._alive().list_dir(prefix)
