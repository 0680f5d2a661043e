"""Rows appended along the first axis of several arrays at once, stored without zarr's per-array machinery.

Opening a file, adding one row to a table and closing it is how many pipelines log trials: each such
write appends a row to every column. Through ``zarr.Array.append`` each column costs its own rounds
(the document rewritten by the resize, then the last chunk read, decoded, merged, encoded and
written), one event-loop trip after another. Here every column of the write is done together: the
last, partly filled chunk of each array is read in one batch, the rows are placed into the chunks
they land in, those chunks are encoded with the same numcodecs implementations zarr uses
(:mod:`.chunks`), and the chunks and the arrays' new documents are stored in one more batch. On a
local store both batches run in the calling thread.

Only unsharded Zarr v3 arrays with ``default`` chunk keys and codecs :mod:`.chunks` implements are
done here (:func:`can_append`); the caller appends to any other through zarr. Nothing here keeps
the bytes it overwrites: the caller journals the keys :func:`touched_keys` names first.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from zarr.abc.store import Store

from ...format.documents import chunk_key
from ...format.vocabulary import ArrayView, key_separator, store_key
from ..stores import (
    DECODE_ERRORS,
    ZARR_JSON,
    bytes_to_bytes,
    decode_chunk,
    decode_error,
    dump_document,
    encode_chunk,
    get_keys,
    put_keys,
)


@dataclass(frozen=True)
class RowAppend:
    """Rows (``values``, as stored) to append to the array at ``path`` that ``doc`` describes."""

    path: str
    doc: dict[str, Any]
    values: np.ndarray


def can_append(doc: dict[str, Any]) -> bool:
    """Whether :func:`append_rows` stores rows appended to the array ``doc`` describes."""
    view = ArrayView.from_document(doc)
    if view.zarr_format != 3 or view.sharded or key_separator(doc) is None or not view.shape:
        return False
    codecs = view.codecs
    if not codecs or codecs[0].get("name") not in ("bytes", "vlen-utf8"):
        return False
    if codecs[0].get("name") == "bytes" and (codecs[0].get("configuration") or {}).get("endian", "little") != "little":
        return False
    return all(bytes_to_bytes(c) is not None for c in codecs[1:])


def grown(doc: dict[str, Any], rows: int) -> dict[str, Any]:
    """The document of the array ``doc`` describes once ``rows`` rows are appended."""
    shape = list(doc["shape"])
    return {**doc, "shape": [shape[0] + rows, *shape[1:]]}


def touched_keys(path: str, doc: dict[str, Any], rows: int) -> list[str]:
    """Store keys of the chunks appending ``rows`` rows to the array at ``path`` writes."""
    separator = key_separator(doc)
    if separator is None or not doc.get("shape") or rows <= 0:
        return []
    return [store_key(path, chunk_key(cell, separator)) for cell in _cells(doc, rows)]


def _cells(doc: dict[str, Any], rows: int) -> Iterator[tuple[int, ...]]:
    view = ArrayView.from_document(doc)
    shape, grid = view.shape, view.chunk_grid
    first = range(shape[0] // grid[0], (shape[0] + rows - 1) // grid[0] + 1)
    rest = [range(max(1, -(-s // g))) for s, g in zip(shape[1:], grid[1:])]
    return itertools.product(first, *rest)


def append_rows(store: Store, appends: list[RowAppend]) -> list[dict[str, Any]]:
    """Store the rows of each append (every array :func:`can_append`) and its document with the new
    shape; returns those documents, in order."""
    planned = [(a, list(_cells(a.doc, len(a.values))), key_separator(a.doc) or "/") for a in appends]
    # the chunks that hold rows already: those of the first row of chunks touched, when the last row is inside it
    partial = [
        (a, cell, store_key(a.path, chunk_key(cell, sep)))
        for a, cells, sep in planned
        if a.doc["shape"][0] % ArrayView.from_document(a.doc).chunk_grid[0]
        for cell in cells
        if cell[0] == cells[0][0]
    ]
    stored = get_keys(store, [key for _, _, key in partial])
    old = {(id(a), cell): raw for (a, cell, _), raw in zip(partial, stored)}
    writes: dict[str, bytes] = {}
    documents = []
    for append, cells, separator in planned:
        doc = grown(append.doc, len(append.values))
        for cell in cells:
            key = store_key(append.path, chunk_key(cell, separator))
            writes[key] = _chunk_bytes(append, doc, cell, old.get((id(append), cell)), key)
        writes[store_key(append.path, ZARR_JSON)] = dump_document(doc)
        documents.append(doc)
    put_keys(store, writes)
    return documents


def _chunk_bytes(append: RowAppend, doc: dict[str, Any], cell: tuple[int, ...], raw: bytes | None, key: str) -> bytes:
    """The stored bytes of chunk ``cell`` once the appended rows are in it (``raw``: its bytes before)."""
    try:
        chunk = decode_chunk(doc, raw)
    except DECODE_ERRORS as exc:
        raise decode_error(exc, append.path, f"chunk {key.rsplit('/', 1)[-1]}") from exc
    if chunk is None:  # (can_append checked the codecs)
        raise AssertionError(f"{append.path}: codecs not implemented")
    chunk = np.array(chunk, copy=True)  # (decoded from bytes: read-only)
    grid = ArrayView.from_document(doc).chunk_grid
    old_rows, new_shape = append.doc["shape"][0], doc["shape"]
    origin = [c * g for c, g in zip(cell, grid)]
    # the part of this chunk the new rows fill: rows [old_rows, new rows), clipped to the chunk and array
    start = max(old_rows, origin[0])
    stop = min(new_shape[0], origin[0] + grid[0])
    inside = [slice(start - origin[0], stop - origin[0])]
    source = [slice(start - old_rows, stop - old_rows)]
    for o, g, s in zip(origin[1:], grid[1:], new_shape[1:]):
        end = min(o + g, s)
        inside.append(slice(0, end - o))
        source.append(slice(o, end))
    chunk[tuple(inside)] = append.values[tuple(source)]
    encoded = encode_chunk(doc, chunk)
    if encoded is None:
        raise AssertionError(f"{append.path}: codecs not implemented")
    return encoded
