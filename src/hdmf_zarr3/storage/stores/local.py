"""Many small keys stored into a local directory in the writer's thread, each whole.

A file of many small objects (500 TimeSeries, 1,000 units) stores ~2,000 node documents and
single-chunk arrays. Through zarr's ``LocalStore`` each costs an event-loop hop to a worker thread, a
``mkdir`` of its parents and pathlib's bookkeeping, which on this project's benchmark machine added up to
more than the file system's own work. Here the keys of one batch are written in the calling thread:
each directory is created (and opened) once, and each key exactly as ``LocalStore`` writes it, to
``<name>.<32 hex digits>.partial`` and renamed into place, so a writer killed part-way leaves every key
that exists whole (and only the temporary names :data:`.nodes.INTERRUPTED_WRITE` recognizes behind).
Every key is reached through :class:`..paths.RootDirectory`: below the file's real root, never through a
symlink (a group directory symlinked elsewhere is refused, not written into), only regular files.

A batch of many keys is written by a few threads, the keys of one directory by one of them: creating a
file waits on the file system (its journal, the disk), not on the CPU, and these waits overlap. On the
benchmark machine (2 cores), 3, 4 or 6 threads took the write of benchmark (b) from 3.1–3.4 s to 2.4–2.5 s
by median of alternating rounds (more than 3 gained little). Every thread that began writing has ended
before :func:`put_files` returns or raises (a Ctrl-C included; a thread stopped before its first key writes
nothing), so a rollback never runs beside a key still being written.

Used for writable :class:`zarr.storage.LocalStore` instances (ours included); any other store is
written through its own ``set``.
"""

from __future__ import annotations

import functools
import os
import secrets
import shutil
import threading
import time
from collections.abc import Callable, Mapping

from zarr.abc.store import Store
from zarr.storage import LocalStore

from ..paths import RootDirectory
from .task_groups import until_done


def local_root(store: Store) -> str | None:
    """The directory of ``store`` when it is a writable local directory, else ``None``."""
    if isinstance(store, LocalStore) and not store.read_only:
        return os.fspath(store.root)
    return None


#: Threads that store one batch of keys (see the module's description).
WRITER_THREADS = 4
#: A batch of fewer keys per thread than this is stored in the calling thread alone.
MIN_KEYS_PER_THREAD = 64


def put_files(root: str, items: Mapping[str, bytes | memoryview]) -> None:
    """Store each ``key: bytes`` of ``items`` below ``root``, each whole (temporary name, then rename).

    Keys are stored by up to :data:`WRITER_THREADS` threads; on the first failure the others stop after the
    key they are writing, and the failure is raised once every thread that began has ended (a Ctrl-C
    meanwhile too).
    """
    token = secrets.token_hex(12)  # (+ an 8-digit counter: the 32 hex digits zarr's temporary names have)
    numbered = [(n, key, raw) for n, (key, raw) in enumerate(items.items())]
    threads = min(WRITER_THREADS, len(numbered) // MIN_KEYS_PER_THREAD)
    if threads <= 1:
        _put(root, token, numbered, threading.Event())
        return
    by_directory: dict[str, list[tuple[int, str, bytes | memoryview]]] = {}
    for entry in numbered:
        by_directory.setdefault(os.path.dirname(entry[1]), []).append(entry)
    shares: list[list[tuple[int, str, bytes | memoryview]]] = [[] for _ in range(threads)]
    for entries in by_directory.values():
        min(shares, key=len).extend(entries)
    _in_threads([functools.partial(_put, root, token, share) for share in shares])


class _JobThreads:
    """The threads of one :func:`_in_threads` call: each job in its own thread, counted as begun under a lock."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.failures: list[BaseException] = []
        self.gate = threading.Condition()
        self.begun: list[threading.Thread] = []
        self.running: set[threading.Thread] = set()  # begun, not ended
        self.ended = 0
        self.workers: list[threading.Thread] = []

    def run_here(self, job: Callable[[threading.Event], None]) -> None:
        try:
            job(self.stop)
        except BaseException as exc:  # handed to the calling thread
            self.failures.append(exc)
            self.stop.set()

    def run(self, job: Callable[[threading.Event], None]) -> None:
        me = threading.current_thread()
        try:
            with self.gate:
                if self.stop.is_set():
                    return  # stopped before it began: it writes nothing
                self.begun.append(me)
                self.running.add(me)
            self.run_here(job)
        finally:
            with self.gate:
                self.running.discard(me)
                self.ended += 1
                self.gate.notify_all()

    def halt(self) -> None:
        with self.gate:
            self.stop.set()

    def wait(self) -> None:
        with self.gate:
            self.gate.wait_for(lambda: not self.running and (self.stop.is_set() or self.ended >= len(self.workers)))
            lost = [worker for worker in self.begun if worker not in self.workers]  # (a start() cut short)
        _join_all(self.workers + lost)  # (their keys are written: this only lets the threads exit)

    def start(self, jobs: list[Callable[[threading.Event], None]]) -> BaseException | None:
        """Start a thread per job (a job no thread can be started for runs here); what interrupted it, if anything."""
        try:
            for job in jobs:
                worker = threading.Thread(target=self.run, args=(job,), name="hdmf_zarr3-put-files", daemon=True)
                try:
                    worker.start()
                except RuntimeError:  # no new thread (e.g. a file left open, written at exit): this one does it
                    self.run_here(job)
                    continue
                self.workers.append(worker)
        except BaseException as exc:  # a Ctrl-C, also one inside a start()
            self.halt()
            return exc
        return None


def _in_threads(jobs: list[Callable[[threading.Event], None]]) -> None:
    """Run each job (given a stop event) in its own thread; raise the first failure once all have ended.

    The end is awaited on a condition, not by ``Thread.join``: on Python 3.12 a join that a Ctrl-C cuts
    short can mark a running thread as ended, and a ``start()`` it cuts short loses count of a worker
    that runs. So a worker counts itself as begun, under a lock, before its first key, unless the stop
    event was set (also under that lock); once it is set, the begun workers are all that ever write."""
    threads = _JobThreads()
    interrupted = threads.start(jobs)
    try:  # the keys being written end first, a Ctrl-C meanwhile stops the rest
        until_done(threads.wait, threads.halt)
    except KeyboardInterrupt as exc:
        interrupted = interrupted or exc
    if interrupted is not None:
        raise interrupted
    if threads.failures:
        raise threads.failures[0]


def _join_all(workers: list[threading.Thread]) -> None:
    for worker in workers:
        worker.join()


def _put(root: str, token: str, entries: list[tuple[int, str, bytes | memoryview]], stop: threading.Event) -> None:
    # One RootDirectory per share: each directory is opened once (O_NOFOLLOW) for all the keys below it.
    with RootDirectory(root, create=True) as tree:
        for n, key, raw in entries:
            if stop.is_set():
                return
            tree.write(key, raw, temporary=f"{token}{n:08x}")


def remove_tree(path: str) -> None:
    """Delete the directory ``path`` and everything below it, as cleanup (errors ignored: what cannot be
    deleted stays). A Ctrl-C meanwhile is raised only once the deletion is finished, so that a working
    copy is never left half-deleted beside the file it was for."""
    until_done(lambda: shutil.rmtree(path, ignore_errors=True))


#: Pauses (seconds) after which :func:`remove_tree_settled` looks again for late writes.
LATE_WRITE_PAUSES = (0.05, 0.1, 0.2, 0.4)


def remove_tree_settled(path: str) -> None:
    """:func:`remove_tree`, then again while what a failed writer still had on its way lands (icechunk returns
    a repository's creation at its first failed write while its other writes may still land: on a full disk
    the initial transaction log came after the removal, and was left as a repository nothing could read)."""
    remove_tree(path)
    for pause in LATE_WRITE_PAUSES:
        time.sleep(pause)
        if os.path.lexists(path):
            remove_tree(path)


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
