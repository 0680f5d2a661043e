"""The read limit of part (h): the best any reader could do with an array's layout.

For one selection of a stored Zarr v3 array (``bytes`` + ``blosc``, sharded or not, as ours writes
bulk data), :func:`plan` lists the stored bytes of exactly the chunks the selection needs (a shard's
index is read while planning, outside any timer; neighbouring chunks of a shard are one range);
:meth:`Limit.fetch` reads those bytes (local files with ``os.pread``, S3 with obstore's ranged gets)
and :meth:`Limit.decode` decodes every chunk with numcodecs' Blosc on the same number of threads as
our reader, into one preallocated, already touched array: straight into it when a chunk is whole rows
of it, else into a per-thread scratch chunk whose part is copied. Written from the Zarr v3 and
sharding specifications, not from our reader, so that it measures the layout, not our code.
"""

from __future__ import annotations

import json
import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
from _common import Timer

#: Empty chunks in a shard index (no bytes stored).
EMPTY = 2**64 - 1
#: Chunks of one shard at most this many bytes apart are read by one request.
GAP = 64 * 2**10


@dataclass
class Piece:
    """One stored chunk: where its bytes are and where its values go."""

    key: str
    offset: int
    size: int | None  # None: the whole object
    origin: tuple[int, ...]


@dataclass
class Limit:
    """The limit's reads and decodes of one selection (see the module docstring)."""

    source: Any  # LocalSource or S3Source
    doc: dict[str, Any]
    selection: tuple[slice, ...]
    pieces: list[Piece]
    indexes: list[tuple[str, int]]  # (shard key, index bytes) of every shard read; none when unsharded
    threads: int = 2
    out: np.ndarray = field(init=False)
    chunks: tuple[int, ...] = field(init=False)

    def __post_init__(self) -> None:
        self.chunks = _inner_chunks(self.doc)
        self.out = np.zeros(tuple(s.stop - s.start for s in self.selection), dtype=self.doc["data_type"])
        self._local = threading.local()

    def fetch(self) -> float:
        """Read the index of every shard read (all at once), then the bytes of every needed chunk (runs of
        neighbouring ones by one request); seconds. Any reader of a sharded layout reads the index first."""
        with Timer() as t:
            if self.indexes:
                with ThreadPoolExecutor(len(self.indexes)) as pool:
                    tables = list(pool.map(lambda shard: self.source.read_suffix(*shard), self.indexes))
                assert all(len(table) == n for table, (_, n) in zip(tables, self.indexes))
            self._fetched = self.source.read_runs(_runs(self.pieces))
        return t.seconds

    def decode(self) -> float:
        """Decode every fetched chunk into :attr:`out` on :attr:`threads` threads; seconds."""
        per_job = max(1, (4 * 2**20) // (math.prod(self.chunks) * self.out.itemsize))
        jobs = [self.pieces[i : i + per_job] for i in range(0, len(self.pieces), per_job)]
        with Timer() as t, ThreadPoolExecutor(self.threads) as pool:
            list(pool.map(self._decode_job, jobs))
        self._fetched = {}  # (not held while the other readers run)
        return t.seconds

    def _decode_job(self, job: list[Piece]) -> None:
        codec = numcodecs.Blosc()  # a Blosc frame says how it was compressed (the file's own settings)
        for piece in job:
            data = self._chunk_bytes(piece)
            inter = [
                slice(max(o, s.start), min(o + c, s.stop)) for o, c, s in zip(piece.origin, self.chunks, self.selection)
            ]
            target = self.out[tuple(slice(i.start - s.start, i.stop - s.start) for i, s in zip(inter, self.selection))]
            whole = all(i.start == o and i.stop - i.start == c for i, o, c in zip(inter, piece.origin, self.chunks))
            if whole and target.flags.c_contiguous:  # whole rows of the result: decode straight into it
                codec.decode(data, out=target)
                continue
            scratch = getattr(self._local, "chunk", None)
            if scratch is None:
                scratch = self._local.chunk = np.empty(self.chunks, dtype=self.out.dtype)
            codec.decode(data, out=scratch)
            target[...] = scratch[tuple(slice(i.start - o, i.stop - o) for i, o in zip(inter, piece.origin))]

    def _chunk_bytes(self, piece: Piece) -> memoryview:
        run_start, run = self._fetched[(piece.key, piece.offset)]
        view = memoryview(run)
        if piece.size is None:
            return view
        return view[piece.offset - run_start : piece.offset - run_start + piece.size]


def _inner_chunks(doc: dict[str, Any]) -> tuple[int, ...]:
    codecs = doc["codecs"]
    if codecs[0]["name"] == "sharding_indexed":
        return tuple(codecs[0]["configuration"]["chunk_shape"])
    return tuple(doc["chunk_grid"]["configuration"]["chunk_shape"])


def _key(prefix: str, cell: tuple[int, ...], doc: dict[str, Any]) -> str:
    encoding = doc.get("chunk_key_encoding", {})
    separator = encoding.get("configuration", {}).get("separator", "/")
    parts = [str(i) for i in cell]
    return (
        f"{prefix}/c{separator}{separator.join(parts)}"
        if encoding.get("name", "default") == "default"
        else (f"{prefix}/{separator.join(parts)}")
    )


def plan(
    source: Any, prefix: str, selection: tuple[slice, ...]
) -> tuple[dict[str, Any], list[Piece], list[tuple[str, int]]]:
    """The array document at ``prefix``, the stored chunks ``selection`` needs (missing ones left out) and
    the shard indexes read to find them (key, bytes)."""
    doc = json.loads(source.read_whole(f"{prefix}/zarr.json"))
    codecs = doc["codecs"]
    unit = tuple(doc["chunk_grid"]["configuration"]["chunk_shape"])
    chunks = _inner_chunks(doc)
    pieces, indexes = [], []
    ranges = [range(s.start // u, (s.stop - 1) // u + 1) for s, u in zip(selection, unit)]
    for cell in np.ndindex(*[len(r) for r in ranges]):
        cell = tuple(r[i] for r, i in zip(ranges, cell))
        key = _key(prefix, cell, doc)
        if codecs[0]["name"] != "sharding_indexed":
            if source.exists(key):
                pieces.append(Piece(key, 0, None, tuple(c * u for c, u in zip(cell, unit))))
            continue
        grid = tuple(u // c for u, c in zip(unit, chunks))
        indexes.append((key, 16 * math.prod(grid) + 4))
        raw = source.read_suffix(*indexes[-1])
        index = np.frombuffer(raw[:-4], dtype="<u8").reshape(grid + (2,))
        for inner in np.ndindex(*grid):
            origin = tuple(c * u + i * k for c, u, i, k in zip(cell, unit, inner, chunks))
            if all(o < s.stop and o + k > s.start for o, k, s in zip(origin, chunks, selection)):
                offset, size = (int(v) for v in index[inner])
                if offset != EMPTY:
                    pieces.append(Piece(key, offset, size, origin))
    return doc, pieces, indexes


def _runs(pieces: list[Piece]) -> list[tuple[str, int, int | None, list[tuple[str, int]]]]:
    """``(key, start, stop or None, [(key, offset) of each piece])``: neighbouring chunks of a shard as one run."""
    runs: list[tuple[str, int, int | None, list[tuple[str, int]]]] = []
    for piece in sorted(pieces, key=lambda p: (p.key, p.offset)):
        if piece.size is None:
            runs.append((piece.key, 0, None, [(piece.key, 0)]))
            continue
        end = piece.offset + piece.size
        last = runs[-1] if runs else None
        if last and last[0] == piece.key and last[2] is not None and piece.offset <= last[2] + GAP:
            runs[-1] = (last[0], last[1], max(last[2], end), [*last[3], (piece.key, piece.offset)])
        else:
            runs.append((piece.key, piece.offset, end, [(piece.key, piece.offset)]))
    return runs


class LocalSource:
    """Stored objects of a directory, read with ``os.pread`` on ``threads`` threads."""

    def __init__(self, root: Path, threads: int = 2):
        self.root, self.threads = Path(root), threads

    def read_whole(self, key: str) -> bytes:
        return (self.root / key).read_bytes()

    def exists(self, key: str) -> bool:
        return (self.root / key).exists()

    def read_suffix(self, key: str, n: int) -> bytes:
        with open(self.root / key, "rb") as f:
            f.seek(-n, os.SEEK_END)
            return f.read()

    def read_runs(self, runs: list) -> dict[tuple[str, int], tuple[int, bytes]]:
        def one(run: tuple) -> list[tuple[tuple[str, int], tuple[int, bytes]]]:
            key, start, stop, members = run
            fd = os.open(self.root / key, os.O_RDONLY)
            try:
                size = os.fstat(fd).st_size if stop is None else stop - start
                data = os.pread(fd, size, start)
            finally:
                os.close(fd)
            return [(m, (start, data)) for m in members]

        with ThreadPoolExecutor(self.threads) as pool:
            return dict(item for found in pool.map(one, runs) for item in found)


class S3Source:
    """Stored objects under ``prefix`` of an obstore ``S3Store``, read by ranged gets, ``requests`` at once."""

    def __init__(self, store: Any, requests: int = 16):
        self.store, self.requests = store, requests

    def read_whole(self, key: str) -> bytes:
        import obstore

        return bytes(obstore.get(self.store, key).bytes())

    def exists(self, key: str) -> bool:
        import obstore

        try:
            obstore.head(self.store, key)
        except FileNotFoundError:
            return False
        return True

    def read_suffix(self, key: str, n: int) -> bytes:
        import obstore

        return bytes(obstore.get(self.store, key, options={"range": {"suffix": n}}).bytes())

    def read_runs(self, runs: list) -> dict[tuple[str, int], tuple[int, Any]]:
        import obstore

        def one(run: tuple) -> list[tuple[tuple[str, int], tuple[int, Any]]]:
            key, start, stop, members = run
            if stop is None:
                data = obstore.get(self.store, key).bytes()
            else:
                data = obstore.get_range(self.store, key, start=start, end=stop)
            return [(m, (start, data)) for m in members]

        with ThreadPoolExecutor(self.requests) as pool:
            return dict(item for found in pool.map(one, runs) for item in found)
