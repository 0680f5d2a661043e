"""What undoes the changes of one write session of an open store (see ``StoreHandle.will_change``)."""

from __future__ import annotations

from typing import Any

from zarr.abc.store import Store

from ...format.vocabulary import store_key
from ..stores import finish_cleanup
from .journal import Journal


class Rollback:
    """The documents before a session's first change, its incomplete-marker, and (for an append) the
    journal of what it overwrites. Empty between sessions."""

    def __init__(self) -> None:
        self._marker: dict[str, Any] | None = None
        self._snapshot: dict[str, dict[str, Any]] | None = None
        self._journal: Journal | None = None

    @property
    def active(self) -> bool:
        """Whether a session has begun (and neither ended nor been undone)."""
        return self._marker is not None

    @property
    def marker(self) -> dict[str, Any] | None:
        """The incomplete-marker the stored root carries during the session."""
        return self._marker

    @property
    def journaled(self) -> bool:
        """Whether the session's changes can be undone byte for byte (an append with a journal)."""
        return self._journal is not None

    def begin(
        self,
        documents: dict[str, dict[str, Any]],
        marker: dict[str, Any],
        store: Store | None = None,
        side: Store | None = None,
    ) -> None:
        """Start a session over ``documents``; a journal in ``store`` (beside it: ``side``) when given."""
        journal = Journal.begin(store, side=side) if store is not None else None  # (may fail: nothing begun)
        self._snapshot, self._marker, self._journal = dict(documents), marker, journal

    def creating(self, paths: list[str]) -> None:
        """Nodes about to be created (an undo removes them)."""
        if self._journal is not None:
            self._journal.creating(paths)

    def keep(self, keys: list[str]) -> None:
        """Store keys about to be overwritten (an undo puts their bytes, or their absence, back)."""
        if self._journal is not None:
            self._journal.keep(keys)

    def storing(self, paths: list[str], document_name: str) -> None:
        """Node documents about to be stored: existing ones are kept, new nodes noted as created."""
        snapshot = self._snapshot or {}
        self.keep([store_key(p, document_name) for p in paths if p in snapshot])
        self.creating([p for p in paths if p not in snapshot])

    def undo(self) -> dict[str, dict[str, Any]]:
        """Put the store back as it was (journaled sessions only) and return the documents it had then."""
        if self._journal is None:
            raise RuntimeError("a session without a journal cannot be undone")
        self._journal.undo()
        documents = self._snapshot or {}
        self.clear()
        return documents

    def drop(self) -> dict[str, dict[str, Any]]:
        """End a session whose changes the caller dropped itself (a zip's working copy): the documents it had
        before them."""
        documents = self._snapshot or {}
        self.clear()
        return documents

    def finish(self) -> None:
        """The session's changes are committed: the journal goes. From here on nothing is undone, whatever
        happens to the deletion: a Ctrl-C meanwhile is raised once the journal is deleted, and a deletion
        the disk refuses twice leaves a stale journal, which is never applied beside a complete root (the
        next writer or ``recover`` deletes it)."""
        journal = self._journal
        self.clear()
        if journal is None:
            return
        finish_cleanup(journal.finish)

    def clear(self) -> None:
        self._marker = self._snapshot = self._journal = None
