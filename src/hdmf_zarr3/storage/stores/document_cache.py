"""The node documents of one open store: read once, then kept current by the writes made through it."""

from __future__ import annotations

from typing import Any

from zarr.abc.store import Store

from ...format.documents import consolidated, limits


class DocumentCache:
    """Every node document of a store, by node path.

    Parameters
    ----------
    known : dict, optional
        The documents when already known (``{}`` for a file being created): the store is not read.
    root_bytes : bytes, optional
        The root ``zarr.json`` when it was already read (to learn that the file exists).
    """

    def __init__(self, known: dict[str, dict[str, Any]] | None = None, root_bytes: bytes | None = None):
        self._documents = known
        self._root_bytes = root_bytes

    @property
    def loaded(self) -> dict[str, dict[str, Any]] | None:
        """The documents if they were read (or given) already, else ``None``; nothing is read."""
        return self._documents

    def load(self, store: Store, use_consolidated: bool = True, where: str = "the file") -> dict[str, dict[str, Any]]:
        """The documents, read from ``store`` on first use.

        A consolidated root holds them all (one request) unless ``use_consolidated`` is false;
        otherwise the store is listed. A Zarr v2 store gives its v2 documents (see :mod:`.v2`).
        A consolidated root is one document, within its own limits; documents read one by one are
        charged to a :class:`~..format.documents.limits.MetadataBudget` of the file (``where``, in
        messages), so that together they cannot take unbounded memory either.
        """
        if self._documents is None:
            from . import v2
            from .nodes import check_document, parse_document, read_documents, read_root

            raw, self._root_bytes = self._root_bytes, None
            root = parse_document(raw, "/") if raw is not None else read_root(store)
            expanded = consolidated.expand(root, check_document) if root is not None and use_consolidated else None
            if expanded is not None:
                self._documents = expanded
            elif root is not None:
                self._documents = read_documents(store, limits.MetadataBudget(where))
            else:  # no Zarr v3 root: a Zarr v2 store (hdmf-zarr <= 0.13), or nothing
                self._documents = v2.read_documents(store, limits.MetadataBudget(where)) or {}
        return self._documents

    def replace(self, documents: dict[str, dict[str, Any]]) -> None:
        """Take ``documents`` as the store's (after an undo put them back there)."""
        self._documents = dict(documents)
