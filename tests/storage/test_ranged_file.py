"""BlockCachedFile: the file object h5py reads a remote HDF5 file's metadata through (virtual conversions
of S3 objects and web files). Every read returns the file's bytes; blocks read before are not fetched
again while kept; a read longer than the cache is fetched as it is."""

from __future__ import annotations

import io

import numpy as np

from hdmf_zarr3.storage.remote import ranged_file
from hdmf_zarr3.storage.remote.ranged_file import BLOCK, BlockCachedFile

DATA = np.random.default_rng(1).integers(0, 256, size=5 * BLOCK + 123, dtype=np.uint8).tobytes()


def _file(data: bytes = DATA) -> tuple[BlockCachedFile, list[tuple[int, int]]]:
    fetched: list[tuple[int, int]] = []

    def fetch(start: int, end: int) -> bytes:
        fetched.append((start, end))
        return data[start:end]

    return BlockCachedFile(fetch, len(data)), fetched


def test_reads_anywhere_return_the_files_bytes():
    f, _ = _file()
    rng = np.random.default_rng(2)
    for _ in range(300):
        start = int(rng.integers(0, len(DATA) + 10))
        size = int(rng.integers(0, 3 * BLOCK))
        f.seek(start)
        assert f.read(size) == DATA[start : start + size]
        assert f.tell() == (min(start + size, len(DATA)) if start < len(DATA) else start)
    f.seek(-5, io.SEEK_END)
    assert f.read() == DATA[-5:]
    buffer = bytearray(10)
    f.seek(BLOCK - 3)
    assert f.readinto(buffer) == 10 and bytes(buffer) == DATA[BLOCK - 3 : BLOCK + 7]


def test_back_and_forth_reads_fetch_each_block_once_in_one_range_per_read():
    f, fetched = _file()
    f.seek(BLOCK - 10)
    f.read(20)  # blocks 0 and 1, one range
    for where in (0, 100, BLOCK + 5, 50, BLOCK - 1):
        f.seek(where)
        f.read(8)
    assert fetched == [(0, 2 * BLOCK)]
    f.seek(4 * BLOCK)
    f.read()  # the last block runs to the end of the file
    assert fetched[-1] == (4 * BLOCK, len(DATA))


def test_the_least_recently_used_blocks_go_and_long_reads_are_not_kept(monkeypatch):
    monkeypatch.setattr(ranged_file, "KEPT", 2)
    f, fetched = _file()
    for block in (0, 1, 0, 2, 1):  # 1 is the least recently used when 2 comes
        f.seek(block * BLOCK)
        f.read(1)
    assert fetched == [(0, BLOCK), (BLOCK, 2 * BLOCK), (2 * BLOCK, 3 * BLOCK), (BLOCK, 2 * BLOCK)]
    f.seek(0)
    assert f.read(3 * BLOCK) == DATA[: 3 * BLOCK]  # longer than 2 blocks: one fetch of what was asked
    assert fetched[-1] == (0, 3 * BLOCK)
