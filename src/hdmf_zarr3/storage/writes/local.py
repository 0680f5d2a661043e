"""Many small keys stored into a local directory in the writer's thread, each whole.

A file of many small objects (500 TimeSeries, 1,000 units) stores ~2,000 node documents and
single-chunk arrays. Through zarr's ``LocalStore`` each costs an event-loop hop to a worker thread, a
``mkdir`` of its parents and pathlib's bookkeeping, which on this project's benchmark machine added up to
more than the file system's own work. Here the keys of one batch are written in the calling thread:
each directory is created once, and each key exactly as ``LocalStore`` writes it, to
``<name>.<32 hex digits>.partial`` and renamed into place, so a writer killed part-way leaves every key
that exists whole (and only the temporary names :data:`.nodes.INTERRUPTED_WRITE` recognizes behind).

Used for writable :class:`zarr.storage.LocalStore` instances (ours included); any other store is
written through its own ``set``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from collections.abc import Callable, Mapping

from zarr.abc.store import Store
from zarr.storage import LocalStore

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


def local_root(store: Store) -> str | None:
    """The directory of ``store`` when it is a writable local directory, else ``None``."""
    if isinstance(store, LocalStore) and not store.read_only:
        return os.fspath(store.root)
    return None


def put_files(root: str, items: Mapping[str, bytes | memoryview]) -> None:
    """Store each ``key: bytes`` of ``items`` below ``root``, each whole (temporary name, then rename)."""
    made: set[str] = set()
    token = secrets.token_hex(12)  # (+ an 8-digit counter: the 32 hex digits zarr's temporary names have)
    for n, (key, raw) in enumerate(items.items()):
        path = os.path.join(root, key)
        parent = os.path.dirname(path)
        if parent not in made:
            os.makedirs(parent, exist_ok=True)
            made.add(parent)
        temporary = f"{path}.{token}{n:08x}.partial"
        fd = os.open(temporary, _FLAGS, 0o666)
        try:
            try:
                view = memoryview(raw)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise


def remove_tree(path: str) -> None:
    """Delete the directory ``path`` and everything below it, as cleanup (errors ignored: what cannot be
    deleted stays). A Ctrl-C meanwhile is raised only once the deletion is finished, so that a working
    copy is never left half-deleted beside the file it was for."""
    interrupted: BaseException | None = None
    while True:
        try:
            shutil.rmtree(path, ignore_errors=True)
            break
        except KeyboardInterrupt as exc:
            interrupted = exc
    if interrupted is not None:
        raise interrupted


def finish_cleanup(action: Callable[[], None]) -> None:
    """Run ``action``, cleanup after a change that is already complete: a Ctrl-C meanwhile is raised once it
    has run again to the end; an ``OSError`` is given one more try, then ignored (what stays is harmless:
    the callers say why)."""
    interrupted: BaseException | None = None
    for attempt in range(2):
        try:
            action()
            break
        except KeyboardInterrupt as exc:
            interrupted = exc
        except OSError:
            if attempt:
                break
    if interrupted is not None:
        raise interrupted
