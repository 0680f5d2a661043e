"""The writes of a guarded local store, each through :class:`..paths.RootDirectory`: below the file's real
root, never through a symlink, only regular files and directories, never waiting on a FIFO.

zarr's ``LocalStore`` writes ``root / key`` as a path: a group directory that is a symlink (shipped that
way, or planted) takes the write to wherever it leads, a chunk that is a FIFO blocks the writer, and a
delete of a node removes the files of another directory. :class:`ConfinedWrites` replaces every writing
method of ``LocalStore`` (``set``, ``set_if_not_exists``, ``delete``, ``delete_dir``, ``clear`` and the
synchronous ``set_sync`` and ``delete_sync``) with the same operation done through a :class:`RootDirectory`
opened for that one call (so a root swapped in by mode ``w`` is the one written, and no descriptor outlives
the call). Each key is still stored whole: an exclusively created temporary renamed into place.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

from zarr.abc.buffer import Buffer

from ..paths import RootDirectory


def _bytes_of(value: Buffer) -> Any:
    if not isinstance(value, Buffer):
        raise TypeError(f"LocalStore.set(): `value` must be a Buffer instance, not {type(value)}.")
    return value.as_buffer_like()


class ConfinedWrites:
    """A mixin for a ``LocalStore`` subclass: every write through :class:`RootDirectory` (see the module)."""

    if TYPE_CHECKING:  # (LocalStore's, which comes after this mixin)
        root: Any

        def _check_writable(self) -> None: ...

        def _ensure_open_sync(self) -> None: ...

        async def _ensure_open(self) -> None: ...

    def _store_key(self, key: str, data: Any, exclusive: bool) -> None:
        with RootDirectory(os.fspath(self.root), create=True) as tree:  # (as LocalStore: the root made again)
            tree.write(key, data, exclusive=exclusive)

    def _delete_key(self, key: str, directory: bool = False) -> None:
        """Delete the key (``directory``: the directory of keys) ``key``; the root's: everything in the file."""
        with RootDirectory(os.fspath(self.root)) as tree:
            if not key.strip("/"):
                tree.clear()
            elif directory:
                tree.remove_directory(key)
            else:
                tree.remove(key)

    def _clear_root(self) -> None:
        with RootDirectory(os.fspath(self.root)) as tree:
            tree.clear()

    async def set(self, key: str, value: Buffer) -> None:
        await self._ensure_open()
        self._check_writable()
        await asyncio.to_thread(self._store_key, key, _bytes_of(value), False)

    async def set_if_not_exists(self, key: str, value: Buffer) -> None:
        await self._ensure_open()
        self._check_writable()
        try:
            await asyncio.to_thread(self._store_key, key, _bytes_of(value), True)
        except FileExistsError:
            pass

    def set_sync(self, key: str, value: Buffer) -> None:
        self._ensure_open_sync()
        self._check_writable()
        self._store_key(key, _bytes_of(value), False)

    async def delete(self, key: str) -> None:
        self._check_writable()
        await asyncio.to_thread(self._delete_key, key)

    def delete_sync(self, key: str) -> None:
        self._ensure_open_sync()
        self._check_writable()
        self._delete_key(key)

    async def delete_dir(self, prefix: str) -> None:
        self._check_writable()
        await asyncio.to_thread(self._delete_key, prefix, True)

    async def clear(self) -> None:
        self._check_writable()
        await asyncio.to_thread(self._clear_root)
