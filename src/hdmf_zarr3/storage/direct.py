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
import itertools
import json
import math
import threading
from typing import Any, Self

import numcodecs
import numpy as np
from zarr.abc.store import Store
from zarr.buffer import default_buffer_prototype

from ..format.array_view import ArrayView
from ..format.codec_rules import stored_bound
from ..format.documents import chunk_key
from ..format.names import store_key
from .chunks import _bytes_to_bytes
from .pools import WorkPools

#: Shards encoded at once by one block write (each holds its encoded chunks until stored).
UNITS_IN_FLIGHT = 2
_EMPTY = np.iinfo(np.uint64).max
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
        compressors = [_bytes_to_bytes(c) for c in codecs[1:]]
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

        ``None`` for a chunk holding only the fill value, which is not stored (as zarr does).
        """
        part = values[region]
        if part.flat[0] == self.fill and (part == self.fill).all() and self._same_sign(part):  # (first test: cheap)
            return None
        if part.shape != self.chunks or not part.flags.c_contiguous or part.dtype != self.dtype:
            # Copy into this thread's scratch chunk: reusing it spares a page fault per 4 KiB, which
            # costs as much as the copy itself on a fresh allocation.
            scratch = _scratch(self.chunks, self.dtype)
            if part.shape != self.chunks:
                scratch.fill(self.fill)
                scratch[tuple(slice(0, n) for n in part.shape)] = part
            else:
                np.copyto(scratch, part, casting="unsafe")
            part = scratch
        raw: Any = part
        for compressor in self.compressors:
            raw = compressor.encode(raw)
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

        async def one(cell: tuple[int, ...]) -> None:
            async with limit:
                origin = tuple(c * u for c, u in zip(cell, self.unit))
                local = tuple(slice(o - s, min(o + u, e) - s) for o, u, s, e in zip(origin, self.unit, start, stop))
                unit_values = values[local]
                if self.sharded:
                    data = await self._shard(unit_values, loop, pools)
                else:
                    data = await loop.run_in_executor(
                        pools.encoders, self._encode, unit_values, tuple(slice(0, n) for n in unit_values.shape)
                    )
                if data is not None:  # the array is new: a unit never stored reads as the fill value
                    key = store_key(self.path, chunk_key(cell, self.separator))
                    await self.store.set(key, default_buffer_prototype().buffer.from_bytes(data))

        await asyncio.gather(*(one(c) for c in itertools.product(*[range(a, b) for a, b in zip(first, last)])))

    async def _shard(self, values: np.ndarray, loop: asyncio.AbstractEventLoop, pools: WorkPools) -> bytes | None:
        grid = tuple(u // c for u, c in zip(self.unit, self.chunks))
        jobs, slots = [], []
        for index in itertools.product(*[range(g) for g in grid]):
            region = tuple(slice(i * c, min((i + 1) * c, n)) for i, c, n in zip(index, self.chunks, values.shape))
            if any(r.start >= r.stop for r in region):
                continue  # beyond the array's edge: an empty chunk
            slots.append(index)
            jobs.append(loop.run_in_executor(pools.encoders, self._encode, values, region))
        encoded = await asyncio.gather(*jobs)
        # Assembling ~100 MB is a copy: off the event loop, which must keep serving the store.
        return await loop.run_in_executor(pools.encoders, _assemble, grid, slots, encoded)


_LOCAL = threading.local()


def _scratch(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A chunk-sized array owned by the calling thread (kept between calls of the same shape)."""
    buffer = getattr(_LOCAL, "chunk", None)
    if buffer is None or buffer.shape != shape or buffer.dtype != dtype:
        buffer = _LOCAL.chunk = np.empty(shape, dtype=dtype)
    return buffer


def _assemble(grid: tuple[int, ...], slots: list[tuple[int, ...]], encoded: list[bytes | None]) -> bytes | None:
    """A shard's bytes: its stored chunks in order, then the index and the index's crc32c."""
    index_table = np.full(grid + (2,), _EMPTY, dtype="<u8")
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
    checksum = numcodecs.CRC32C().encode(index_bytes)
    return b"".join([*stored, bytes(checksum)])


_NUMERIC = frozenset(
    {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64"}
)
