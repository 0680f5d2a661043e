"""Every store operation started by one synchronous call has ended before the call returns or raises
(``storage/stores/task_groups.py``): a rollback that follows never races the failed write's operations."""

from __future__ import annotations

import asyncio
import signal
import threading
import time

import pytest

from hdmf_zarr3.storage.stores.zarr_adapter import sync


def _work(done: list[str]) -> None:
    time.sleep(0.3)
    done.append("thread")


async def _slow(done: list[str]) -> None:
    await asyncio.to_thread(_work, done)  # (as LocalStore runs each file operation)
    done.append("task")


async def _fail() -> None:
    await asyncio.sleep(0.01)
    raise OSError(28, "No space left on device")


def test_a_failed_gather_returns_once_its_siblings_have_ended():
    done: list[str] = []

    async def both() -> None:
        await asyncio.gather(_slow(done), _slow(done), _fail())

    with pytest.raises(OSError, match="No space"):  # the failure itself, not a cancellation
        sync(both())
    assert done.count("thread") == 2  # the writes in flight ended before the error reached us
    assert "task" not in done  # and what would have followed them was cancelled


def test_ctrl_c_while_waiting_is_raised_once_everything_has_ended():
    done: list[str] = []

    async def many() -> None:
        await asyncio.gather(*(_slow(done) for _ in range(3)))

    main = threading.main_thread().ident
    timer = threading.Timer(0.1, signal.pthread_kill, (main, signal.SIGINT))  # a real Ctrl-C's signal
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            sync(many())
    finally:
        timer.cancel()
    assert done.count("thread") == 3
    assert "task" not in done


def test_a_result_is_freed_as_soon_as_the_caller_drops_it():
    """No reference cycle keeps a call's result (a whole read's array) alive until the garbage collector
    runs: reads of a copy must hold one buffer at a time."""
    import gc
    import weakref

    class Result:
        pass

    async def produce() -> Result:
        return Result()

    gc.disable()
    try:
        result = sync(produce())
        alive = weakref.ref(result)
        del result
        assert alive() is None
    finally:
        gc.enable()


async def _running_loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


@pytest.mark.parametrize("scheduled", [True, False], ids=["after-scheduling", "before-scheduling"])
def test_ctrl_c_while_handing_the_coroutine_to_the_loop(monkeypatch, scheduled):
    """A Ctrl-C that lands while the call hands its coroutine to the loop (before it waits for it): the
    coroutine, had it been handed over, has ended when ``KeyboardInterrupt`` reaches us; had it not, it
    never runs, and the call does not wait for it forever. (Issue #27: the zip append's working directory
    was removed by the rollback while the interrupted call's writes went on in it.)"""
    loop = sync(_running_loop())
    original = loop.call_soon_threadsafe
    fired: list[bool] = []

    def interrupted(callback, *args, **kwargs):
        if fired or threading.current_thread() is not threading.main_thread():
            return original(callback, *args, **kwargs)
        fired.append(True)
        if scheduled:
            original(callback, *args, **kwargs)
        raise KeyboardInterrupt  # (as a SIGINT would, from the write to the loop's wake-up pipe)

    monkeypatch.setattr(loop, "call_soon_threadsafe", interrupted)
    done: list[str] = []
    outcome: list[BaseException] = []

    def call() -> None:
        try:
            sync(_slow(done))
        except BaseException as exc:  # noqa: BLE001 -- judged below
            outcome.append(exc)

    # (run from the main thread, which is what the patched method checks; a hang fails, not blocks)
    watchdog = threading.Timer(5, signal.pthread_kill, (threading.main_thread().ident, signal.SIGINT))
    watchdog.start()
    try:
        call()
    finally:
        watchdog.cancel()
    assert fired and len(outcome) == 1 and isinstance(outcome[0], KeyboardInterrupt)
    seen = list(done)
    time.sleep(0.5)
    assert done == seen, f"work went on after the interrupt was raised: {seen} then {done}"
    assert "task" not in done
    if not scheduled:
        assert done == []


def _interrupted() -> None:
    raise KeyboardInterrupt  # (as a Ctrl-C landing in a thread reading an HDF5 source)


async def _interrupt_in_pools(pools) -> None:
    loop = asyncio.get_running_loop()
    await asyncio.gather(asyncio.to_thread(_interrupted), loop.run_in_executor(pools.sources, _interrupted))


async def _interrupt_wrapped() -> None:
    from hdmf_zarr3 import StoreError

    try:
        await asyncio.to_thread(_interrupted)
    except Exception as exc:  # (code above a worker that names its failures)
        raise StoreError("reading the source failed", path="/x") from exc


@pytest.mark.parametrize("make", ["pools", "wrapped"])
def test_ctrl_c_in_a_worker_thread_is_raised_to_the_caller_and_the_loop_lives_on(make):
    from hdmf_zarr3.storage.stores.pools import WorkPools

    outcome: list[BaseException | str] = []

    def call() -> None:  # (a thread of its own: the loop once died here and the call waited forever)
        with WorkPools() as pools:
            try:
                sync(_interrupt_in_pools(pools) if make == "pools" else _interrupt_wrapped())
                outcome.append("returned")
            except BaseException as exc:  # noqa: BLE001 -- judged below
                outcome.append(exc)

    caller = threading.Thread(target=call, daemon=True)
    caller.start()
    caller.join(30)
    assert outcome, "the call never ended"
    assert type(outcome[0]) is KeyboardInterrupt, outcome
    assert sync(asyncio.sleep(0, "alive")) == "alive"  # zarr's loop still runs
