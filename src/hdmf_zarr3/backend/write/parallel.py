"""Write ``GenericDataChunkIterator`` datasets in worker processes: hdmf-zarr's write keywords
``number_of_jobs``, ``max_threads_per_process`` and ``multiprocessing_context``.

With ``number_of_jobs > 1``, a dataset whose data is a :class:`hdmf.data_utils.GenericDataChunkIterator`
(random access through ``_get_data(selection)``, a known ``maxshape``) is written by a pool of worker
processes, provided that

- the store is a local directory that hdmf_zarr3 opened itself (a path to a directory, or a ``.zip``,
  written through its working directory): the workers reopen it there. Another process cannot reopen a
  ``Store`` object passed in (a ``MemoryStore``, an icechunk session, ...) nor, here, an object store
  reached by URL: those datasets are written serially in this process, with one
  :class:`~hdmf_zarr3.ParallelWriteWarning` naming them and why;
- the iterator can be pickled (Python's multiprocessing hands it to the workers that way). One that
  cannot is written serially in this process, as with ``number_of_jobs=1`` (hdmf-zarr does the same).

Everything else (other iterators, arrays, lists) is written as always. This process chooses the layout
exactly as a serial write does (:func:`.streaming.plan_stream`), stores the array document before any
worker writes, and the final document once all have finished: the file is the same as a serial write's.
A task is a region of whole write units (shards, or chunks when unsharded): the iterator's buffer shape
rounded up to whole units (:func:`plan_tasks`), so no two tasks ever write the same storage object. A
worker reads its region with ``_get_data`` and stores it unit by unit as the serial writer does.

Pickle is used only by multiprocessing, to hand the iterators and task regions from this process to the
worker processes it starts; nothing read from a file or store is unpickled (``docs/security.md``).
"""

from __future__ import annotations

import itertools
import math
import multiprocessing
import multiprocessing.util
import pickle
import sys
import warnings
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

import numpy as np
from hdmf.data_utils import GenericDataChunkIterator
from zarr.storage import LocalStore

from ...errors import ParallelWriteError, ParallelWriteWarning, UnsupportedDataError
from ...format.vocabulary import dtypes
from ...integrations import iterator_block
from ...storage.codecs import direct_write as direct
from ...storage.handles import StoreHandle
from ...storage.safety import GuardedLocalStore
from ...storage.stores import WorkPools, locations, nodes, sync
from ...storage.zip import ZipOverlayStore
from .streaming import StreamPlan

Region = tuple[slice, ...]

#: hdmf-zarr's parallel-write keywords and their defaults (a serial write).
DEFAULTS = {"number_of_jobs": 1, "max_threads_per_process": None, "multiprocessing_context": None}


@dataclass(frozen=True)
class ParallelOptions:
    """The parallel-write keywords of one write (see the module docstring)."""

    number_of_jobs: int = 1
    max_threads_per_process: int | None = None
    multiprocessing_context: str | None = None

    @classmethod
    def take(cls, kwargs: dict[str, Any]) -> ParallelOptions:
        """Remove the keywords from ``kwargs`` and check them.

        Raises
        ------
        TypeError, ValueError
            For a value of the wrong type, or out of range, naming the keyword.
        """
        jobs, threads, context = (kwargs.pop(name, default) for name, default in DEFAULTS.items())
        _check_positive("number_of_jobs", jobs)
        if threads is not None:
            _check_positive("max_threads_per_process", threads)
        if context is not None:
            methods = multiprocessing.get_all_start_methods()
            if not isinstance(context, str):
                raise TypeError(f"multiprocessing_context must be None or one of {methods}, got {context!r}")
            if context not in methods:
                raise ValueError(f"multiprocessing_context must be None or one of {methods}, got {context!r}")
        return cls(int(jobs), None if threads is None else int(threads), context)


def _check_positive(name: str, value: Any) -> None:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be a positive int, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")


def plan_tasks(shape: Sequence[int], unit: Sequence[int], buffer: Sequence[int] | None) -> list[Region]:
    """The regions of the tasks writing an array of ``shape``: they tile it, each cell exactly once.

    Each region is ``buffer`` rounded up to whole write units of ``unit`` (clipped at the array's edge),
    so every storage object lies in exactly one task. ``buffer`` of another rank, or ``None``: one unit.
    """
    if buffer is None or len(buffer) != len(shape):
        buffer = unit
    step = [max(1, math.ceil(int(b) / int(u))) * int(u) for b, u in zip(buffer, unit)]
    if any(int(n) == 0 for n in shape):
        return []
    starts = itertools.product(*[range(0, int(n), s) for n, s in zip(shape, step)])
    return [tuple(slice(a, min(a + s, int(n))) for a, s, n in zip(start, step, shape)) for start in starts]


def worker_root(handle: StoreHandle) -> tuple[str | None, str]:
    """The directory worker processes reopen the store at, or ``None`` and why they cannot."""
    store = handle.store
    if not handle.owned:
        return None, f"the store was passed in as a {type(store).__name__} object, which another process cannot reopen"
    if handle.location is not None and locations.is_remote(handle.location):
        return None, "worker processes do not reopen object stores reached by URL"
    if isinstance(store, LocalStore) and not store.read_only:
        return str(store.root), ""
    if isinstance(store, ZipOverlayStore):  # a zip being changed: what is written goes to its working directory
        return store.work, ""
    return None, f"another process cannot reopen a {type(store).__name__}"


@dataclass
class _Job:
    iterator: GenericDataChunkIterator
    plan: StreamPlan
    document: dict[str, Any]  # stored before the workers start
    tasks: list[Region]


def write_streams(
    handle: StoreHandle,
    streams: list[tuple[str, Any]],
    options: ParallelOptions,
    progress: bool = False,
) -> dict[str, dict[str, Any]]:
    """Write the streams of a write plan that go to worker processes; the final array documents of those
    written, by path (not yet stored). The others are left to the serial writer.

    ``streams`` holds ``(path, (iterator, StreamPlan))`` as
    :class:`.write_plan.WritePlan` does. ``progress``: show the bar even if no iterator asks for one.
    """
    if options.number_of_jobs < 2:
        return {}
    candidates = [(path, spec) for path, spec in streams if isinstance(spec[0], GenericDataChunkIterator)]
    if not candidates:
        return {}
    root, why = worker_root(handle)
    if root is None:
        paths = ", ".join(path for path, _ in candidates)
        warnings.warn(
            ParallelWriteWarning(
                f"number_of_jobs={options.number_of_jobs}: written serially in this process, as {why}: {paths}"
            ),
            stacklevel=2,
        )
        return {}
    jobs: dict[str, _Job] = {}
    for path, (iterator, plan) in candidates:
        if not _picklable(iterator):
            continue  # iterated here, as in a serial write
        if None in plan.bounds or len(plan.bounds) != len(plan.chunks):
            continue
        shape = plan.final_shape([int(b) for b in plan.bounds if b is not None])  # (none is None: above)
        tasks = plan_tasks(shape, plan.chunks, getattr(iterator, "buffer_shape", None))
        jobs[path] = _Job(iterator, plan, plan.document(shape), tasks)
    if not jobs:
        return {}
    # node documents before their chunks, as in a serial write
    nodes.put_documents(handle.store, {path: job.document for path, job in jobs.items()})
    show = progress or any(getattr(job.iterator, "display_progress", False) for job in jobs.values())
    _run(root, jobs, options, show)
    return {path: job.document for path, job in jobs.items()}


class _Discard:
    def write(self, data: bytes) -> int:
        return len(data)


def _picklable(iterator: Any) -> bool:
    """Whether multiprocessing can hand ``iterator`` to a worker (pickled into nothing, kept nowhere)."""
    try:
        pickle.Pickler(_Discard(), protocol=pickle.HIGHEST_PROTOCOL).dump(iterator)
    except Exception:  # GenericDataChunkIterator without _to_dict, open files, locks, lambdas...
        return False
    return True


def _run(root: str, jobs: dict[str, _Job], options: ParallelOptions, show: bool) -> None:
    """Run every task of ``jobs`` in the worker pool; on the first failure cancel the rest, wait for the
    running ones (nothing may write once the failed write is undone) and raise."""
    datasets = {path: (job.iterator, job.document, _cast_to(job.plan.storage)) for path, job in jobs.items()}
    tasks = [(path, region) for path, job in jobs.items() for region in job.tasks]
    if not tasks:
        return
    bar = None
    if show:
        from tqdm import tqdm

        bar = tqdm(
            total=len(tasks),
            desc=f"Writing Zarr datasets with {options.number_of_jobs} jobs",
            unit="task",
            file=sys.stderr,
        )
    pool = ProcessPoolExecutor(
        max_workers=min(options.number_of_jobs, len(tasks)),
        mp_context=multiprocessing.get_context(options.multiprocessing_context),
        initializer=_start_worker,
        initargs=(root, datasets, options.max_threads_per_process),
    )
    futures: dict[Future, tuple[str, Region]] = {}
    try:
        for path, region in tasks:
            futures[pool.submit(_write_task, path, region)] = (path, region)
        for future in as_completed(futures):
            error = future.exception()
            if error is not None:
                path, region = futures[future]
                raise _failure(path, region, error) from error
            if bar is not None:
                bar.update(1)
    finally:
        for future in futures:
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        if bar is not None:
            bar.close()


def _failure(path: str, region: Region, error: BaseException) -> ParallelWriteError:
    where = "[" + ", ".join(f"{r.start}:{r.stop}" for r in region) + "]"
    if isinstance(error, BrokenProcessPool):
        return ParallelWriteError(
            f"a worker process ended abruptly (killed, or out of memory) while the "
            f"dataset was written in parallel (a task of region {where}); nothing was kept",
            path,
        )
    return ParallelWriteError(
        f"writing region {where} in a worker process failed: {type(error).__name__}: {error}", path
    )


def _cast_to(storage: dtypes.StorageType) -> str | None:
    """The dtype values are cast to before they are stored, as the serial writer casts them (numbers)."""
    return storage.numpy_dtype.str if storage.kind == "numeric" else None


# --- in the worker processes ------------------------------------------------------------------------
_WORKER: dict[str, Any] = {}


def _start_worker(root: str, datasets: dict[str, tuple[Any, dict[str, Any], str | None]], threads: int | None) -> None:
    """Set up one worker: its thread limits, the store reopened at ``root``, the iterators by path."""
    if threads is not None:
        import zarr

        zarr.config.set({"threading.max_workers": threads})
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:  # optional: limits the BLAS/OpenMP pools numerical libraries start
            pass
        else:
            _WORKER["limits"] = threadpool_limits(limits=threads)
    # The worker's own pools (a forked child has none of the parent's threads), ended when it exits.
    _WORKER["pools"] = WorkPools(threads)
    multiprocessing.util.Finalize(None, _WORKER["pools"].close, exitpriority=10)
    # Guarded as the parent's store: keys reached below the real root, never through a symlink (issue #38),
    # chunks read back (a partly written write unit) within what their documents allow.
    store = GuardedLocalStore(root)
    store.limit({"/" + path.strip("/"): document for path, (_, document, _) in datasets.items()}, promised=False)
    _WORKER["store"] = store
    _WORKER["datasets"] = datasets
    _WORKER["direct"] = {}


def _write_task(path: str, region: Region) -> int:
    """Read ``region`` of the dataset at ``path`` from its iterator and store it (whole write units)."""
    iterator, document, cast = _WORKER["datasets"][path]
    store = _WORKER["store"]
    values = np.asarray(iterator_block(iterator, region))
    shape = tuple(r.stop - r.start for r in region)
    if values.shape != shape:
        if values.size != math.prod(shape):
            raise UnsupportedDataError(f"_get_data({region}) returned shape {values.shape}, expected {shape}", path)
        values = values.reshape(shape)
    if cast is not None:
        values = values.astype(cast, copy=False)
    cache = _WORKER["direct"]
    if path not in cache:
        cache[path] = direct.UnitEncoder.for_document(store, path, document)
    encoder = cache[path]
    if encoder is not None:
        sync(encoder.write_block(tuple(r.start for r in region), values, _WORKER["pools"]))
    else:
        sync(nodes.async_array(store, path, document).setitem(region, values))
    return values.size
