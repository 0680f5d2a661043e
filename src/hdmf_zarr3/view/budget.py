"""What one request of the viewer may read: decided here, once, and checked from an array's metadata (its shape,
chunks and data type) before anything is read or allocated.

A file small on disk may declare a 40000 x 40000 image, a table of 2**28 rows or a chunk that decodes to
gigabytes. A request reads at most :data:`REQUEST_BYTES` of values at once (the pictures are read every n-th
pixel, to at most :data:`PICTURE_PIXELS`; a table page reads its rows; a window reads in tiles), reads at most
:data:`REQUEST_CHUNKS` chunks (a picture of an array of tiny chunks is read at a coarser stride), and decodes
no chunk of more than :data:`CHUNK_BYTES` (each thread decoding for it holds one at a time; the reader fetches
at most 8 stored objects at once). Chunks of files written by zarr's automatic chunking (at most 64 MiB) are
read; a file whose own chunks are larger (1.6 GB in one chunk) is not shown, rather than read. What is past the
budget is refused with a :class:`~hdmf_zarr3.errors.ViewRequestError` of status 413 naming the array and its
size, before it is read.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import ViewRequestError

#: Bytes of values one request reads and holds at once, at most.
REQUEST_BYTES = 64 * 2**20
#: Bytes one decoded chunk of an array a request reads may take, at most (zarr's largest automatic chunk is 64 MiB).
CHUNK_BYTES = 64 * 2**20
#: Pixels of a picture read and sent, at most: larger images, frames and masks are read every n-th pixel.
PICTURE_PIXELS = 2048 * 2048
#: Chunks one request may read, at most (each is a request to the store, a missing one too: a file of 2**28
#: one-row chunks must not make a window or a picture read millions of them).
REQUEST_CHUNKS = 4096
#: Bytes counted per element of variable length (text, references: a Python object and its pointer).
OBJECT_BYTES = 64
#: The HTTP status of a request past the budget ("content too large").
TOO_LARGE = 413


def item_bytes(data: Any) -> int:
    """Bytes one element of ``data`` takes once read (:data:`OBJECT_BYTES` for variable-length elements)."""
    declared = getattr(data, "dtype", None)
    try:
        dtype = np.dtype(declared if declared is not None else np.float64)
    except TypeError:  # an HDMF compound type (a list of fields): each field counted as an object
        return OBJECT_BYTES * max(1, len(declared) if isinstance(declared, list) else 1)
    if dtype.hasobject or dtype.itemsize == 0:
        return dtype.itemsize + OBJECT_BYTES
    return dtype.itemsize


def mebibytes(count: int) -> str:
    return f"{count / 2**20:.0f} MiB" if count >= 2**20 else f"{count} bytes"


def array_path(data: Any, fallback: str) -> str:
    """The node path of a lazy dataset (``/acquisition/x/data``), else ``fallback``."""
    path = getattr(data, "path", None)
    return "/" + path.strip("/") if isinstance(path, str) else fallback


def check_chunks(data: Any, path: str) -> None:
    """Refuse ``data`` if one of its chunks decodes to more than :data:`CHUNK_BYTES` (arrays already in memory,
    without chunks, pass)."""
    chunks = getattr(data, "chunks", None)
    if not chunks or not hasattr(data, "shape"):
        return
    size = math.prod(int(n) for n in chunks) * item_bytes(data)
    if size > CHUNK_BYTES:
        raise ViewRequestError(
            f"its chunks {tuple(int(n) for n in chunks)} decode to {mebibytes(size)} each: the viewer decodes "
            f"chunks of at most {mebibytes(CHUNK_BYTES)}",
            array_path(data, path),
            status=TOO_LARGE,
        )


def check_read(data: Any, elements: int, path: str, what: str = "values") -> None:
    """Refuse a read of ``elements`` elements of ``data`` past :data:`REQUEST_BYTES`, and any read of an array of
    chunks past :data:`CHUNK_BYTES`; both from the metadata, before reading."""
    check_chunks(data, path)
    size = int(elements) * item_bytes(data)
    if size > REQUEST_BYTES:
        raise ViewRequestError(
            f"{what} of {mebibytes(size)} are more than one request reads ({mebibytes(REQUEST_BYTES)})",
            array_path(data, path),
            status=TOO_LARGE,
        )


def touched_chunks(data: Any, spans: list[tuple[int, int]]) -> int:
    """How many chunks of ``data`` a selection reads at most: per axis, ``(span, selected)`` is the length of
    the range the selection covers and how many elements of it it selects (arrays without chunks: 0)."""
    chunks = getattr(data, "chunks", None)
    if not chunks or not hasattr(data, "shape"):
        return 0
    total = 1
    for (span, selected), chunk in zip(spans, chunks):
        total *= max(0, min(int(selected), -(-int(span) // max(1, int(chunk))) + 1))
    return total


def check_chunk_count(data: Any, spans: list[tuple[int, int]], path: str, what: str) -> None:
    """Refuse a selection (see :func:`touched_chunks`) that reads more than :data:`REQUEST_CHUNKS` chunks."""
    count = touched_chunks(data, spans)
    if count > REQUEST_CHUNKS:
        raise ViewRequestError(
            f"{what} would read {count} chunks: one request reads at most {REQUEST_CHUNKS}",
            array_path(data, path),
            status=TOO_LARGE,
        )


def picture_step(height: int, width: int) -> int:
    """The stride that reads a ``height`` x ``width`` picture as at most :data:`PICTURE_PIXELS` pixels."""
    pixels = max(int(height), 1) * max(int(width), 1)
    step = max(1, math.isqrt(pixels // PICTURE_PIXELS))
    while (-(-int(height) // step)) * (-(-int(width) // step)) > PICTURE_PIXELS:
        step += 1
    return step
