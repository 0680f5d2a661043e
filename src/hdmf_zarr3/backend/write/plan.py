"""Storing what a walk of the builder tree planned (:class:`WritePlan`), in batches.

The writer (:mod:`.writer`) touches no store while it walks the tree; it collects node documents and
the jobs that write chunks. Here they are stored in the order that keeps a file readable if the writer is
killed part-way: the root marked incomplete (with its attributes) first, groups before arrays, node
documents before their chunks (transactional stores such as icechunk insist), streams last. The commit
(:meth:`~hdmf_zarr3.storage.handles.handle.StoreHandle.commit`) then stores the root once, complete.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from zarr.abc.store import Store

from ...format.vocabulary import names as node_names
from ...integrations import dask_arrays
from ...storage.codecs import UnitEncoder
from ...storage.handles import StoreHandle
from ...storage.stores import WorkPools, encode_single_chunk, nodes
from .parallel import ParallelOptions, write_streams
from .streaming import copy_blocks, stream_iterator

#: Sources larger than this are copied at most LARGE_COPIES at a time (each copy holds up to two
#: blocks of BLOCK_BYTES: one being written, the next being read); smaller ones all at once.
LARGE_SOURCE_BYTES = 2**20
LARGE_COPIES = 2


@dataclass
class WritePlan:
    """Everything one write puts into the store."""

    groups: dict[str, dict[str, Any]] = field(default_factory=dict)
    arrays: dict[str, dict[str, Any]] = field(default_factory=dict)
    chunk_bytes: dict[str, bytes] = field(default_factory=dict)  # single-chunk arrays: key -> encoded chunk
    chunk_jobs: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    large_jobs: list[Callable[[], Awaitable[None]]] = field(default_factory=list)  # copies of large sources
    streams: list[tuple[str, Any]] = field(default_factory=list)
    dask_writes: list[tuple[str, Any, dict[str, Any], Any]] = field(default_factory=list)
    virtual_writes: list[Callable[[], None]] = field(default_factory=list)  # virtual chunks (.virtual_writes)


def plan_fill(
    plan: WritePlan, store: Store, path: str, doc: dict[str, Any], values: np.ndarray, pools: WorkPools
) -> None:
    """Plan storing ``values``, the whole content of the array ``doc`` at ``path``: one chunk's bytes
    (encoded now, stored with the other small keys in one batch), or a job."""
    single = encode_single_chunk(doc, values)
    if single is not None:  # one chunk: its bytes, skipping zarr's per-array setup
        plan.chunk_bytes[node_names.store_key(path, single[0])] = single[1]
        return
    direct = UnitEncoder.for_document(store, path, doc) if values.dtype.kind in "biuf" else None

    async def job() -> None:
        if direct is not None:
            await direct.write_block((0,) * values.ndim, values, pools)
        else:
            await nodes.async_array(store, path, doc).setitem(Ellipsis, values)

    plan.chunk_jobs.append(job)


def copy_job(
    store: Store,
    path: str,
    doc: dict[str, Any],
    source: Any,
    encode: Callable[[Any], np.ndarray],
    pools: WorkPools,
    progress: bool,
    raw: bool = False,
) -> Callable[[], Awaitable[None]]:
    """The job that copies ``source`` (an array-like read block by block) into the array ``doc`` at
    ``path``, each block through ``encode``; ``raw``: blocks are stored as they are, through zarr."""
    direct = None if raw else UnitEncoder.for_document(store, path, doc)

    async def job() -> None:
        await copy_blocks(
            nodes.async_array(store, path, doc),
            source,
            encode,
            pools,
            progress=path if progress else None,
            direct=direct,
        )

    return job


def store_plan(
    plan: WritePlan,
    handle: StoreHandle,
    pools: WorkPools,
    parallel: ParallelOptions,
    progress: bool,
    names_dimensions: bool,
) -> None:
    """Store everything ``plan`` holds through ``handle`` (see the module docstring for the order)."""
    store = handle.store
    # The root's own attributes (its type, the NWB version) are stored first, marked incomplete: a writer
    # killed part-way leaves a file that ``allow_incomplete=True`` can build a container from.
    handle.will_change(plan.groups.get("/"))
    handle.touching([path for path, _ in plan.streams] + [w[0] for w in plan.dask_writes])
    handle.put_documents(plan.groups, names_dimensions)
    handle.put_documents(plan.arrays, names_dimensions)
    nodes.put_keys(store, plan.chunk_bytes)
    nodes.run_jobs(plan.chunk_jobs)
    nodes.run_jobs(plan.large_jobs, limit=LARGE_COPIES)  # each holds two blocks in memory
    for path, data, doc, storage in plan.dask_writes:  # by Dask's scheduler, off zarr's event loop
        dask_arrays.write(data, store, path, doc, storage.numpy_dtype)
    for record in plan.virtual_writes:  # (their documents are stored: icechunk records chunks of arrays it knows)
        record()
    streamed = write_streams(handle, plan.streams, parallel, progress)
    for path, (iterator, stream) in plan.streams:
        if path not in streamed:  # (else written by worker processes)
            streamed[path] = stream_iterator(store, iterator, stream, pools, progress=progress)
    plan.arrays.update(streamed)
    handle.put_documents(streamed, names_dimensions)
