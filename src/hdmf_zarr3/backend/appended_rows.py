"""Rows appended to lazy datasets in modes ``a`` and ``r+``, held in memory until the next ``write()`` or
``close()`` stores them, once per dataset.

Storing each appended row at once (as HDF5 does) costs a store round per column and row here: the
last chunk of the array is read, rewritten and journaled, and its document rewritten, for every
``add_row``. Held in memory instead, a loop of ``add_row`` costs what encoding the rows costs, and the
write stores every dataset's new rows in one append (the chunks or shards they land in, and the
document, journaled first: :mod:`hdmf_zarr3.storage.journal`). The dataset reads as if the rows were
stored (its shape counts them; a read that reaches them stores them first). An error that undoes the
session drops them, so the file stays as it was, byte for byte.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .dataset_changes import InPlaceChanges


class AppendedRows:
    """The datasets of one io that hold appended rows not stored yet, in the order they were appended."""

    def __init__(self) -> None:
        self._datasets: dict[int, InPlaceChanges] = {}

    def __bool__(self) -> bool:
        return bool(self._datasets)

    def holding(self, dataset: InPlaceChanges) -> None:
        """Note that ``dataset`` holds rows to store at the next :meth:`store`."""
        self._datasets.setdefault(id(dataset), dataset)

    def stored(self, dataset: InPlaceChanges) -> None:
        """Note that ``dataset`` stored (or dropped) its rows."""
        self._datasets.pop(id(dataset), None)

    def store(self) -> None:
        """Store the rows of every dataset (before a commit)."""
        while self._datasets:
            dataset = self._datasets.pop(next(iter(self._datasets)))
            dataset.store_appended()

    def clear(self) -> None:
        """Drop every held row (the session is undone)."""
        datasets, self._datasets = list(self._datasets.values()), {}
        for dataset in datasets:
            dataset.drop_appended()
