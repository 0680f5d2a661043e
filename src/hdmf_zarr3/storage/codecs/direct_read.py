"""Read rectangular selections of numeric arrays by decoding their chunks directly (see :mod:`.direct`).

The counterpart of :class:`.direct.UnitEncoder`: for each storage object a selection touches, its
index is read (checksum verified), then the chunks needed, neighbouring ones by one read (:func:`coalesce`).
A shard of a local directory is opened once and its runs read one after another in the order stored
(:mod:`.ordered_runs`); from other stores, runs are ranged requests, several at once, and a shard is
fetched whole when the selection covers most of it. Chunks are decoded on the encoder thread pool, a run
of chunks as soon as it arrives, and copied into the result. Missing objects and chunks read as the fill
value, as in zarr.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import itertools
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, cast

import numcodecs
import numpy as np
from zarr.abc.store import RangeByteRequest, SuffixByteRequest
from zarr.buffer import default_buffer_prototype
from zarr.storage import LocalStore

from ...errors import CorruptStoreError
from ...format.data import Picks, orthogonal_picks
from ...format.documents import chunk_key
from ...format.vocabulary import store_key
from ..safety import GuardedLocalStore
from ..stores import DECODE_ERRORS, WorkPools, check_blosc_frame, decode_error, decode_whole, record, sync
from .direct_write import EMPTY_OFFSET, JOB_BYTES, DirectArray, copy_rows, scratch_buffer
from .ordered_runs import read_in_order
from .read_plans import Selection, basic_selection, coalesce, inner_chunks

#: Fetch a whole shard from a store other than a local directory when the selection needs at least
#: this fraction of its chunks (one request instead of its index and a few ranges).
WHOLE_SHARD_FRACTION = 0.5
#: Storage objects read at once.
OBJECTS_IN_FLIGHT = 8
#: The most bytes one ranged request for chunks of a shard asks for (unless one chunk alone is larger),
#: from a local directory and from other stores. Locally, small requests finish early, so their chunks
#: are decoded while the next ones are read, and their buffers are recycled by the allocator (a fresh
#: 100 MB shard buffer costs as much in page faults as decoding it); a remote request pays a round trip.
RUN_BYTES = {"local": 2**20, "remote": 16 * 2**20}
#: Ranged requests for chunks under way at once over a whole read (through a store's ranged requests).
READS_IN_FLIGHT = 16
#: What makes an uninitialised array of a shape and dtype (``np.empty``, or recycled memory).
Empty = Callable[[tuple[int, ...], np.dtype], np.ndarray]


@dataclass(frozen=True)
class ShardRead:
    """One shard's part of a read: its key and origin, its grid of chunks, the chunks wanted and where they go."""

    key: str
    origin: tuple[int, ...]
    grid: tuple[int, ...]
    wanted: list[tuple[int, ...]]
    selection: Selection | Picks
    out: np.ndarray
    pools: WorkPools

    @property
    def index_bytes(self) -> int:
        """The bytes of the shard's index at its end: an offset and a size per chunk, and a CRC32C."""
        return 16 * math.prod(self.grid) + 4

    def unpacked(self) -> tuple[Any, ...]:
        """The fields in order (``dataclasses.astuple`` would copy the result array)."""
        return tuple(getattr(self, field.name) for field in fields(self))


def read_key(
    decoder: UnitDecoder | None, key: Any, shape: tuple[int, ...], pools: WorkPools, empty: Empty = np.empty
) -> np.ndarray | None:
    """``array[key]`` decoded directly (on ``pools.encoders``), or ``None`` when ``decoder`` or the key's
    form rules it out. Unit-step slices and integers are read as a box (into an array from ``empty``);
    strided slices, integer and boolean arrays (orthogonally, as zarr's ``oindex``) through
    :class:`.Picks`, reading only the chunks holding a selected element."""
    if decoder is None:
        return None
    parsed = basic_selection(key, shape)
    if parsed is not None:
        return sync(decoder.read(parsed[0], pools, empty)).reshape(parsed[1])
    picks = orthogonal_picks(key, shape, decoder.chunks)
    if picks is None:
        return None
    return sync(decoder.read(picks, pools)).reshape(picks.shape)


class UnitDecoder(DirectArray):
    """Reads selections of one array by decoding its chunks directly."""

    @property
    def _where(self) -> str:
        """``"local"`` for a directory on this machine (zarr's ``LocalStore``), else ``"remote"``."""
        return "local" if isinstance(self.store, LocalStore) else "remote"

    async def read(self, selection: Selection | Picks, pools: WorkPools, empty: Empty = np.empty) -> np.ndarray:
        """The values at ``selection`` (unit-step slices within the array, or picks grouped by
        chunk), in full dimensionality; chunks are decoded on ``pools.encoders``, a box into an array
        from ``empty`` (every element of it is written)."""
        if isinstance(selection, Picks):
            out = np.empty(selection.work_shape, dtype=self.dtype.newbyteorder("="))
            # the storage objects holding a picked chunk, and no other
            per_unit = [
                np.unique(a.cells // (u // c)).tolist() for a, u, c in zip(selection.axes, self.unit, self.chunks)
            ]
            units: Any = itertools.product(*per_unit)
        else:
            out = empty(tuple(s.stop - s.start for s in selection), self.dtype.newbyteorder("="))
            first = tuple(s.start // u for s, u in zip(selection, self.unit))
            last = tuple((s.stop - 1) // u + 1 for s, u in zip(selection, self.unit))
            units = itertools.product(*[range(a, b) for a, b in zip(first, last)])
        if out.size == 0:
            return out
        limit = asyncio.Semaphore(OBJECTS_IN_FLIGHT)
        reads = asyncio.Semaphore(READS_IN_FLIGHT)

        async def one(cell: tuple[int, ...]) -> None:
            async with limit:
                await self._read_unit(cell, selection, out, pools, reads)

        await asyncio.gather(*(one(c) for c in units))
        return out

    async def _read_unit(
        self,
        cell: tuple[int, ...],
        selection: Selection | Picks,
        out: np.ndarray,
        pools: WorkPools,
        reads: asyncio.Semaphore,
    ) -> None:
        origin = tuple(c * u for c, u in zip(cell, self.unit))
        key = store_key(self.path, chunk_key(cell, self.separator))
        loop = asyncio.get_running_loop()
        if not self.sharded:
            buf = await self.store.get(key, prototype=default_buffer_prototype())
            await loop.run_in_executor(
                pools.encoders, self._place, None if buf is None else _view(buf), origin, selection, out
            )
            return
        grid = tuple(u // c for u, c in zip(self.unit, self.chunks))
        part = ShardRead(key, origin, grid, self._wanted(origin, grid, selection), selection, out, pools)
        if isinstance(self.store, GuardedLocalStore):
            await self._read_local_shard(part)
        else:
            await self._read_ranged_shard(part, reads)

    async def _read_ranged_shard(self, part: ShardRead, reads: asyncio.Semaphore) -> None:
        """The chunks ``wanted`` of a shard read through the store's ranged requests: its index, then runs of
        neighbouring chunks, several at once; or, remotely, the whole shard when most of it is wanted."""
        key, origin, grid, wanted, selection, out, pools = part.unpacked()
        proto = default_buffer_prototype()
        index_bytes = part.index_bytes
        if self._where == "remote" and len(wanted) >= WHOLE_SHARD_FRACTION * math.prod(grid):
            buf = await self.store.get(key, prototype=proto)
            if buf is None:
                return self._fill_missing(origin, wanted, selection, out)
            shard = _view(buf)
            index = self._index(shard[-index_bytes:], grid, key)
            parts = {i: self._slice(shard, index[i], key) for i in wanted}
            await self._place_all(parts, origin, selection, out, pools)
            return
        buf = await self.store.get(key, prototype=proto, byte_range=SuffixByteRequest(index_bytes))
        if buf is None:
            return self._fill_missing(origin, wanted, selection, out)
        stored = self._stored_chunks(self._index(_view(buf), grid, key), wanted, origin, selection, out, key)

        async def fetch(run: list[tuple[tuple[int, ...], int, int]]) -> None:
            start = run[0][1]
            stop = max(offset + size for _, offset, size in run)
            async with reads:
                got = await self.store.get(key, prototype=proto, byte_range=RangeByteRequest(start, stop))
            if got is not None and len(got) != stop - start:
                raise self._past_end(key)
            data = None if got is None else _view(got)
            parts = {i: None if data is None else data[o - start : o - start + n] for i, o, n in run}
            await self._place_all(parts, origin, selection, out, pools)

        await asyncio.gather(*(fetch(run) for run in coalesce(stored, RUN_BYTES[self._where])))

    async def _read_local_shard(self, part: ShardRead) -> None:
        """The chunks ``wanted`` of a local shard, read in the order stored by one source thread
        (:meth:`_read_in_order`) and decoded as each run arrives. Cancelled (a Ctrl-C) or failed, the reading
        stops at the next run; the thread and its decodings are members of the read's task group, so the read
        returns only once they have ended (:func:`.record`): nothing of it runs on."""
        stop = threading.Event()
        in_group = contextvars.copy_context()  # (its decodings, submitted from the thread, are recorded too)
        reader = part.pools.sources.submit(in_group.run, self._read_in_order, part, stop)
        record(reader)
        try:
            jobs = await asyncio.wrap_future(reader)
            await asyncio.gather(*(asyncio.wrap_future(job) for job in jobs))
        except BaseException:
            stop.set()
            raise

    def _read_in_order(self, part: ShardRead, stop: threading.Event) -> list[concurrent.futures.Future[None]]:
        """On a source thread: open the shard once, read its index, then the chunks wanted in runs, in the
        order they are stored (:func:`.read_in_order`); returns the runs' decoding jobs."""
        key, origin, grid, wanted, selection, out, pools = part.unpacked()
        shard = cast(GuardedLocalStore, self.store).open_object(key)  # (:meth:`_read_unit` chose this path for it)
        if shard is None:
            self._fill_missing(origin, wanted, selection, out)
            return []
        with shard:
            index = self._index(memoryview(shard.read(shard.size - part.index_bytes, shard.size)), grid, key)
            stored = self._stored_chunks(index, wanted, origin, selection, out, key)

            def place(run: list[tuple[Any, memoryview]]) -> None:
                self._place_batch([(data, self._chunk_origin(origin, i)) for i, data in run], selection, out)

            runs = coalesce(stored, RUN_BYTES["local"])
            return read_in_order(shard, runs, place, pools.encoders, stop, lambda: self._past_end(key))

    def _stored_chunks(
        self,
        index: np.ndarray,
        wanted: list[tuple[int, ...]],
        origin: tuple[int, ...],
        selection: Selection | Picks,
        out: np.ndarray,
        key: str,
    ) -> list[tuple[tuple[int, ...], int, int]]:
        """``(inner index, offset, size)`` of each chunk ``wanted`` the shard's ``index`` says is stored; the
        others (never written) are filled here."""
        stored = []
        for i in wanted:
            offset, size = (int(v) for v in index[i])
            if offset == EMPTY_OFFSET:
                self._place(None, self._chunk_origin(origin, i), selection, out)
            elif offset + size > self.bound:
                raise self._past_end(key)
            else:
                stored.append((i, offset, size))
        return stored

    def _chunk_origin(self, origin: tuple[int, ...], inner: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(o + j * c for o, j, c in zip(origin, inner, self.chunks))

    async def _place_all(
        self,
        parts: dict[tuple[int, ...], Any],
        origin: tuple[int, ...],
        selection: Selection | Picks,
        out: np.ndarray,
        pools: WorkPools,
    ) -> None:
        """Decode the chunks ``parts`` holds (inner index -> bytes or ``None``) on ``pools.encoders``, a
        few chunks per job when they are small (a job costs a thread hand-off, ~0.1 ms)."""
        loop = asyncio.get_running_loop()
        per_job = max(1, JOB_BYTES // (math.prod(self.chunks) * self.dtype.itemsize))
        items = [(data, self._chunk_origin(origin, i)) for i, data in parts.items()]

        jobs = [items[k : k + per_job] for k in range(0, len(items), per_job)]
        await asyncio.gather(
            *(loop.run_in_executor(pools.encoders, self._place_batch, job, selection, out) for job in jobs)
        )

    def _place_batch(
        self, batch: list[tuple[Any, tuple[int, ...]]], selection: Selection | Picks, out: np.ndarray
    ) -> None:
        """Decode and place each ``(bytes or None, chunk origin)`` of ``batch`` (one job on an encoder thread)."""
        for data, at in batch:
            self._place(data, at, selection, out)

    def _fill_missing(
        self, origin: tuple[int, ...], wanted: list, selection: Selection | Picks, out: np.ndarray
    ) -> None:
        for i in wanted:
            self._place(None, self._chunk_origin(origin, i), selection, out)

    def _key_of(self, origin: tuple[int, ...]) -> str:
        """The chunk key of the chunk at ``origin`` (with its place in the shard, when sharded)."""
        cell = tuple(o // u for o, u in zip(origin, self.unit))
        key = chunk_key(cell, self.separator)
        if not self.sharded:
            return key
        inner = tuple((o % u) // c for o, u, c in zip(origin, self.unit, self.chunks))
        return f"{key} (inner chunk {inner})"

    def _wanted(
        self, origin: tuple[int, ...], grid: tuple[int, ...], selection: Selection | Picks
    ) -> list[tuple[int, ...]]:
        """The inner indices of the chunks of the shard at ``origin`` that ``selection`` touches, in C order."""
        if not isinstance(selection, Picks):
            return inner_chunks(origin, self.chunks, grid, selection)
        cells = itertools.product(*[range(g) for g in grid])
        return [i for i in cells if self._overlaps(self._chunk_origin(origin, i), selection)]

    def _overlaps(self, origin: tuple[int, ...], selection: Selection | Picks) -> bool:
        if isinstance(selection, Picks):
            return selection.in_chunk(tuple(o // c for o, c in zip(origin, self.chunks))) is not None
        return all(o < s.stop and o + c > s.start for o, c, s in zip(origin, self.chunks, selection))

    def _index(self, raw: memoryview, grid: tuple[int, ...], key: str) -> np.ndarray:
        where = key[len(self.path.strip("/")) + 1 :]
        try:
            table = bytes(numcodecs.CRC32C().decode(raw))
            return np.frombuffer(table, dtype="<u8").reshape(grid + (2,))
        except DECODE_ERRORS as exc:  # numcodecs raises RuntimeError on a checksum mismatch
            raise CorruptStoreError(f"shard index of {where} is damaged ({exc})", self.path) from exc

    def _slice(self, shard: memoryview, entry: np.ndarray, key: str) -> memoryview | None:
        offset, size = (int(v) for v in entry)
        if offset == EMPTY_OFFSET:
            return None
        if offset + size > len(shard):
            raise self._past_end(key)
        return shard[offset : offset + size]

    def _past_end(self, key: str) -> CorruptStoreError:
        return CorruptStoreError(
            f"shard index of {key[len(self.path.strip('/')) + 1 :]} points past the end of the shard", self.path
        )

    def _place(
        self, data: memoryview | None, origin: tuple[int, ...], selection: Selection | Picks, out: np.ndarray
    ) -> None:
        """Decode one chunk stored at ``origin`` and copy its part of ``selection`` into ``out``."""
        if isinstance(selection, Picks):
            picked = selection.in_chunk(tuple(o // c for o, c in zip(origin, self.chunks)))
            if picked is None:
                return
            inner, outer = picked
            if data is None:
                out[np.ix_(*outer)] = self.fill
            else:
                out[np.ix_(*outer)] = self._decoded(data, origin)[np.ix_(*inner)]
            return
        chunk_region = self.chunks
        inter = tuple(slice(max(o, s.start), min(o + c, s.stop)) for o, c, s in zip(origin, chunk_region, selection))
        if any(i.start >= i.stop for i in inter):
            return
        target = out[tuple(slice(i.start - s.start, i.stop - s.start) for i, s in zip(inter, selection))]
        if data is None:
            target[...] = self.fill
            return
        part = tuple(slice(i.start - o, i.stop - o) for i, o in zip(inter, origin))
        if self._straight_into(target, part):
            self._decoded(data, origin, into=target)  # no scratch chunk, no second copy
            return
        copy_rows(target, self._decoded(data, origin)[part])

    def _straight_into(self, target: np.ndarray, part: tuple[slice, ...]) -> bool:
        """Whether the chunk can be decoded straight into ``target``, its place in the result: Blosc (which
        writes exactly what its frame's header says, checked first), the whole chunk selected, and ``target``
        one contiguous run in the stored byte order (a chunk of whole rows of a C-contiguous result)."""
        return (
            bool(self.compressors)
            and isinstance(self.compressors[0], numcodecs.Blosc)
            and all(p.start == 0 and p.stop == c for p, c in zip(part, self.chunks))
            and target.flags.c_contiguous
            and target.dtype == self.dtype
        )

    def _decoded(self, data: memoryview, origin: tuple[int, ...], into: np.ndarray | None = None) -> np.ndarray:
        """The values of the chunk stored at ``origin``, in ``into`` (a whole chunk's room, for Blosc only: see
        :meth:`_straight_into`) or else in this thread's scratch chunk."""
        chunk_region = self.chunks
        try:
            for compressor in reversed(self.compressors[1:]):
                data = compressor.decode(data)
            values = scratch_buffer(chunk_region, self.dtype) if into is None else into
            first = self.compressors[0] if self.compressors else None
            if isinstance(first, numcodecs.Blosc):
                check_blosc_frame(data, values.nbytes)  # blosc writes what its header says, nothing else
                first.decode(data, out=values)  # into the scratch chunk or straight into the result
            else:
                # Other codecs decoding into ``out`` leave the rest of a short chunk as it was (another
                # chunk's values, in the scratch chunk): decode, then require a whole chunk.
                raw = decode_whole(first, data) if first is not None else data
                values[...] = np.frombuffer(raw, dtype=self.dtype).reshape(chunk_region)
        except DECODE_ERRORS as exc:
            raise decode_error(exc, self.path, f"chunk {self._key_of(origin)}") from exc
        return values


def _view(buf: Any) -> memoryview:
    """The bytes of a zarr buffer without copying them."""
    return memoryview(buf.as_numpy_array()).cast("B")
