"""Groups of concurrent store operations that always end together.

``asyncio.gather`` returns (raises) at the first failure while its other awaitables keep running, and
zarr's synchronous ``sync`` returns to a thread interrupted by Ctrl-C while the coroutine goes on: in
both cases a rollback started next would race the writes still in flight (chunks written under arrays
the rollback has just removed, ``Directory not empty`` from its deletes). :func:`settled` runs a
coroutine on zarr's event loop so that every task it starts, directly or below, and every function
those tasks hand to the loop's thread pool (``asyncio.to_thread``: ``LocalStore``'s file operations)
has ended before the caller sees the result or the error: on a failure (or an interrupt of the waiting
thread) the tasks left are cancelled, then awaited, and the pool functions already running are waited
for (a thread cannot be cancelled).

A Ctrl-C (``KeyboardInterrupt``, or a ``SystemExit``) raised in a pool's thread, for instance by the read of an
HDF5 source it was running, would be re-raised by asyncio out of the event loop, ending zarr's loop thread
for good while the caller waits on it forever. The pools here (:class:`ShieldingExecutor`) carry it as an
:class:`Interrupted` error instead, which the tasks treat as any failure (the group is cancelled and settled);
:func:`settled` then raises the interrupt itself in the waiting thread.

The membership of a task is a context variable, which tasks inherit from the one that creates them;
the loop is given a task factory and a default executor that record members (:func:`install`). Tasks
started outside :func:`settled` (zarr's own synchronous API) are not recorded and behave as before.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import threading
from collections.abc import Callable, Coroutine
from typing import Any

_GROUP: contextvars.ContextVar[Group | None] = contextvars.ContextVar("hdmf_zarr3_task_group", default=None)
_installed: list[asyncio.AbstractEventLoop | None] = [None]
_install_lock = threading.Lock()


class Group:
    """The tasks and pool functions started by one coroutine run with :func:`settled`."""

    def __init__(self) -> None:
        self.tasks: set[asyncio.Task[Any]] = set()
        self.futures: set[concurrent.futures.Future[Any]] = set()
        self.lock = threading.Lock()  # (futures end on the pool's threads: their set changes there)
        self.root: asyncio.Task[Any] | None = None
        self.stopped = False
        self.started = False  # (set on the loop when the coroutine is handed to it)
        self.ended = threading.Event()

    def stop(self, root: bool = True) -> None:
        """Cancel every task of the group that is still running (on the loop's thread); the coroutine's own
        task too unless ``root`` is false (it failed already: its error, not a cancellation, is raised)."""
        self.stopped = True
        for task in [*self.tasks, *([self.root] if root and self.root is not None else [])]:
            task.cancel()

    def forget(self, future: concurrent.futures.Future[Any]) -> None:
        with self.lock:
            self.futures.discard(future)

    async def settle(self) -> None:
        """Wait until no task of the group (but the calling one) runs and no pool function is running."""
        me = asyncio.current_task()
        while True:
            tasks = [t for t in self.tasks if not t.done() and t is not me]
            with self.lock:
                futures = [f for f in self.futures if not f.done()]
            if not tasks and not futures:
                return
            waits = [*tasks, *(asyncio.wrap_future(f) for f in futures)]
            await asyncio.wait(waits)


class Interrupted(Exception):
    """A ``KeyboardInterrupt`` or ``SystemExit`` (``interrupt``) raised in a pool's thread, carried through the
    event loop as an ordinary error (see the module's description); never seen outside :func:`settled`."""

    def __init__(self, interrupt: BaseException):
        super().__init__(f"interrupted in a worker thread: {interrupt!r}")
        self.interrupt = interrupt


def _shielded(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (KeyboardInterrupt, SystemExit) as exc:
            raise Interrupted(exc) from exc

    return run


class ShieldingExecutor(concurrent.futures.ThreadPoolExecutor):
    """A thread pool whose functions' interrupts are raised as :class:`Interrupted` (an ``Exception``)."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        return super().submit(_shielded(fn), *args, **kwargs)


def _interrupt_in(error: BaseException) -> BaseException | None:
    """The interrupt an :class:`Interrupted` carries, if ``error`` is one or was caused by one (a Ctrl-C in a
    worker may have been wrapped by the code above it: the interrupt, not the wrapper, is what happened)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, Interrupted):
            return current.interrupt
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def record(future: concurrent.futures.Future[Any]) -> None:
    """Count ``future``, a function handed to a pool by a group's task (or by a function running in its
    context: ``contextvars.copy_context().run``), among the group's members: the group settles only once it
    has ended. Outside a group, nothing."""
    group = _GROUP.get()
    if group is not None:
        with group.lock:
            group.futures.add(future)
        future.add_done_callback(group.forget)


class _RecordingExecutor(ShieldingExecutor):
    """The loop's default executor: functions submitted from a group's task are recorded in it."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        future = super().submit(fn, *args, **kwargs)
        record(future)
        return future


def _task_factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
    task = asyncio.Task(coro, loop=loop, **kwargs)
    context = kwargs.get("context")
    group = context.get(_GROUP) if context is not None else _GROUP.get()
    if group is not None:
        group.tasks.add(task)
        task.add_done_callback(group.tasks.discard)
    return task


def install(loop: asyncio.AbstractEventLoop) -> None:
    """Give ``loop`` the task factory and default executor that record group members (once per loop)."""
    if _installed[0] is loop:
        return
    with _install_lock:
        if _installed[0] is loop:
            return
        import zarr

        if loop.get_task_factory() is None:
            loop.set_task_factory(_task_factory)
        # (zarr sets an executor of its own only when threading.max_workers is configured, and then only on
        # its first use of the loop, before ours: this one, sized the same, takes its place)
        workers = zarr.config.get("threading.max_workers", None)
        executor = _RecordingExecutor(max_workers=workers, thread_name_prefix="zarr_pool")
        loop.set_default_executor(executor)
        _installed[0] = loop


async def _run[T](coroutine: Coroutine[Any, Any, T], group: Group) -> T:
    group.root = asyncio.current_task()
    _GROUP.set(group)  # (this task's own context: the tasks it creates inherit it)
    try:
        if group.stopped:  # interrupted before it began
            coroutine.close()
            raise asyncio.CancelledError
        return await coroutine
    except BaseException:
        group.stop(root=False)
        raise
    finally:
        try:
            while True:
                try:
                    await group.settle()
                    break
                except asyncio.CancelledError:
                    continue  # (a stop from the waiting thread arrived once the coroutine had ended: settle on)
        finally:
            # the task's context holds the group: without this the group, the task and the task's result (a
            # whole read's array) would form a cycle that only the garbage collector frees
            group.root = None
            group.ended.set()


def settled[T](loop: asyncio.AbstractEventLoop, group: Group, coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` on ``loop`` (another thread's) and return its result or raise its error, once
    everything it started has ended (see the module's description)."""
    result: concurrent.futures.Future[T] = concurrent.futures.Future()
    try:
        # (a Ctrl-C may land inside this hand-over, before or after the coroutine is queued: the
        # except below learns which from the loop itself, as its callbacks run in the order queued)
        loop.call_soon_threadsafe(_start, group, coroutine, result)
        return result.result()
    except BaseException as error:
        if not group.ended.is_set():  # this thread was interrupted while the coroutine runs (or starts)
            loop.call_soon_threadsafe(_stop_or_end, group, coroutine)
            _wait(group.ended)
        interrupt = _interrupt_in(error)
        if interrupt is not None:  # (a Ctrl-C in a worker thread: raised here, once everything has ended)
            raise interrupt from None
        raise


def _start[T](group: Group, coroutine: Coroutine[Any, Any, T], result: concurrent.futures.Future[T]) -> None:
    """On the loop: run ``coroutine`` as a task of ``group`` whose outcome goes to ``result``."""
    group.started = True
    task = asyncio.ensure_future(_run(coroutine, group))

    def report(done: asyncio.Task[T]) -> None:
        if done.cancelled():
            result.cancel()
        elif (error := done.exception()) is not None:
            result.set_exception(error)
        else:
            result.set_result(done.result())

    task.add_done_callback(report)


def _stop_or_end(group: Group, coroutine: Coroutine[Any, Any, Any]) -> None:
    """On the loop, after an interrupted :func:`settled`: stop the group if its coroutine was queued
    (:func:`_start` ran before this, callbacks run in order), else drop the coroutine, which never ran."""
    if group.started:
        group.stop()
    else:
        coroutine.close()
        group.ended.set()


def _wait(event: threading.Event) -> None:
    """Wait for ``event``; a second Ctrl-C meanwhile does not cut the wait short (the writes in flight
    must end before the rollback that follows)."""
    until_done(event.wait)


def until_done(action: Callable[[], object], on_interrupt: Callable[[], object] = lambda: None) -> None:
    """Run ``action`` to its end, again after each Ctrl-C that cuts it short (it must be safe to repeat: a
    wait, a cleanup that tolerates what is already gone), calling ``on_interrupt`` at each; then raise the
    last Ctrl-C, if any."""
    interrupted: BaseException | None = None
    while True:
        try:
            action()
            break
        except KeyboardInterrupt as exc:
            interrupted = exc
            on_interrupt()
    if interrupted is not None:
        raise interrupted
