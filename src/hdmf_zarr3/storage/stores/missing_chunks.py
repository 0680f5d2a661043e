"""Readers refuse a missing chunk of an array that promises every chunk is stored.

A store asked for a key it does not hold answers ``None`` and zarr reads the fill value. For an array
marked by :mod:`..format.layout.stored_chunks` that answer means the chunk has gone missing (deleted, not yet
copied, or removed by a ``w`` replacing the file under this reader on an object store), so the stores a
reader opens (local directory, zip, object store) ask :class:`ChunkPromises` before they answer ``None``
and raise :class:`~hdmf_zarr3.CorruptStoreError` naming the array and the chunk instead.

Only readers check: a writer's store may be asked for a chunk it is about to store (zarr reads a chunk
before it writes part of it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import CorruptStoreError
from ...format.layout import all_chunks_stored, missing_is_damage
from ...format.vocabulary import ALL_CHUNKS_ATTR

#: The keys of an array document the check needs (what a copy of the store sent to another process keeps).
_KEPT = ("zarr_format", "node_type", "shape", "chunk_grid", "chunk_key_encoding")


class ChunkPromises:
    """The arrays of one file that store every chunk, by node path, from the documents its reader uses."""

    def __init__(self, documents: Mapping[str, Any] | None = None) -> None:
        self.documents = documents

    def check(self, key: str) -> None:
        """Raise :class:`CorruptStoreError` when ``key``, which the store does not hold, is a chunk of an
        array that stores every chunk; return quietly for any other key."""
        documents = self.documents
        if not documents:
            return
        parts = key.split("/")
        for i in range(len(parts) - 1, 0, -1):
            path = "/" + "/".join(parts[:i])
            doc = documents.get(path)
            if isinstance(doc, Mapping) and doc.get("node_type") == "array":
                chunk = "/".join(parts[i:])
                if missing_is_damage(doc, chunk):
                    raise CorruptStoreError(
                        f"chunk {chunk} is missing: every chunk of this array is stored ({ALL_CHUNKS_ATTR}), "
                        "so it was deleted after the file was written (or the file is being replaced)",
                        path,
                    )
                return

    def portable(self) -> ChunkPromises:
        """A copy holding only what the check needs, for a store sent to another process (dask)."""
        kept = {
            path: {**{k: doc[k] for k in _KEPT if k in doc}, "attributes": {ALL_CHUNKS_ATTR: True}}
            for path, doc in (self.documents or {}).items()
            if all_chunks_stored(doc)
        }
        return ChunkPromises(kept or None)
