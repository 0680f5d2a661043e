"""Files this process has open, so that a write cannot destroy what another open object reads.

Mode ``w`` replaces a file, and a container read lazily from it still needs its chunks: replacing
the file under an open reader would turn every dataset read later into zeros. Each open store
registers where it lives (its resolved location, or the Store object itself); opening a location
with ``w`` (or ``w-``/``x``) that is open, lies inside an open file or contains one is refused. An io
that nothing refers to any more but a reference cycle (``read_nwb`` returns a file whose io it keeps)
is collected first: only readers still in use count.
Readers in *other* processes are not known here (they take no lock); see docs/security.md.
"""

from __future__ import annotations

import gc
import threading
import weakref
from typing import Any

from ..errors import SelfOverwriteError
from . import locations

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
