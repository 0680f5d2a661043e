"""Arrays whose every chunk is stored: a chunk that is not there has gone missing.

Zarr lets a writer leave out a chunk that holds only the fill value, and every reader returns the fill
value for a chunk it does not find. A chunk deleted afterwards (by hand, by a sync tool, by a ``w``
replacing the file under a reader on an object store) therefore reads as the fill value, with no error.
Since format 1.2 our writer stores *every* chunk inside the shape of the arrays it writes whole, the
fill value's too, and marks each such array with the attribute :data:`~.names.ALL_CHUNKS_ATTR`
(``true``). For a marked array a chunk key inside its grid that the store does not hold is damage: our
reader raises ``CorruptStoreError`` naming the array and the key, and ``validate`` lists them.
zarr-python users get the same check with ``zarr.config.set({"array.read_missing_chunks": False})``.

Arrays without the attribute (files written before 1.2, other writers, arrays an iterator left gaps in,
virtual arrays whose source has unallocated chunks, chunkless scalars) read a missing chunk as the fill
value, as Zarr says. Pure rules: nothing here touches a store.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..vocabulary import ALL_CHUNKS_ATTR, key_separator


def all_chunks_stored(doc: Any) -> bool:
    """Whether the array document ``doc`` promises that every chunk inside its shape is stored."""
    if not isinstance(doc, Mapping) or doc.get("node_type") != "array":
        return False
    attributes = doc.get("attributes")
    return isinstance(attributes, Mapping) and attributes.get(ALL_CHUNKS_ATTR) is True


def marked(attributes: dict[str, Any]) -> dict[str, Any]:
    """``attributes`` with the promise that every chunk is stored."""
    return {**attributes, ALL_CHUNKS_ATTR: True}


def unmarked(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` without the promise (an array some of whose chunks are not stored)."""
    attributes = doc.get("attributes")
    if not isinstance(attributes, dict) or ALL_CHUNKS_ATTR not in attributes:
        return doc
    return {**doc, "attributes": {k: v for k, v in attributes.items() if k != ALL_CHUNKS_ATTR}}


def grid(doc: Mapping[str, Any]) -> tuple[int, ...]:
    """Chunks (storage objects: shards when sharded) along each axis of the array ``doc`` describes."""
    shape = doc["shape"]
    chunks = doc["chunk_grid"]["configuration"]["chunk_shape"]
    return tuple(math.ceil(int(s) / int(c)) for s, c in zip(shape, chunks))


def chunk_coords(doc: Mapping[str, Any], key: str) -> tuple[int, ...] | None:
    """The grid position a chunk ``key`` (relative to the array: ``c/0/1``) names, ``None`` for a key
    that is no chunk key of the array's ``default`` encoding."""
    separator = key_separator(dict(doc))
    if separator is None:
        return None
    parts = key.split(separator)
    if parts[0] != "c" or not all(p.isdigit() and p.isascii() for p in parts[1:]):
        return None
    return tuple(int(p) for p in parts[1:])


def missing_is_damage(doc: Mapping[str, Any], key: str) -> bool:
    """Whether a chunk ``key`` of the array ``doc`` that is not stored has gone missing."""
    if not all_chunks_stored(doc):
        return False
    try:
        coords, extent = chunk_coords(doc, key), grid(doc)
    except (KeyError, TypeError, ValueError, ZeroDivisionError):  # a document the reader refuses elsewhere
        return False
    return coords is not None and len(coords) == len(extent) and all(0 <= c < n for c, n in zip(coords, extent))


def missing_chunks(doc: Mapping[str, Any], stored: Iterable[str], first: int = 3) -> tuple[int, list[str]]:
    """``(how many, the first few keys)`` of the chunks of a marked array ``doc`` that are not among
    ``stored`` (its chunk keys relative to the array); ``(0, [])`` for an array without the promise.

    The cost is proportional to the keys stored, not to the grid (which may hold 2**40 chunks).
    """
    if not all_chunks_stored(doc):
        return 0, []
    extent = grid(doc)
    present = {c for c in (chunk_coords(doc, k) for k in stored) if c is not None}
    present = {c for c in present if len(c) == len(extent) and all(0 <= i < n for i, n in zip(c, extent))}
    count = math.prod(extent) - len(present)
    separator = key_separator(dict(doc)) or "/"
    names: list[str] = []
    if count:
        for coords in _positions(extent):
            if coords not in present:
                names.append(separator.join(["c", *map(str, coords)]))
                if len(names) == first:
                    break
    return count, names


def _positions(extent: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
    """Every position of a grid in C order, lazily (``itertools.product`` would first hold every range)."""
    if any(n <= 0 for n in extent):
        return
    coords = [0] * len(extent)
    while True:
        yield tuple(coords)
        axis = len(extent) - 1
        while axis >= 0:
            coords[axis] += 1
            if coords[axis] < extent[axis]:
                break
            coords[axis] = 0
            axis -= 1
        if axis < 0:
            return
