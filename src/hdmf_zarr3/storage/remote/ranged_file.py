"""A read-only file object over ranged reads of a remote file, for h5py to read an HDF5 file's metadata.

h5py reads metadata in small pieces, back and forth over the file (object headers, B-tree nodes, heaps).
A reader that keeps one buffer refetches it at every step back: converting a 4 MB file virtually
fetched 225 ranges of 1 MiB each. :class:`BlockCachedFile` keeps the last blocks it fetched
(:data:`BLOCK` bytes each, aligned; at most :data:`KEPT` of them) and fetches the blocks a read misses
in one range; a read longer than the cache holds is fetched as it is, and not kept.
"""

from __future__ import annotations

import io
from collections import OrderedDict
from collections.abc import Callable

#: Bytes of a block (reads are widened to whole blocks).
BLOCK = 1 << 18
#: Blocks kept (16 MiB).
KEPT = 64


class BlockCachedFile(io.RawIOBase):
    """The file of ``size`` bytes that ``fetch(start, end)`` reads the bytes ``[start, end)`` of.

    Parameters
    ----------
    fetch : callable
        Reads a byte range of the file (one request).
    size : int
        The file's size in bytes.
    """

    def __init__(self, fetch: Callable[[int, int], bytes], size: int) -> None:
        super().__init__()
        self._fetch, self._size, self._position = fetch, size, 0
        self._blocks: OrderedDict[int, bytes] = OrderedDict()

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._size}[whence]
        if base + offset < 0:
            raise ValueError("negative seek position")
        self._position = base + offset
        return self._position

    def read(self, size: int | None = -1) -> bytes:
        start = self._position
        end = self._size if size is None or size < 0 else min(self._size, start + size)
        if end <= start:
            return b""
        first, last = start // BLOCK, (end - 1) // BLOCK
        if last - first + 1 > KEPT:  # more than the cache holds: read it as it is
            data = self._fetch(start, end)
        else:
            self._load(first, last)
            data = b"".join(self._blocks[i] for i in range(first, last + 1))
            data = data[start - first * BLOCK : end - first * BLOCK]
        self._position = start + len(data)
        return data

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def _load(self, first: int, last: int) -> None:
        """Have blocks ``first`` to ``last`` in the cache, the missing ones fetched in one range."""
        missing = [i for i in range(first, last + 1) if i not in self._blocks]
        for i in range(first, last + 1):
            if i in self._blocks:
                self._blocks.move_to_end(i)
        if missing:
            low, high = missing[0] * BLOCK, min(self._size, (missing[-1] + 1) * BLOCK)
            data = self._fetch(low, high)
            for i in range(missing[0], missing[-1] + 1):
                if i not in self._blocks:
                    self._blocks[i] = data[(i - missing[0]) * BLOCK : (i - missing[0] + 1) * BLOCK]
        while len(self._blocks) > KEPT:  # the least recently used go (this read's blocks are the newest)
            self._blocks.popitem(last=False)
