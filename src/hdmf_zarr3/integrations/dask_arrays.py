"""Dask arrays in and out: written in parallel by Dask, one task per storage object; read lazily as Dask.

Writing: a dask array given as dataset data is rechunked to the array's write units (shards, or
chunks when unsharded) and stored with ``dask.array.store``, so each task encodes and stores whole
units and no two tasks ever touch the same object. The scheduler is whatever Dask is set up with
(threads by default, a ``distributed`` cluster when a client is active); tasks carry only the store,
the node path and its metadata, all picklable.

Reading: ``read(dask=True)`` hands out large numeric datasets as dask arrays whose blocks are the
array's write units, or whole rows of them (:func:`whole_rows`; several rows when there would be more
than :data:`MAX_BLOCKS`), read by tasks
that carry the same three things and the file's lifetime (a closed file is not read).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from zarr.abc.store import Store

from ..format.vocabulary import ArrayView
from ..storage.codecs import UnitDecoder, UnitEncoder, basic_selection, read_key, read_picked
from ..storage.safety import Lifetime
from ..storage.stores import WorkPools, nodes, sync

#: Numeric datasets at least this large are read as dask arrays by ``read(dask=True)``.
DASK_FROM_BYTES = 64 * 2**20
#: The most blocks a dask array read from a file has: an array of more write units is given blocks of
#: several units (dask's own bookkeeping costs every block, read or not: 2**39 one-row chunks as
#: 2**39 blocks would never be made). A block's task reads only what its selection needs.
MAX_BLOCKS = 2**16
#: The most bytes a block of whole rows holds when the array's units do not span its trailing axes
#: (about one shard of our layout).
ROW_BLOCK_BYTES = 128 * 2**20


def is_dask(data: Any) -> bool:
    from_dask = any(cls.__module__.startswith("dask.") for cls in type(data).__mro__[:-1])  # or a subclass
    return from_dask and hasattr(data, "dask") and hasattr(data, "chunks")


def unit_shape(doc: dict[str, Any]) -> tuple[int, ...]:
    return ArrayView.from_document(doc).chunk_grid


def block_shape(doc: dict[str, Any]) -> tuple[int, ...]:
    """The blocks of the dask array read from the array ``doc`` describes: its write units, spanning the
    trailing axes whole where that stays within :data:`ROW_BLOCK_BYTES` (:func:`whole_rows`), grown (by
    whole units, along the axis of most blocks) until there are at most :data:`MAX_BLOCKS`."""
    view = ArrayView.from_document(doc)
    block = whole_rows(list(view.chunk_grid), view.shape, view.itemsize)
    counts = [max(1, -(-n // b)) for n, b in zip(view.shape, block)]
    while math.prod(counts) > MAX_BLOCKS:
        axis = counts.index(max(counts))
        factor = -(-counts[axis] // max(1, MAX_BLOCKS // (math.prod(counts) // counts[axis])))
        block[axis] *= max(2, factor)
        counts[axis] = max(1, -(-view.shape[axis] // block[axis]))
    return tuple(block)


def whole_rows(unit: list[int], shape: tuple[int, ...], itemsize: int) -> list[int]:
    """``unit`` widened to the whole extent of its trailing axes, last first, while a block stays within
    :data:`ROW_BLOCK_BYTES` and still holds whole units (an array's last unit along an axis is its edge).

    Computing a selection concatenates its blocks into one array: blocks of whole rows are copied as
    contiguous runs, blocks of 64 of 384 channels element by element (a third of a whole read's time
    here, unsharded), and there are fewer tasks. Shards of our layout already span every channel.
    """
    block = list(unit)
    for axis in range(len(block) - 1, 0, -1):
        widened = block[:axis] + [max(shape[axis], 1)] + block[axis + 1 :]
        if block[axis] >= shape[axis] or math.prod(widened) * itemsize > ROW_BLOCK_BYTES:
            break
        block = widened
    return block


class UnitTarget:
    """A ``dask.array.store`` target writing whole units of one array (picklable)."""

    def __init__(self, store: Store, path: str, doc: dict[str, Any]):
        self.store, self.path, self.doc = store, path, doc
        self.shape = tuple(doc["shape"])

    def __setitem__(self, region: tuple[slice, ...], values: np.ndarray) -> None:
        values = np.asarray(values)
        encoder = UnitEncoder.for_document(self.store, self.path, self.doc) if values.dtype.kind in "biuf" else None
        if encoder is not None:
            # A task may run in another process, and outlive the io: its pools are its own.
            with WorkPools() as pools:
                sync(encoder.write_block(tuple(r.start or 0 for r in region), values, pools))
        else:
            sync(nodes.async_array(self.store, self.path, self.doc).setitem(region, values))


def write(data: Any, store: Store, path: str, doc: dict[str, Any], dtype: np.dtype) -> None:
    """Store the dask array ``data`` into the (new) array ``doc`` describes, one task per unit."""
    import dask.array as da

    blocks = data.astype(dtype).rechunk(unit_shape(doc)) if data.ndim else data.astype(dtype)
    # dask's annotation names arrays only; any object with __setitem__ is a target (dask.array.store's docs)
    da.store(blocks, UnitTarget(store, path, doc), lock=False, compute=True)  # type: ignore[arg-type]


class UnitSource:
    """What a dask task reads from: one stored array (picklable; no open file objects), for as long as
    the file it was read from is open (``life``: a closed file is :class:`ClosedFileError`)."""

    def __init__(self, store: Store, path: str, doc: dict[str, Any], dtype: np.dtype, life: Lifetime):
        self.store, self.path, self.doc, self.life = store, path, doc, life
        self.shape, self.dtype, self.ndim = tuple(doc["shape"]), dtype, len(doc["shape"])

    def __getitem__(self, key: Any) -> np.ndarray:
        self.life.check(self.store, self.path)
        with self.life.read_pools() as pools:
            decoder = UnitDecoder.for_document(self.store, self.path, self.doc)
            values = read_key(decoder, key, self.shape, pools, self.life.block_memory())
        if values is not None:
            return values
        array = nodes.open_array(self.store, self.path, self.doc)
        picked = read_picked(array, key)  # strided and fancy keys: only the chunks they need
        return picked if picked is not None else np.asarray(array[key])


class BoxSource:
    """One box of a stored array (unit-step slices), read whole by the one task of a selection's dask array
    (picklable, as :class:`UnitSource`)."""

    def __init__(self, source: UnitSource, box: tuple[slice, ...]):
        self.source, self.box = source, box
        self.shape, self.dtype, self.ndim = tuple(s.stop - s.start for s in box), source.dtype, len(box)

    def __getitem__(self, key: Any) -> np.ndarray:
        inner = basic_selection(key, self.shape)
        if inner is None:  # (dask asks only boxes of it)
            return np.asarray(self.source[self.box])[key]
        moved = tuple(slice(b.start + s.start, b.start + s.stop) for b, s in zip(self.box, inner[0]))
        return self.source[moved].reshape(inner[1])


def one_task_box(key: Any, shape: tuple[int, ...], itemsize: int) -> tuple[slice, ...] | None:
    """The box ``key`` selects when a dask array of it is best read by one task: unit-step slices keeping
    every axis, within :data:`ROW_BLOCK_BYTES`, and not the whole array; else ``None``."""
    parsed = basic_selection(key, shape)
    if parsed is None or len(parsed[1]) != len(shape) or parsed[1] == shape:
        return None
    return parsed[0] if math.prod(parsed[1]) * itemsize <= ROW_BLOCK_BYTES else None


def as_dask(store: Store, path: str, doc: dict[str, Any], dtype: np.dtype, life: Lifetime) -> Any:
    """A dask array over the stored array, one block per write unit or row of them (:func:`block_shape`),
    readable while ``life`` lasts."""
    import dask.array as da

    life.stamp(store)
    source = UnitSource(store, path, doc, dtype, life)
    name = f"hdmf_zarr3-{path}-{id(source):x}"
    # meta given: dask would otherwise read an empty selection of the store to learn it
    array = da.from_array(source, chunks=block_shape(doc), name=name, asarray=False, meta=_meta(source))
    return _dataset_array_class()(array, source, box=tuple(slice(0, n) for n in source.shape), whole=True)


def _meta(source: UnitSource) -> np.ndarray:
    return np.empty((0,) * source.ndim, dtype=source.dtype)


def as_dask_box(source: UnitSource, box: tuple[slice, ...], name: str) -> Any:
    """A dask array of one block: the box ``box`` of ``source``, read by one task."""
    import dask.array as da

    boxed = BoxSource(source, box)
    span = ",".join(f"{s.start}:{s.stop}" for s in box)
    array = da.from_array(boxed, chunks=boxed.shape, name=f"{name}-box-{span}", asarray=False, meta=_meta(source))
    return _dataset_array_class()(array, source, box=box)


def concatenated(blocks: Any, chunks: tuple[tuple[int, ...], ...], dtype: np.dtype, source: UnitSource) -> np.ndarray:
    """The computed blocks of a dataset or of a selection of it (nested lists, as dask hands them to its
    ``finalize``) as one array, made with the file's block memory (:meth:`.Lifetime.block_memory`).

    dask's own ``finalize`` copies them into a new array: memory never touched, whose pages cost a fault
    and zeroing each, and far more on a virtual machine whose host has taken free memory back
    (docs/performance.md); memory given back by earlier results and blocks does not. A single block is
    copied too, as dask does: a block may be held elsewhere (dask's cache, a worker's memory).
    """
    out = source.life.block_memory()(tuple(sum(c) for c in chunks), dtype)
    starts = [np.cumsum((0,) + c) for c in chunks]
    for index in np.ndindex(*(len(c) for c in chunks)):
        block = blocks
        for i in index:
            block = block[i]
        out[tuple(slice(s[i], s[i + 1]) for s, i in zip(starts, index))] = block
    return out


_DATASET_ARRAY: type | None = None


def _dataset_array_class() -> type:
    """The dask array class handed out for stored datasets (made on first use: dask is optional)."""
    global _DATASET_ARRAY
    if _DATASET_ARRAY is None:
        import dask.array as da

        class DatasetArray(da.Array):
            """A dask array standing for a stored dataset. It is true when not empty, as h5py's datasets
            and our lazy ones are: HDMF's ``repr`` of a container asks ``bool()`` of each array field,
            which a plain dask array refuses. Computed, it and the selections of it (``[...]``) are joined
            by :func:`concatenated`, or read at once (:meth:`compute`); anything else made from it is a
            plain dask array."""

            __slots__ = ()
            source: UnitSource  # what its blocks are read from (in dask's ``__dict__``)
            whole: bool  # the dataset itself, not a selection of it
            box: tuple[slice, ...] | None  # the box of the dataset it is, if one (else a selection through dask)

            def __new__(
                cls, array: da.Array, source: UnitSource, box: tuple[slice, ...] | None = None, whole: bool = False
            ) -> DatasetArray:
                made = super().__new__(cls, array.dask, array.name, array.chunks, meta=array._meta)
                made.source, made.box, made.whole = source, box, whole
                return made

            def compute(self, **kwargs: Any) -> Any:
                # the dataset, or a box of it, computed with dask's default scheduling: read at once by the
                # file's reader into memory of its own, as the lazy dataset reads it. Through dask, the tasks
                # and dask's copy of their blocks into the result cost a 1 s window 3-4 ms more
                # (docs/performance.md). A scheduler chosen (a keyword, dask's config, a distributed client)
                # or callbacks watching (a progress bar) get dask's computation.
                if self.box is None or kwargs or not direct_computation(self):
                    return super().compute(**kwargs)
                return self.source[self.box]

            def __bool__(self) -> bool:
                return bool(self.size)

            def __getitem__(self, key: Any) -> Any:
                # a box of the dataset within a block's bytes: one task reads it, as the lazy dataset
                # does (its blocks' tasks would each read a part, and dask join them)
                box = one_task_box(key, self.shape, self.dtype.itemsize) if self.whole else None
                if box is not None:
                    return as_dask_box(self.source, box, self.name)
                selected = super().__getitem__(key)
                if selected is self or type(selected) is not da.Array:
                    return selected
                return DatasetArray(selected, self.source)

            def __dask_postcompute__(self) -> tuple[Any, tuple[Any, ...]]:
                if not self.ndim or not self.size or self.dtype.kind not in "biuf":
                    return super().__dask_postcompute__()
                return concatenated, (self.chunks, self.dtype, self.source)

        _DATASET_ARRAY = DatasetArray
    return _DATASET_ARRAY


def direct_computation(array: Any) -> bool:
    """Whether ``array`` (one of ours, a box of a dataset) may be computed by reading it at once: its values
    are numbers, and dask would run it with the collection's own default scheduler (none chosen by a
    keyword, dask's config or a distributed client) with no callbacks watching."""
    import dask
    from dask.base import get_scheduler
    from dask.callbacks import Callback

    if not array.ndim or not array.size or array.dtype.kind not in "biuf" or Callback.active:
        return False
    if dask.config.get("scheduler", None) is not None:  # (even the threads dask would use anyway: chosen)
        return False
    return get_scheduler(collections=[array]) is type(array).__dask_scheduler__


def swap_in(container: Any, store: Store, dataset_type: type[Any], life: Lifetime) -> int:
    """Replace large numeric lazy datasets in the fields of ``container`` and below by dask arrays.

    HDMF's constructors type-check their arguments and refuse dask arrays, so the containers are
    built with lazy datasets first and their field values swapped afterwards. ``dataset_type`` is the
    backend's plain lazy dataset class (``ZarrDataset``; its subclasses, which resolve references or
    compounds, are kept), passed in because this adapter sits below the backend; ``life`` is the open
    file's (the arrays refuse to read once it is closed). Returns how many.
    """
    swapped = 0
    stack, seen = [container], set()
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        stack.extend(getattr(obj, "children", None) or ())
        fields = getattr(obj, "fields", None)
        if not isinstance(fields, dict):
            continue
        for name, value in list(fields.items()):
            if (
                type(value) is dataset_type
                and value.storage.kind == "numeric"
                and value.shape
                and value.nbytes >= DASK_FROM_BYTES
            ):
                fields[name] = as_dask(store, value.path, value.document, value.storage.numpy_dtype, life)
                swapped += 1
    return swapped
