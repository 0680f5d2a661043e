"""Mode ``w`` over an existing file: the old file stays until the new one is finished.

HDF5 truncates a file when it is opened with ``w``; a crash or an exception before the write ends
then leaves nothing. Here an existing local directory is replaced only when the new write commits:

- a **local directory** is written in a working directory beside it
  (``<name>.<random>.partial``), which the commit swaps with the old one in a single
  ``renameat2(RENAME_EXCHANGE)`` (Linux); the old content, now under the working name, is then
  deleted. Where the exchange is not available the old directory is first renamed aside
  (``<name>.<random>.previous``), leaving a moment in which neither is at the path;
- a **zip** is packed from its working directory only after a commit (see :mod:`.zipped`);
- **other stores** (object stores, a ``Store`` passed in) cannot rename: the old file is left as it
  is until the first node of the new one is written, and from then on reads as incomplete until the
  write finishes. Closing without a write, or an error before it, leaves the old file untouched.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import uuid
from typing import Any

from zarr.abc.store import Store
from zarr.storage import LocalStore

from ...errors import StoreError
from ...format.documents import completion, group_document
from ..paths import RootDirectory, private_directory, side_stem
from ..stores import remove_tree, sync
from .guarded import GuardedLocalStore
from .locks import IN_STORE_KEY, transactional

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def working_directory(location: str) -> str:
    """A new, empty directory beside ``location`` for the file that will replace it: private (mode 0700), with a
    fresh name (``<name>.<random>.partial``, after a stem that fits however long the name) in the real directory
    holding ``location``, never one that exists."""
    return private_directory(location, os.path.basename(side_stem(location)) + ".", suffix=".partial")


class LocalReplacement:
    """A new file being written in ``work`` that replaces the directory ``location`` on commit."""

    def __init__(self, location: str):
        self.location = os.path.realpath(location)  # a symlink's target is replaced, not the link
        self.work = working_directory(self.location)
        self.old = ""

    def store(self) -> GuardedLocalStore:
        return GuardedLocalStore(self.work)

    def swap(self) -> GuardedLocalStore:
        """Put the finished file at the location; a store on the location. :meth:`remove_old` then
        deletes the old one."""
        try:
            if _exchange(self.work, self.location):
                self.old = self.work
                # private again, as working directories are: should the writer be killed before the old file is
                # deleted, the next writer knows it for a leftover of ours (zipped.leftovers), not the user's
                with contextlib.suppress(OSError):
                    os.chmod(self.old, 0o700)
            else:
                self.old = f"{side_stem(self.location)}.{uuid.uuid4().hex[:8]}.previous"
                os.rename(self.location, self.old)
                os.rename(self.work, self.location)
        except OSError as exc:
            self.discard()
            error = StoreError(
                f"cannot put the new file in place of the old one ({exc}); the old file is untouched and "
                "the new one was discarded",
                self.location,
            )
            error.errno = exc.errno  # (a read-only file system, a full disk: as the OSError said)
            raise error from exc
        return GuardedLocalStore(self.location)

    def remove_old(self) -> None:
        """Delete the old file (after :meth:`swap`)."""
        remove_tree(self.old)

    def discard(self) -> None:
        """Drop the unfinished new file; the old one was never touched."""
        remove_tree(self.work)


def _exchange(a: str, b: str) -> bool:
    """Swap two paths atomically (Linux ``renameat2``); False where the system cannot."""
    renameat2 = _renameat2()
    if renameat2 is None:
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):  # e.g. some network file systems
        return False
    raise OSError(code, os.strerror(code), b)


_LIBC: list[Any] = []  # libc's renameat2 (a ctypes function), or None: looked up once


def _renameat2() -> Any:
    if not _LIBC:
        name = ctypes.util.find_library("c")
        function = None
        if name is not None:
            try:
                function = getattr(ctypes.CDLL(name, use_errno=True), "renameat2", None)
            except OSError:
                function = None
        if function is not None:
            function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
            function.restype = ctypes.c_int
        _LIBC.append(function)
    return _LIBC[0]


def replace_in_place(store: Store, location: str | None, writer: str) -> None:
    """Empty a store for mode ``w`` (when the first node of the new file is written). The root is first
    stored marked incomplete, so a writer killed while it deletes the old file leaves a file that reads
    as incomplete, never a valid-looking remnant."""
    from ..stores import put_documents

    if transactional(store):  # nothing is seen before commit
        sync(store.clear())
        return
    put_documents(store, {"/": completion.marked(group_document({}), completion.marker("write", writer))})
    # the write lock of a bucket root or of a Store passed in lives inside the store: clearing the old file
    # must not release it (a second writer would get in while this one writes)
    keep = ("zarr.json", IN_STORE_KEY)
    if isinstance(store, LocalStore) and location is not None:
        _clear_local(location, keep=keep)
    else:
        sync(_clear_except(store, keep))


async def _clear_except(store: Store, keep: tuple[str, ...]) -> None:
    entries = [e async for e in store.list_dir("")]
    for entry in entries:
        if entry not in keep:
            await store.delete_dir(entry)
            await store.delete(entry)


def _clear_local(location: str | None, keep: tuple[str, ...] = ()) -> None:
    """Delete everything in the directory ``location`` but the names ``keep``, never entering a symlink (one
    inside is unlinked as a link; :class:`..paths.RootDirectory`)."""
    if location and os.path.isdir(location):
        with RootDirectory(location) as tree:
            for name in tree.list_directory(""):
                if name not in keep:
                    tree.remove(name)
