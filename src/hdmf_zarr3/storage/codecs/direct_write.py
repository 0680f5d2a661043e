"""Encode and store whole write units (shards, or chunks) of numeric arrays without zarr's pipeline.

zarr-python schedules one coroutine per chunk and copies each chunk several times on its way to the
store; on bulk data (GBs of ephys) that caps writes well below the codec's own speed. An array whose
codecs are ``bytes`` plus numcodecs-backed compressors (``blosc``, ``zstd``, ``gzip``, ``crc32c``),
optionally wrapped in ``sharding_indexed`` with its index at the end, is written here instead: every
chunk of a block is cut out, padded to the chunk shape at the array's edge (as Zarr stores edge
chunks), encoded on a thread pool with the same numcodecs implementations zarr uses, and shards are
assembled as the sharding specification lays them out (chunks, then the index of ``(offset,
nbytes)`` pairs as little-endian uint64 followed by its crc32c). Anything else goes through zarr.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import math
import threading
import time
from collections.abc import Iterator
from typing import Any, Self

import numcodecs
import numpy as np
from zarr.abc.store import Store
from zarr.buffer import default_buffer_prototype
from zarr.storage import LocalStore

from ...format.documents import chunk_key
from ...format.layout import all_chunks_stored, stored_bound
from ...format.vocabulary import ArrayView, store_key
from ..stores import WorkPools, bytes_to_bytes

#: Shards encoded at once by one block write (each holds its encoded chunks until stored).
UNITS_IN_FLIGHT = 2
#: Uncompressed bytes one encoding or decoding job takes (several small chunks make one job).
JOB_BYTES = 4 * 2**20
#: The offset a shard index gives a chunk that is not stored (read back by :mod:`.direct_read`).
EMPTY_OFFSET = np.iinfo(np.uint64).max
_INDEX_CODECS = [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]


class DirectArray:
    """An array whose chunks this module can encode and decode itself (see :meth:`for_document`)."""

    def __init__(
        self,
        store: Store,
        path: str,
        doc: dict[str, Any],
        chunks: tuple[int, ...],
        compressors: list[Any],
        sharded: bool,
    ):
        view = ArrayView.from_document(doc)
        self.store = store
        self.path = path
        self.shape = view.shape
        self.unit = view.chunk_grid
        self.chunks = chunks
        self.compressors = compressors
        self.sharded = sharded
        self.separator = view.separator or "/"
        self.dtype = np.dtype(doc["data_type"]).newbyteorder("<")
        self.fill = np.array(doc["fill_value"], dtype=self.dtype)
        self.bound = stored_bound(doc)  # the most bytes one storage object may take
        self.every_chunk = all_chunks_stored(doc)  # fill-valued chunks are stored too

    @classmethod
    def for_document(cls, store: Store, path: str, doc: dict[str, Any]) -> Self | None:
        """An instance for the array ``doc`` describes, or ``None`` when zarr must do it."""
        doc = json.loads(json.dumps(doc, default=str))  # plain JSON: zarr's to_dict() gives tuples, not lists
        view = ArrayView.from_document(doc)
        data_type = view.data_type
        if not isinstance(data_type, str) or data_type not in _NUMERIC or not view.shape or view.separator is None:
            return None
        if not isinstance(view.fill_value, (int, float, bool)) or isinstance(view.fill_value, bool) != (
            data_type == "bool"
        ):
            return None
        if view.sharded:
            config = view.sharding
            if (
                len(view.codecs) != 1
                or config.get("index_location", "end") != "end"
                or config.get("index_codecs") != _INDEX_CODECS
            ):
                return None
            if any(u % c for u, c in zip(view.chunk_grid, view.read_chunks)):
                return None
        codecs = view.inner_codecs
        if (
            not codecs
            or codecs[0].get("name") != "bytes"
            or codecs[0].get("configuration", {}).get("endian", "little") != "little"
        ):
            return None  # (one-byte types carry no endianness)
        compressors = [bytes_to_bytes(c) for c in codecs[1:]]
        if any(c is None for c in compressors):
            return None
        return cls(store, path, doc, view.read_chunks, compressors, view.sharded)


class UnitEncoder(DirectArray):
    """Writes blocks of whole write units of one array."""

    def _same_sign(self, part: np.ndarray) -> bool:
        """Whether values equal to the fill value also have its sign (-0.0 == 0.0, yet is not the fill)."""
        if self.dtype.kind != "f" or self.fill != 0:
            return True
        return bool((np.signbit(part) == np.signbit(self.fill)).all())

    # --- one chunk --------------------------------------------------------------------------
    def _encode(self, values: np.ndarray, region: tuple[slice, ...]) -> bytes | None:
        """The stored bytes of the chunk at ``region`` of ``values`` (padded to the chunk shape).

        ``None`` for a chunk holding only the fill value, which is not stored (as zarr does), unless the
        array promises that every chunk is stored.
        """
        started = time.perf_counter()
        part = values[region]
        if (
            not self.every_chunk
            and part.flat[0] == self.fill  # (first test: cheap)
            and (part == self.fill).all()
            and self._same_sign(part)
        ):
            return None
        if part.shape != self.chunks or not part.flags.c_contiguous or part.dtype != self.dtype:
            # Copy into this thread's scratch chunk: reusing it spares a page fault per 4 KiB, which
            # costs as much as the copy itself on a fresh allocation.
            scratch = scratch_buffer(self.chunks, self.dtype)
            if part.shape != self.chunks:
                scratch.fill(self.fill)
                copy_rows(scratch[tuple(slice(0, n) for n in part.shape)], part)
            else:
                copy_rows(scratch, part)
            part = scratch
        cut = time.perf_counter()
        raw: Any = part
        for compressor in self.compressors:
            raw = compressor.encode(raw)
        STAGES.add("cut", cut - started)
        STAGES.add("encode", time.perf_counter() - cut)
        return bytes(raw)

    # --- blocks of whole units ---------------------------------------------------------------
    async def write_block(self, start: tuple[int, ...], values: np.ndarray, pools: WorkPools) -> None:
        """Store ``values``, placed at ``start``; it must cover whole units (clipped to the array).

        Chunks are encoded on ``pools.encoders``.
        """
        stop = tuple(s + n for s, n in zip(start, values.shape))
        first = tuple(s // u for s, u in zip(start, self.unit))
        last = tuple(math.ceil(e / u) for e, u in zip(stop, self.unit))
        loop = asyncio.get_running_loop()
        # Shards encode their chunks in parallel already; plain chunks are the parallel unit themselves.
        limit = asyncio.Semaphore(UNITS_IN_FLIGHT if self.sharded else 4 * pools.encoder_threads)
        # Shard buffers whose object is stored, for the next shards: a fresh ~100 MB buffer costs as much
        # in page faults as encoding its shard. Only zarr's own local-directory writes are known to keep
        # no reference to what they stored (a subclass overriding ``set`` might).
        local = isinstance(self.store, LocalStore) and type(self.store).set is LocalStore.set
        spare: list[np.ndarray] | None = [] if local else None

        async def one(cell: tuple[int, ...]) -> None:
            async with limit:
                origin = tuple(c * u for c, u in zip(cell, self.unit))
                within = tuple(slice(o - s, min(o + u, e) - s) for o, u, s, e in zip(origin, self.unit, start, stop))
                unit_values = values[within]
                reused = spare.pop() if spare else None
                data: np.ndarray | bytes | None
                if self.sharded:
                    data = await self._shard(unit_values, loop, pools, reused)
                else:
                    data = await loop.run_in_executor(
                        pools.encoders, self._encode, unit_values, tuple(slice(0, n) for n in unit_values.shape)
                    )
                if data is not None:  # the array is new: a unit never stored reads as the fill value
                    key = store_key(self.path, chunk_key(cell, self.separator))
                    started = time.perf_counter()
                    await self.store.set(key, _buffer(data))
                    STAGES.add("store", time.perf_counter() - started)
                kept = data if isinstance(data, np.ndarray) else reused
                if spare is not None and kept is not None:
                    spare.append(kept if kept.base is None else kept.base)

        started = time.perf_counter()
        await asyncio.gather(*(one(c) for c in itertools.product(*[range(a, b) for a, b in zip(first, last)])))
        STAGES.add("blocks", time.perf_counter() - started)

    async def _shard(
        self, values: np.ndarray, loop: asyncio.AbstractEventLoop, pools: WorkPools, into: np.ndarray | None = None
    ) -> np.ndarray | None:
        """The bytes of the shard holding ``values`` (assembled in ``into`` when it is large enough)."""
        grid = tuple(u // c for u, c in zip(self.unit, self.chunks))
        regions, slots = [], []
        for index in itertools.product(*[range(g) for g in grid]):
            region = tuple(slice(i * c, min((i + 1) * c, n)) for i, c, n in zip(index, self.chunks, values.shape))
            if any(r.start >= r.stop for r in region):
                continue  # beyond the array's edge: an empty chunk
            slots.append(index)
            regions.append(region)
        # Small chunks are encoded a few per job: a job costs a thread hand-off (~0.1 ms).
        per_job = max(1, JOB_BYTES // (math.prod(self.chunks) * self.dtype.itemsize))

        def encode(batch: list[tuple[slice, ...]]) -> list[bytes | None]:
            return [self._encode(values, region) for region in batch]

        batches = [regions[k : k + per_job] for k in range(0, len(regions), per_job)]
        done = await asyncio.gather(*(loop.run_in_executor(pools.encoders, encode, b) for b in batches))
        encoded = [data for batch in done for data in batch]
        # Assembling ~100 MB is a copy: off the event loop, which must keep serving the store.
        return await loop.run_in_executor(pools.encoders, _assemble, grid, slots, encoded, into)


_LOCAL = threading.local()


class StageClock:
    """Seconds spent in each stage of the direct writes made while :meth:`measuring` (for benchmarks).

    Stages: ``cut`` (copying a chunk out of the values), ``encode`` (the compressors), ``assemble``
    (copying encoded chunks into a shard) and ``store`` (``Store.set``, awaited) are summed over the
    threads doing them; ``blocks`` is the wall time of :meth:`UnitEncoder.write_block` calls.
    """

    def __init__(self) -> None:
        self._seconds: dict[str, float] | None = None
        self._lock = threading.Lock()

    def add(self, stage: str, seconds: float) -> None:
        """Count ``seconds`` for ``stage`` (nothing unless measuring)."""
        if self._seconds is not None:
            with self._lock:
                self._seconds[stage] = self._seconds.get(stage, 0.0) + seconds

    @contextlib.contextmanager
    def measuring(self) -> Iterator[dict[str, float]]:
        """A dict filled with the seconds of each stage until the block ends."""
        seconds: dict[str, float] = dict.fromkeys(("cut", "encode", "assemble", "store", "blocks"), 0.0)
        self._seconds = seconds
        try:
            yield seconds
        finally:
            self._seconds = None


#: The stages of direct writes in this process (see :class:`StageClock`).
STAGES = StageClock()


def _buffer(data: bytes | np.ndarray) -> Any:
    """``data`` as a zarr buffer, without copying it."""
    buffer = default_buffer_prototype().buffer
    return buffer.from_bytes(data) if isinstance(data, bytes) else buffer.from_array_like(data)


def copy_rows(target: np.ndarray, values: np.ndarray) -> None:
    """``target[...] = values`` (cast as needed); when both hold the same type with their last axis
    contiguous, each run along it is copied as one item: cutting a 64-channel chunk out of 384-channel
    rows then takes half the time of numpy's element-wise strided copy."""
    width = values.shape[-1] * values.itemsize if values.ndim >= 2 else 0
    if (
        width
        and target.shape == values.shape
        and target.dtype == values.dtype
        and values.strides[-1] == values.itemsize
        and target.strides[-1] == target.itemsize
    ):
        row = np.dtype((np.void, width))
        np.copyto(target.view(row), values.view(row))
    else:
        np.copyto(target, values, casting="unsafe")


def scratch_buffer(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A chunk-sized array owned by the calling thread (kept between calls of the same shape)."""
    buffer = getattr(_LOCAL, "chunk", None)
    if buffer is None or buffer.shape != shape or buffer.dtype != dtype:
        buffer = _LOCAL.chunk = np.empty(shape, dtype=dtype)
    return buffer


def _assemble(
    grid: tuple[int, ...], slots: list[tuple[int, ...]], encoded: list[bytes | None], into: np.ndarray | None = None
) -> np.ndarray | None:
    """A shard's bytes: its stored chunks in order, then the index and the index's crc32c.

    Assembled with numpy copies into the start of ``into`` when it is large enough, else into a new
    array (with room to spare, for reuse): ``bytes.join`` holds the GIL while it copies (~100 MB here),
    stalling the threads still encoding; numpy releases it.
    """
    started = time.perf_counter()
    index_table = np.full(grid + (2,), EMPTY_OFFSET, dtype="<u8")
    offset = 0
    stored = []
    for slot, data in zip(slots, encoded):
        if data is not None:
            index_table[slot] = (offset, len(data))
            offset += len(data)
            stored.append(data)
    if not stored:
        return None
    index_bytes = index_table.tobytes()
    checksum = bytes(numcodecs.CRC32C().encode(index_bytes))
    size = offset + len(checksum)
    if into is None or into.size < size:
        into = np.empty(size + size // 8, dtype=np.uint8)
    shard = into[:size]
    start = 0
    for data in stored:
        shard[start : start + len(data)] = np.frombuffer(data, dtype=np.uint8)
        start += len(data)
    shard[start:] = np.frombuffer(checksum, dtype=np.uint8)
    STAGES.add("assemble", time.perf_counter() - started)
    return shard


_NUMERIC = frozenset(
    {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64"}
)
