"""Fault injection at the k-th store operation, as SQLite's I/O-error tests do it.

:class:`Faults` counts every operation the backend makes of a local directory or zip (zarr's
``LocalStore`` reads, writes, deletes and listings, in the writer's thread and on zarr's I/O threads; the
writer-thread key writes of ``storage/stores/local.py`` through their ``os.replace``; hard links, renames,
removals, truncations and ``fsync`` as the storage code makes them; the members a zip is packed from) and
makes the ``at``-th one fail with one of :data:`KINDS`:

``interrupt``
    Ctrl-C: a ``KeyboardInterrupt`` in the main thread. On the main thread it is raised by the operation
    itself; on another thread (zarr's event loop, its I/O threads) the operation goes on and SIGINT is
    sent to the main thread with ``signal.pthread_kill``, which, as a real Ctrl-C, also interrupts the
    main thread's wait for the event loop (``_thread.interrupt_main`` only marks the signal, and the
    main thread would notice it only after the wait ended).
``enospc`` / ``eio``
    ``OSError(ENOSPC)`` (a full disk) or ``OSError(EIO)`` raised by the operation, on whichever thread.
``erofs``
    The file system is remounted read-only at the ``at``-th operation: from there on every operation that
    changes it (a store write or delete, a rename, link, removal, truncation, ``fsync``, a file opened for
    writing with ``os.open`` or ``open``, a directory made) raises ``OSError(EROFS)``, the rollback's too;
    reads go on. Not in :data:`KINDS`: the sweeps of ``tests/storage/test_faults.py`` judge it apart (the
    undo cannot run).

Only the ``at``-th operation fails (what follows, the rollback included, runs normally), but for ``erofs``;
with ``where``, only the operations whose description (the operation and its first argument) holds that text
are counted. The operations inside a ``shutil.rmtree(..., ignore_errors=True)`` (cleanup that tolerates
failure) fail only with a Ctrl-C (and, read-only, each removal, which the cleanup ignores).
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import errno
import functools
import io
import os
import shutil
import signal
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

from zarr.storage import LocalStore

KINDS = ("interrupt", "enospc", "eio")


class Faults:
    """The counter shared by every patched operation (see the module's description)."""

    def __init__(self) -> None:
        self.at = 0  # 0: count only
        self.kind = "interrupt"
        self.count = 0
        self.fired: str | None = None  # the operation that failed
        self.names: list[str] | None = None  # every operation counted, in order (when armed to record them)
        self._lock = threading.Lock()
        self.active = False
        self.where: str | None = None

    @contextlib.contextmanager
    def armed(
        self, at: int = 0, kind: str = "interrupt", record: bool = False, where: str | None = None
    ) -> Iterator[Faults]:
        """Count (and fail the ``at``-th operation, ``at > 0``) while the block runs; ``record``: list them too;
        with ``where``, only the operations whose description holds it."""
        self.at, self.kind, self.count, self.fired, self.active = at, kind, 0, None, True
        self.names = [] if record else None
        self.where = where
        try:
            yield self
        finally:
            self.active = False

    def tick(self, what: str) -> None:
        if not self.active or (self.where is not None and self.where not in what):
            return
        with self._lock:
            self.count += 1
            hit = self.count == self.at
            if self.names is not None:
                self.names.append(what)
            read_only = self.kind == "erofs" and 0 < self.at <= self.count
        if read_only:
            self.refuse_change(what)
        if not hit or self.kind == "erofs":  # (read-only: reads go on)
            return
        self.fired = what
        if self.kind == "interrupt":
            if threading.current_thread() is threading.main_thread():
                raise KeyboardInterrupt(f"injected at operation {self.at}: {what}")
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
            return
        code = errno.ENOSPC if self.kind == "enospc" else errno.EIO
        raise OSError(code, os.strerror(code), what)

    def refuse_change(self, what: str) -> None:
        """Under ``erofs`` once remounted: ``what``, if it changes the file system, fails as it would there."""
        if not (self.active and self.kind == "erofs" and 0 < self.at <= self.count) or what.startswith(_READS):
            return
        self.fired = self.fired or what
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), what)


#: The operations that only read (the others change the file system: refused once it is read-only).
_READS = tuple(f"LocalStore.{name}" for name in ("get", "exists", "get_partial_values", "getsize", "list", "get_sync"))

FAULTS = Faults()


def _open_for_writing(original):
    """``os.open``: not counted (reads open files too); with a flag that writes, refused once read-only."""

    @functools.wraps(original)
    def function(path, flags, *args, **kwargs):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND):
            FAULTS.refuse_change(f"os.open {path}")
        return original(path, flags, *args, **kwargs)

    return function


def _made_directory(original):
    """``os.mkdir`` (``makedirs``, ``mkdtemp``, pathlib's ``mkdir``): not counted; refused once read-only."""

    @functools.wraps(original)
    def function(path, *args, **kwargs):
        FAULTS.refuse_change(f"os.mkdir {path}")
        return original(path, *args, **kwargs)

    return function


def _file_for_writing(original):
    """``open`` (and ``io.open``, which pathlib calls): not counted; to write, refused once read-only."""

    @functools.wraps(original)
    def function(file, mode="r", *args, **kwargs):
        if any(c in mode for c in "wax+"):
            FAULTS.refuse_change(f"open {file}")
        return original(file, mode, *args, **kwargs)

    return function


def _async(name: str, original, owner: str = "LocalStore"):
    @functools.wraps(original)
    async def method(self, *args, **kwargs):
        FAULTS.tick(f"{owner}.{name} {args[0] if args else ''}")
        return await original(self, *args, **kwargs)

    return method


def _async_iter(name: str, original):
    @functools.wraps(original)
    async def method(self, *args, **kwargs):
        FAULTS.tick(f"LocalStore.{name} {args[0] if args else ''}")
        async for item in original(self, *args, **kwargs):
            yield item

    return method


_tolerant = threading.local()  # inside a shutil.rmtree(..., ignore_errors=True)


def _plain(name: str, original):
    @functools.wraps(original)
    def function(*args, **kwargs):
        tolerant = name == "shutil.rmtree" and kwargs.get("ignore_errors")
        # cleanup that tolerates failure: only a Ctrl-C can stop it (and a read-only file system each removal)
        if not (tolerant or getattr(_tolerant, "depth", 0)) or FAULTS.kind == "interrupt":
            FAULTS.tick(f"{name} {args[0] if args else ''}")
        elif not tolerant:
            FAULTS.refuse_change(f"{name} {args[0] if args else ''}")
        _tolerant.depth = getattr(_tolerant, "depth", 0) + bool(tolerant)
        try:
            return original(*args, **kwargs)
        finally:
            _tolerant.depth -= bool(tolerant)

    return function


_ASYNC = ("get", "_set", "delete", "delete_dir", "exists", "get_partial_values", "getsize")
_ASYNC_ITER = ("list", "list_prefix", "list_dir")
_SYNC = ("get_sync", "set_sync", "delete_sync")
_FUNCTIONS = [
    (os, "replace"),
    (os, "rename"),
    (os, "link"),
    (os, "remove"),
    (os, "unlink"),
    (os, "rmdir"),
    (os, "truncate"),
    (os, "fsync"),
    (shutil, "rmtree"),
    (zipfile.ZipFile, "write"),
]


@contextlib.contextmanager
def installed() -> Iterator[Faults]:
    """Patch the operations (counting only while :meth:`Faults.armed`); restore them afterwards."""
    saved = []
    for name in _ASYNC:
        saved.append((LocalStore, name, LocalStore.__dict__[name]))
        setattr(LocalStore, name, _async(name, LocalStore.__dict__[name]))
    for name in _ASYNC_ITER:
        saved.append((LocalStore, name, LocalStore.__dict__[name]))
        setattr(LocalStore, name, _async_iter(name, LocalStore.__dict__[name]))
    for name in _SYNC:
        saved.append((LocalStore, name, LocalStore.__dict__[name]))
        setattr(LocalStore, name, _plain(f"LocalStore.{name}", LocalStore.__dict__[name]))
    for owner, name in _FUNCTIONS:
        original = getattr(owner, name)
        saved.append((owner, name, original))
        setattr(owner, name, _plain(f"{getattr(owner, '__name__', owner)}.{name}", original))
    saved.append((os, "open", os.open))
    os.open = _open_for_writing(os.open)
    saved.append((os, "mkdir", os.mkdir))
    os.mkdir = _made_directory(os.mkdir)
    for owner in (builtins, io):
        saved.append((owner, "open", owner.open))
        owner.open = _file_for_writing(owner.open)
    saved.extend(_icechunk_patches())
    try:
        yield FAULTS
    finally:
        for owner, name, original in reversed(saved):
            setattr(owner, name, original)


def _icechunk_patches() -> list[tuple[object, str, object]]:
    """Count the operations of icechunk's store and session too (a virtual conversion's writes: icechunk's own
    I/O is done in Rust, below these calls), when icechunk is installed; returns what to restore."""
    try:
        from icechunk import Repository, Session
        from icechunk.store import IcechunkStore
    except ImportError:
        return []
    saved: list[tuple[object, str, object]] = []
    for name in ("get", "set", "delete", "exists", "get_partial_values", "set_if_not_exists", "delete_dir"):
        saved.append((IcechunkStore, name, IcechunkStore.__dict__[name]))
        setattr(IcechunkStore, name, _async(name, IcechunkStore.__dict__[name], "IcechunkStore"))
    for owner, name in [(IcechunkStore, n) for n in ("list", "list_prefix", "list_dir", "set_virtual_refs")] + [
        (Session, "commit"),
        (Repository, "set_metadata"),
    ]:
        original = owner.__dict__[name]
        saved.append((owner, name, original))
        setattr(owner, name, _plain(f"{owner.__name__}.{name}", original))
    return saved


def pending_tasks() -> list[str]:
    """The tasks still on zarr's event loop (but the one asking): a write that returned or raised, also one
    a Ctrl-C cut short, must have ended every task it started (none left running, none destroyed pending)."""
    from zarr.core.sync import _get_loop

    async def others() -> list[str]:
        me = asyncio.current_task()
        return [repr(task.get_coro()) for task in asyncio.all_tasks() if task is not me and not task.done()]

    return asyncio.run_coroutine_threadsafe(others(), _get_loop()).result(timeout=60)


def tree(path: Path) -> dict[str, bytes]:
    """Every file below ``path`` (or the file itself), byte for byte, temporary files included.

    (``os.walk`` and plain strings: ``Path.rglob`` and ``relative_to`` were a third of a fault sweep's run.)"""
    if path.is_file():
        return {"": path.read_bytes()}
    top = os.fspath(path)
    found: dict[str, bytes] = {}
    for folder, _, names in os.walk(top):  # (as rglob in Python 3.12: into no linked directory)
        prefix = "" if folder == top else os.path.relpath(folder, top) + "/"
        for name in names:
            full = os.path.join(folder, name)
            if os.path.isfile(full):
                with open(full, "rb") as file:
                    found[prefix + name] = file.read()
    return dict(sorted(found.items()))


def beside(path: Path) -> list[str]:
    """What lies beside ``path`` in its directory, but the file itself (working copies, records, locks)."""
    return sorted(p.name for p in path.parent.iterdir() if p.name != path.name)
