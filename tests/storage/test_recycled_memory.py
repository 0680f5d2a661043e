"""Recycled memory for lazy reads (issue #40): a buffer is used again only once nothing refers to the array
made from it, whatever the caller made of that array; idle memory stays within its bound and goes at close."""

from __future__ import annotations

import gc
import pickle
import threading

import numpy as np
import pytest

from hdmf_zarr3.storage.stores import RecycledMemory, recycled_memory
from hdmf_zarr3.storage.stores.recycled_memory import IdleBudget

SHAPE = (1024, 2048)  # 4 MiB of int16: at the smallest size recycled
NBYTES = 1024 * 2048 * 2

#: Everything a caller may keep of an array while dropping the array itself.
KEEPERS = {
    "a slice": lambda a: a[10:20],
    "a strided view": lambda a: a[::3, 1::2],
    "a transpose": lambda a: a.T,
    "a reshape": lambda a: a.reshape(-1),
    "a view as another dtype": lambda a: a.view(np.uint8),
    "np.asarray": lambda a: np.asarray(a),
    "a memoryview": lambda a: memoryview(a),
    "a view of a view": lambda a: a[5:][::2][1:],
    "a pickle buffer": lambda a: pickle.PickleBuffer(a),
    "an array interface": lambda a: np.array(a, copy=False),
}


def _filled(memory: RecycledMemory, value: int) -> np.ndarray:
    array = memory.empty(SHAPE, np.int16)
    array[...] = value
    return array


@pytest.mark.parametrize("keep", list(KEEPERS), ids=list(KEEPERS))
def test_memory_comes_back_only_once_nothing_refers_to_it(keep):
    memory = RecycledMemory()
    array = _filled(memory, 7)
    kept = KEEPERS[keep](array)
    snapshot = np.array(np.asarray(kept), copy=True)
    del array
    gc.collect()
    assert memory.idle_bytes == 0, f"the memory came back while {keep} of it was still held"
    other = _filled(memory, -1)  # new memory: what was kept is not written over
    np.testing.assert_array_equal(np.asarray(kept), snapshot)
    del kept
    gc.collect()
    assert memory.idle_bytes == NBYTES
    again = memory.empty(SHAPE, np.int16)  # made from the memory given back
    assert memory.idle_bytes == 0 and again.shape == SHAPE and again.flags.writeable
    del other, again


def test_a_given_back_buffer_is_used_again_and_never_twice_at_once():
    memory = RecycledMemory()
    first = _filled(memory, 1)
    address = first.__array_interface__["data"][0]
    del first
    second = memory.empty(SHAPE, np.int16)
    assert second.__array_interface__["data"][0] == address  # reused ...
    third = memory.empty(SHAPE, np.int16)
    assert not np.shares_memory(second, third)  # ... by one array at a time


def test_a_buffer_serves_a_request_up_to_a_quarter_smaller_and_no_smaller():
    memory, rows = RecycledMemory(), 4 * SHAPE[0]
    memory.empty((rows, SHAPE[1]), np.int16)  # dropped at once: given back
    assert memory.idle_bytes == 4 * NBYTES
    half = memory.empty((rows // 2, SHAPE[1]), np.int16)
    assert memory.idle_bytes == 4 * NBYTES  # half as large: a new buffer, the idle one kept
    smaller = memory.empty((rows * 9 // 10, SHAPE[1]), np.int16)
    assert memory.idle_bytes == 0 and not np.shares_memory(half, smaller)  # a tenth less: the idle one
    smaller[...] = 3
    np.testing.assert_array_equal(smaller, 3)


def test_idle_memory_stays_within_its_bound_and_goes_at_close():
    memory = RecycledMemory(IdleBudget(2 * NBYTES))
    arrays = [memory.empty(SHAPE, np.int16) for _ in range(3)]
    del arrays
    gc.collect()
    assert memory.idle_bytes == 2 * NBYTES  # the third went to the allocator
    held = memory.empty(SHAPE, np.int16)
    memory.close()
    assert memory.idle_bytes == 0
    del held
    gc.collect()
    assert memory.idle_bytes == 0  # given back after the close: freed, not kept
    assert memory.empty(SHAPE, np.int16).flags.owndata  # closed: plain arrays


def test_the_bound_holds_for_every_file_of_the_process_together_and_a_forgotten_one_leaves_it():
    budget = IdleBudget(3 * NBYTES)
    first, second = RecycledMemory(budget), RecycledMemory(budget)
    arrays = [memory.empty(SHAPE, np.int16) for memory in (first, second, first, second)]
    del arrays
    gc.collect()
    assert first.idle_bytes + second.idle_bytes == 3 * NBYTES == budget.used
    first.close()
    assert budget.used == second.idle_bytes
    del second  # never closed: what it kept idle leaves the budget with it
    gc.collect()
    assert budget.used == 0


def test_one_file_keeps_at_most_its_own_bound():
    budget = IdleBudget(10 * NBYTES)
    memory = RecycledMemory(budget, bound=2 * NBYTES)
    arrays = [memory.empty(SHAPE, np.int16) for _ in range(3)]
    del arrays
    gc.collect()
    assert memory.idle_bytes == 2 * NBYTES == budget.used


def test_small_arrays_are_left_to_the_allocator():
    memory = RecycledMemory()
    small = memory.empty((10, recycled_memory.SMALLEST // 20 - 1), np.int16)
    assert small.flags.owndata and small.dtype == np.int16
    del small
    assert memory.idle_bytes == 0


def test_threads_taking_and_dropping_at_once_never_share_a_buffer():
    memory = RecycledMemory(IdleBudget(4 * NBYTES))
    errors: list[str] = []

    def work(mark: int) -> None:
        for _ in range(40):
            array = memory.empty(SHAPE, np.int16)
            array[...] = mark
            if not np.all(array == mark):  # another thread wrote into the same memory
                errors.append(f"thread {mark}")
            del array

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert memory.idle_bytes <= 4 * NBYTES
