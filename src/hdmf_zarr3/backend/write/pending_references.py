"""References in appended rows whose target is added to the file by the same write.

In modes ``a`` and ``r+`` a table row is appended to the dataset read from the file the moment it is added
(HDMF appends to it; the row is held in memory until the next ``write()`` stores it, see
:mod:`.appended_rows`), but a container added at the same time (a new ``TimeSeries`` that the new epoch
points to) is written only by that ``write()``: when the row is appended its target has no place in the
file yet. Such a row is appended with a null reference (so the table keeps its length), and the reference
is filled in by ``write()`` once the rows and the target are stored. A row still waiting when the file
is closed without a write is undone with the rest of the changes since the last write, and the close
raises :class:`~hdmf_zarr3.errors.ReferenceError_`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hdmf.build import Builder, ReferenceBuilder
from hdmf.container import AbstractContainer

from ...errors import ReferenceError_
from .reference_targets import link_target

if TYPE_CHECKING:
    from hdmf.build import BuildManager, GroupBuilder

    from ...storage.handles import StoreHandle
    from ..datasets import DatasetChanges


@dataclass
class _Rows:
    dataset: DatasetChanges
    start: int
    rows: list[Any]
    targets: list[AbstractContainer]


def not_written_yet(obj: Any, root: GroupBuilder, manager: BuildManager | None) -> AbstractContainer | None:
    """The container ``obj`` refers to if it has no builder in this file yet (the next write builds it)."""
    if isinstance(obj, ReferenceBuilder):
        obj = obj.builder
    obj = link_target(obj)
    if not isinstance(obj, AbstractContainer) or manager is None:
        return None
    builder: Builder | None = manager.get_builder(obj)
    if builder is None:
        return obj
    top = builder
    while top.parent is not None:
        top = top.parent
    return obj if top is not root and builder.source is None else None


class PendingReferences:
    """Rows appended with references still to be filled in, in the order they were appended."""

    def __init__(self) -> None:
        self._rows: list[_Rows] = []

    def __bool__(self) -> bool:
        return bool(self._rows)

    def add(self, dataset: DatasetChanges, start: int, rows: list[Any], targets: list[AbstractContainer]) -> None:
        self._rows.append(_Rows(dataset, start, rows, targets))

    def clear(self) -> None:
        """Forget every waiting row (their appends were undone)."""
        self._rows.clear()

    def fill_in(self) -> None:
        """Store the references of every waiting row, now that the write stored their targets. A target the
        write did not store is an error naming the dataset and the row (the caller undoes the write)."""
        waiting, self._rows = self._rows, []
        for entry in waiting:
            try:
                entry.dataset.assign(slice(entry.start, entry.start + len(entry.rows)), entry.rows)
            except ReferenceError_ as exc:
                raise ReferenceError_(
                    f"rows {entry.start}..{entry.start + len(entry.rows) - 1} refer to "
                    f"{_describe(entry.targets)}, which this write did not store: add it to "
                    f"the file before writing ({exc})",
                    entry.dataset.path,
                ) from None

    def undo_if_waiting(self, handle: StoreHandle) -> None:
        """On a close without a write: if rows still wait, undo the changes since the last write and raise."""
        if not self._rows:
            return
        waiting = "; ".join(
            f"{e.dataset.path} rows {e.start}..{e.start + len(e.rows) - 1} refer to {_describe(e.targets)}"
            for e in self._rows
        )
        self._rows.clear()
        handle.rollback()
        raise ReferenceError_(
            f"closed without writing the containers that appended rows refer to ({waiting}); "
            "the changes since the last write were undone: call write() before closing",
            "/",
        )


def _describe(targets: list[AbstractContainer]) -> str:
    return ", ".join(f"{type(t).__name__} {getattr(t, 'name', '?')!r}" for t in targets)
