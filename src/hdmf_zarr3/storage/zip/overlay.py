"""The store of a zip opened to be changed (modes ``r+`` and ``a``): the zip is read in place, and what the
session stores or deletes is kept beside it, in a working directory, until the close packs it.

Nothing is extracted when the zip is opened, so opening (and closing without a change) costs what
reading the zip's directory costs, whatever the size of the archive; :func:`.zipped.update_zip` then
adds only what changed.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any

from zarr.abc.buffer import Buffer, BufferPrototype
from zarr.abc.store import ByteRequest, Store

from ..safety import GuardedLocalStore, GuardedZipStore
from ..stores import remove_tree


class ZipOverlayStore(Store):
    """Reads from the zip at ``location`` unless the session stored (or deleted) the key; stores and
    deletes go to the working directory ``work`` (deletions are remembered in :attr:`deleted`)."""

    supports_writes = True
    supports_deletes = True
    supports_listing = True
    supports_partial_writes = False

    def __init__(self, location: str, work: str) -> None:
        super().__init__(read_only=False)
        self.location = location
        self.work = work
        self.archive = GuardedZipStore(location, mode="r")
        self.changes = GuardedLocalStore(work)
        self.deleted: set[str] = set()

    def limit_reads(self, documents: Mapping[str, dict[str, Any]], promised: bool = True) -> None:
        """Bound reads by the file's node documents (see :func:`.guarded.limit_reads`)."""
        self.archive.limit(documents, promised)
        self.changes.limit(documents, promised)

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"ZipOverlayStore({self.location!r}, changes in {self.work!r})"

    async def get(self, key: str, prototype: BufferPrototype, byte_range: ByteRequest | None = None) -> Buffer | None:
        if key in self.deleted:
            return None
        found = await self.changes.get(key, prototype, byte_range)
        return found if found is not None else await self.archive.get(key, prototype, byte_range)

    async def get_partial_values(
        self, prototype: BufferPrototype, key_ranges: Iterable[tuple[str, ByteRequest | None]]
    ) -> list[Buffer | None]:
        return list(await asyncio.gather(*(self.get(k, prototype, r) for k, r in key_ranges)))

    async def getsize(self, key: str) -> int:
        if key in self.deleted:
            raise FileNotFoundError(key)
        try:
            return await self.changes.getsize(key)
        except FileNotFoundError:
            return await self.archive.getsize(key)

    async def exists(self, key: str) -> bool:
        if key in self.deleted:
            return False
        return await self.changes.exists(key) or await self.archive.exists(key)

    async def set(self, key: str, value: Buffer) -> None:
        self.deleted.discard(key)
        await self.changes.set(key, value)

    async def delete(self, key: str) -> None:
        self.deleted.add(key)
        await self.changes.delete(key)

    async def list(self) -> AsyncIterator[str]:
        seen: set[str] = set()
        for source in (self.changes, self.archive):
            async for key in source.list():
                if key not in seen and key not in self.deleted:
                    seen.add(key)
                    yield key

    async def list_prefix(self, prefix: str) -> AsyncIterator[str]:
        async for key in self.list():
            if key.startswith(prefix):
                yield key

    async def list_dir(self, prefix: str) -> AsyncIterator[str]:
        base = prefix.rstrip("/") + "/" if prefix.rstrip("/") else ""
        seen: set[str] = set()
        async for key in self.list_prefix(base):
            child = key[len(base) :].split("/", 1)[0]
            if child and child not in seen:
                seen.add(child)
                yield child

    def drop_changes(self) -> None:
        """Forget what the session stored or deleted (a failed change undone before anything was committed): the
        store reads as the zip again. A Ctrl-C meanwhile is raised once the working directory is empty."""
        remove_tree(self.work)
        os.makedirs(self.work, exist_ok=True)
        self.deleted.clear()

    def close(self) -> None:
        self.archive.close()
        self.changes.close()
        super().close()
