"""The write lock: at most one writer per file.

A file opened for writing (modes ``r+``, ``a``, ``w``, ``w-``, ``x``) is locked from ``open`` to
``close``. The lock is a small JSON object that is created only if it does not exist yet, with the
store's conditional write (zarr's ``Store.set_if_not_exists``): an exclusive hard link on local disks,
``If-None-Match: *`` on object stores. A second writer finds it and gets :class:`FileLockedError`
naming the holder; readers never look at it.

Where the lock lives: beside a file opened by path or URL (``session.nwb.zarr.lock`` next to
``session.nwb.zarr`` or ``session.nwb.zarr.zip``), so it never becomes part of the file (zarr lists
any stray key in a group as a foreign object). In a Store the caller passes, whose surroundings we
do not know, it is the key ``hdmf_zarr3.lock`` inside the store. icechunk stores are not locked:
their sessions detect conflicting writers on commit.

A writer never closed releases its lock when its io is garbage collected or the interpreter exits
(:func:`guard`); releasing needs no event loop (plain ``os`` calls for a lock file, obstore's
synchronous API on object stores), because zarr's has stopped by then. A writer that crashes leaves its
lock behind. It is never broken silently (the holder may be alive on another machine); :func:`break_lock`
removes it, and the error says so.
"""

from __future__ import annotations

import atexit
import contextlib
import datetime
import gc
import json
import os
import re
import socket
import time
import uuid
import warnings
import weakref
from collections.abc import Callable
from typing import Any

from zarr.abc.store import RangeByteRequest
from zarr.buffer import default_buffer_prototype
from zarr.storage import LocalStore, ObjectStore

from ...errors import CorruptStoreError, FileLockedError, StoreError
from ...format.documents import load_json
from ..stores import before_threads_stop, sync, until_done
from .lock_places import (
    IN_STORE_KEY,
    SUFFIX,
    LockPlace,
    NotALockFile,
    create_local,
    delete_local,
    lock_place,
    read_local,
    transactional,
)

__all__ = ["IN_STORE_KEY", "SUFFIX", "LockPlace", "WriteLock", "lock_place", "transactional"]


def _holder(writer: str) -> dict[str, Any]:
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "started": now,
        "writer": writer,
        "token": uuid.uuid4().hex,
    }


#: A lock is five short fields (~250 bytes); one larger, or holding more values, is no lock of ours and is
#: not read further (only its first bytes are fetched): a lock file of gigabytes, or of a million empty
#: lists, costs no memory or time.
MAX_LOCK_BYTES = 4096
MAX_LOCK_VALUES = 64


def read_holder(place: LockPlace) -> dict[str, Any] | None:
    """What the lock says (``None``: no lock). A lock that is not a JSON object (or is larger than any
    lock), or not a regular file, is still a lock: ``{"corrupt": why}``."""
    try:
        raw = _get(place)
    except NotALockFile as exc:
        return {"corrupt": str(exc)}
    if raw is None:
        return None
    if len(raw) > MAX_LOCK_BYTES:
        return {"corrupt": f"larger than any lock ({MAX_LOCK_BYTES} bytes): {raw[:20]!r}..."}
    try:
        found = load_json(raw, "the lock", place.description, MAX_LOCK_BYTES, MAX_LOCK_VALUES)
    except CorruptStoreError:  # not UTF-8, not JSON, truncated, nested too deeply, too many values
        found = None
    if isinstance(found, dict):
        return found
    shown = f"{raw[:20]!r}{'...' if len(raw) > 20 else ''}"
    return {"corrupt": f"not a JSON object: {shown}" if raw else "an empty file"}


# Reading and removing a lock without zarr's event loop: release() runs from finalizers and at
# interpreter exit, when zarr's loop (and the threads LocalStore hands its file I/O to) have stopped.
def _local_path(place: LockPlace) -> str | None:
    return os.path.join(place.store.root, place.key) if isinstance(place.store, LocalStore) else None


def _object_store(place: LockPlace) -> Any:
    """The obstore store under a zarr ``ObjectStore`` (``None`` for other stores)."""
    return place.store.store if isinstance(place.store, ObjectStore) else None


def _get(place: LockPlace) -> bytes | None:
    """The lock's bytes, at most ``MAX_LOCK_BYTES + 1`` of them (the start of anything larger)."""
    size = MAX_LOCK_BYTES + 1
    path = _local_path(place)
    if path is not None:
        return read_local(path, size)
    backend = _object_store(place)
    if backend is not None:
        import obstore

        try:
            found = obstore.get(backend, place.key)  # (the body is streamed: only what is read arrives)
            if found.meta["size"] <= MAX_LOCK_BYTES:
                return bytes(found.bytes())
            return bytes(obstore.get_range(backend, place.key, start=0, length=size))
        except FileNotFoundError:  # obstore's NotFoundError
            return None
    buf = sync(place.store.get(place.key, prototype=default_buffer_prototype(), byte_range=RangeByteRequest(0, size)))
    return None if buf is None else buf.to_bytes()


def delete_lock(place: LockPlace) -> None:
    path = _local_path(place)
    if path is not None:
        delete_local(path, place.description)
        return
    backend = _object_store(place)
    if backend is not None:
        import obstore

        obstore.delete(backend, place.key)
        return
    sync(place.store.delete(place.key))


def temporaries(place: LockPlace) -> list[str]:
    """The temporary files zarr's ``LocalStore`` writes a lock through (``<name>.<32 hex>.partial``) beside it."""
    path = _local_path(place)
    if path is None:
        return []
    stem, parent = os.path.splitext(os.path.basename(path))[0], os.path.dirname(path)
    pattern = re.compile(re.escape(stem) + r"\.[0-9a-f]{32}\.partial")
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return []
    return [e.path for e in entries if pattern.fullmatch(e.name) and e.is_file(follow_symlinks=False)]


#: A lock's temporary this many seconds old is stale: a writer taking the lock keeps its own for microseconds
#: (written, linked, removed), so one this old was left by a writer cut short (killed, or a file system that
#: turned read-only between its creation and its removal).
STALE_TEMPORARY_SECONDS = 60.0


def remove_temporaries(place: LockPlace, older_than: float = 0.0) -> None:
    """Remove the lock's :func:`temporaries` (those at least ``older_than`` seconds old), left when the lock's
    creation was interrupted between its link and its removal (or its writer was killed there)."""
    now = time.time()
    for path in temporaries(place):
        with contextlib.suppress(OSError):
            if now - os.lstat(path).st_mtime >= older_than:
                os.remove(path)


def _release(place: LockPlace, token: str) -> None:
    """Remove the lock if it still holds ``token`` (someone may have broken it meanwhile). Never raises:
    it runs from finalizers, where a store that is gone (a temporary directory removed) is no error. A
    Ctrl-C meanwhile is raised once the lock is released (a second attempt), never instead of it."""
    interrupted: BaseException | None = None
    for _ in range(2):
        try:
            found = read_holder(place)
            if found is not None and found.get("token") == token:
                delete_lock(place)
            break
        except Exception:
            break
        except KeyboardInterrupt as exc:
            interrupted = exc
    if interrupted is not None:
        raise interrupted


def _creation_failed(exc: Exception, place: LockPlace) -> StoreError:
    """Why the lock could not be taken, as a :class:`StoreError` naming the lock and carrying the ``errno``
    of the failure (``ENOSPC``: a full disk), as every ``OSError`` on these paths does."""
    error = StoreError(f"cannot create the write lock: {exc}", place.description)
    error.errno = getattr(exc, "errno", None)  # (strerror left unset: str() would drop the lock's path)
    return error


class WriteLock:
    """A lock held by this process (release it with :meth:`release`)."""

    def __init__(self, place: LockPlace, holder: dict[str, Any]):
        self.place = place
        self.holder = holder
        # Released once: by release(), when this object is garbage collected, or at interpreter exit.
        self._finalizer = weakref.finalize(self, _release, place, holder["token"])

    @classmethod
    def acquire(cls, place: LockPlace, location: str, writer: str, _retry: bool = True) -> WriteLock:
        """Take the lock, or raise :class:`FileLockedError` naming who holds it.

        A holder in this very process may be a writer nothing refers to any more, kept only by a
        reference cycle: garbage is collected once (its finalizer releases the lock) before refusing.
        """
        holder = _holder(writer)
        body = default_buffer_prototype().buffer.from_bytes(json.dumps(holder).encode("utf-8"))
        local = _local_path(place)
        try:
            if local is not None:
                create_local(local, body.to_bytes())
            else:  # (a request cut short by Ctrl-C may land all the same: made again to its end, it finds it)
                until_done(lambda: sync(place.store.set_if_not_exists(place.key, body)))
            found = read_holder(place)
        except BaseException as exc:  # e.g. a directory we may not write in, a full disk, Ctrl-C
            _release(place, holder["token"])  # (it may have been made before the failure)
            remove_temporaries(place)
            if not isinstance(exc, Exception):
                raise
            raise _creation_failed(exc, place) from exc
        if found is None or found.get("token") != holder["token"]:
            if _retry and found is not None and found.get("pid") == os.getpid() and found.get("host") == holder["host"]:
                gc.collect()
                return cls.acquire(place, location, writer, _retry=False)
            raise FileLockedError(_locked_message(found or {}, location, place.description), location)
        return cls(place, holder)

    @property
    def held(self) -> bool:
        """Whether this lock has not been released yet."""
        return self._finalizer.alive

    def release(self) -> None:
        """Remove the lock if it is still ours; only the first call does anything. Needs no event loop."""
        self._finalizer()

    def ours(self) -> bool:
        """Whether the lock is held and still the one this writer took (nobody broke it). Needs no event
        loop."""
        try:
            return self.held and (read_holder(self.place) or {}).get("token") == self.holder["token"]
        except Exception:
            return False


# --- writers never closed ---------------------------------------------------------------------------
_guarded: weakref.WeakKeyDictionary[Any, weakref.finalize] = weakref.WeakKeyDictionary()
_before_exit: weakref.WeakKeyDictionary[Any, weakref.WeakMethod[Callable[[], None]]] = weakref.WeakKeyDictionary()
_exit_hook: list[bool] = []


def guard(owner: object, abandon: Callable[[], None], before_exit: Callable[[], None] | None = None) -> None:
    """Call ``abandon`` (it must not refer to ``owner``) if ``owner``, an io open for writing, is garbage
    collected, or still open when the interpreter exits, unless :func:`unguard` is called first.

    At exit it runs before HDMF closes the ios left open and before zarr stops its event loop (the hook
    is registered after both, and atexit runs hooks last-in first-out). ``before_exit``, a method of
    ``owner`` (held weakly), is called at exit only, earlier: when the main thread ends, while the owner is
    still whole and zarr's event loop and thread pools still run.
    """
    if not _exit_hook:
        atexit.register(_abandon_all)
        # zarr's stores run on thread pools that refuse work once the main thread has ended, before atexit
        # hooks run: what must still be stored is stored from CPython's hook before that (its only one)
        before_threads_stop(_before_exit_all)
        _exit_hook.append(True)
    _guarded[owner] = weakref.finalize(owner, abandon)
    if before_exit is not None:
        _before_exit[owner] = weakref.WeakMethod(before_exit)


def unguard(owner: object) -> None:
    """``owner`` was closed: nothing to do when it goes."""
    _before_exit.pop(owner, None)
    finalizer = _guarded.pop(owner, None)
    if finalizer is not None:
        finalizer.detach()


def _before_exit_all() -> None:
    for weak in list(_before_exit.values()):
        before_exit = weak()
        try:
            if before_exit is not None:
                before_exit()
        except Exception as exc:  # its lock is released all the same (atexit, below)
            warnings.warn(f"hdmf_zarr3: a file left open at exit: {exc}", RuntimeWarning, stacklevel=1)
    _before_exit.clear()


def _abandon_all() -> None:
    for finalizer in list(_guarded.values()):
        try:
            finalizer()
        except Exception as exc:  # one failure must not keep the other locks
            warnings.warn(
                f"hdmf_zarr3: could not clean up a file left open at exit: {exc}", RuntimeWarning, stacklevel=1
            )


def _locked_message(found: dict[str, Any], location: str, lock: str) -> str:
    advice = (
        f"If no writer is using it, break the lock with hdmf_zarr3.break_lock({location!r}) and check the "
        "file (it may be incomplete)."
    )
    if "corrupt" in found:
        return f"the file's write lock {lock} is unreadable ({found['corrupt']}). {advice}"
    who = f"process {found.get('pid', '?')} on host {found.get('host', '?')}"
    since = f" since {found['started']}" if isinstance(found.get("started"), str) else ""
    stale = ""
    if found.get("host") == socket.gethostname() and isinstance(found.get("pid"), int) and not _alive(found["pid"]):
        stale = " That process is no longer running: the lock is stale, left by a writer that crashed."
    return f"the file is open for writing by {who}{since}.{stale} {advice}"


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True
