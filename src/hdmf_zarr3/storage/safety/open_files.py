"""Files this process has open, so that a write cannot destroy what another open object reads.

Mode ``w`` replaces a file, and a container read lazily from it still needs its chunks: replacing
the file under an open reader would turn every dataset read later into zeros. Each open store
registers where it lives (its resolved location, or the Store object itself); opening a location
with ``w`` (or ``w-``/``x``) that is open, lies inside an open file or contains one is refused. An io
that nothing refers to any more but a reference cycle (``read_nwb`` returns a file whose io it keeps)
is collected first: only readers still in use count.
Readers in *other* processes are not known here (they take no lock); see docs/security.md.

Each open store also has a :class:`Lifetime`, ended when it is closed, which the lazy objects read
from it (dask arrays, lazy datasets) check before every read.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from zarr.buffer import default_buffer_prototype

from ...errors import ClosedFileError, SelfOverwriteError
from ..stores import ZARR_JSON, RecycledMemory, WorkPools, locations, sync

_OPEN: weakref.WeakKeyDictionary[Any, str | int] = weakref.WeakKeyDictionary()
_GUARD = threading.Lock()


def identity(location: str | None, store: Any) -> str | int:
    """What two opens of the same file share: the resolved location, else the Store object."""
    return locations.resolved(location) if location else id(store)


def register(handle: Any, location: str | None, store: Any) -> None:
    with _GUARD:
        _OPEN[handle] = identity(location, store)


def unregister(handle: Any) -> None:
    with _GUARD:
        _OPEN.pop(handle, None)


def check_replaceable(location: str | None, store: Any, mode: str) -> None:
    """Refuse to open ``location`` (or ``store``) with a creating ``mode`` while this process reads it."""
    mine = identity(location, store)
    if not _conflicts(mine):
        return
    gc.collect()  # an io nobody refers to any more (kept only by a reference cycle) is not a reader
    for handle, how in _conflicts(mine):
        what = {
            "same": "is open",
            "inside": "lies inside a file that is open",
            "contains": "contains a file that is open",
        }[how]
        raise SelfOverwriteError(
            f"cannot open with mode {mode!r}: this {what} in this process ({handle.mode!r}, "
            f"{getattr(handle, 'location', None) or 'a Store'}); replacing it would destroy data still "
            "being read. Close that file first, or write to another path.",
            location or repr(store),
        )


def _conflicts(mine: str | int) -> list[tuple[Any, str]]:
    with _GUARD:
        others = list(_OPEN.items())
    found = []
    for handle, theirs in others:
        how = _relation(mine, theirs)
        if how == "same" and handle.writable:  # its write lock answers, naming the holder
            continue
        if how is not None:
            found.append((handle, how))
    return found


def _relation(a: str | int, b: str | int) -> str | None:
    if isinstance(a, int) or isinstance(b, int):
        return "same" if a == b else None
    return locations.overlap(a, b)


class Lifetime:
    """The life of one open file, shared by what reads it lazily without holding its io (dask arrays).

    In this process it is simply open until :meth:`end` (the io's ``close``). A copy pickled to another
    process (a ``distributed`` worker) cannot learn that the io closed: it carries whether the file was
    still open when it was pickled and the digest of the root document (:meth:`stamp`) taken when the
    lazy object was made; before each read it compares that digest with the root stored now, so a file
    replaced (or changed) since is refused rather than read. See docs/security.md.
    """

    def __init__(self, where: str, is_open: bool = True, stamp: str | None = None, pickled: bool = False) -> None:
        self.where = where
        self._open = is_open
        self._stamp = stamp  # the root's digest, once asked for
        self._pickled = pickled  # a copy in another process: only the stamp can tell
        self._pools: WorkPools | None = None  # the read tasks' pools in this process, made on first use
        self._memory: RecycledMemory | None = None  # the read tasks' blocks in this process, made on first use
        self._pools_lock = threading.Lock()

    def end(self) -> None:
        """The file is closed: every read through this lifetime is refused from now on, and the pools its
        read tasks decoded on end (after the work given to them), and the memory kept for their blocks goes."""
        self._open = False
        with self._pools_lock:
            pools, self._pools = self._pools, None
            memory, self._memory = self._memory, None
        if pools is not None:
            pools.close()
        if memory is not None:
            memory.close()

    @contextlib.contextmanager
    def read_pools(self) -> Iterator[WorkPools]:
        """The pools a lazy read decodes on: in the process that opened the file, one set shared by all its
        read tasks (tasks running at once on pools of their own started and joined threads for every block
        and decoded on more threads than cores), ended with the file; in another process (a pickled copy,
        which never learns of the close), pools of the one read's own."""
        if self._pickled:
            with WorkPools() as pools:
                yield pools
            return
        with self._pools_lock:
            if self._pools is None:
                self._pools = WorkPools()
            pools = self._pools
        yield pools

    def block_memory(self) -> Callable[[tuple[int, ...], Any], np.ndarray]:
        """What a lazy read's blocks are made with: in the process that opened the file, memory given back
        by blocks and results no longer used (:class:`.RecycledMemory`: a dask computation drops its blocks
        one after another, a reader of windows each window), dropped when the file closes; in another
        process, or once closed, ``np.empty``."""
        with self._pools_lock:
            if self._pickled or not self._open:
                return np.empty
            if self._memory is None:
                self._memory = RecycledMemory()
            return self._memory.empty

    def stamp(self, store: Any) -> None:
        """Note the digest of the root document ``store`` holds now (what a pickled copy compares)."""
        if self._stamp is None:
            self._stamp = _root_digest(store)

    def check(self, store: Any, path: str) -> None:
        """Raise :class:`ClosedFileError` naming ``path`` when the file is closed (or, in another
        process, no longer the file the lazy object was made from)."""
        if not self._open:
            raise ClosedFileError(
                f"the file {self.where} was closed: read the data while it is open (e.g. inside its "
                "``with`` block), or compute or copy it out first",
                path,
            )
        if self._pickled and self._stamp is not None and _root_digest(store) != self._stamp:
            raise ClosedFileError(
                f"the file {self.where} changed (was replaced or written) since this lazy array was made "
                "from it: read it again from the file",
                path,
            )

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return Lifetime, (self.where, self._open, self._stamp, True)


def _root_digest(store: Any) -> str:
    buf = sync(store.get(ZARR_JSON, prototype=default_buffer_prototype()))
    return hashlib.sha256(b"" if buf is None else buf.to_bytes()).hexdigest()
