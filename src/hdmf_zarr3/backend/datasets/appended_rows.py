"""Rows appended to lazy datasets in modes ``a`` and ``r+``, held in memory until the next ``write()`` or
``close()`` stores them, once per dataset.

Storing each appended row at once (as HDF5 does) costs a store round per column and row here: the
last chunk of the array is read, rewritten and journaled, and its document rewritten, for every
``add_row``. Held in memory instead, a loop of ``add_row`` costs what encoding the rows costs, and the
write stores every dataset's new rows in one append (the chunks or shards they land in, and the
document, journaled first: :mod:`hdmf_zarr3.storage.safety.journal`). The dataset reads as if the rows were
stored (its shape counts them; a read that reaches them stores them first). An error that undoes the
session drops them, so the file stays as it was, byte for byte.

A writer never closed: at interpreter exit its held rows are stored as an ``add_row`` of an earlier
version stored them, without a commit (the file is left marked incomplete, ``allow_incomplete=True``
reads them and :func:`~hdmf_zarr3.recover` undoes them, as for any change not committed); when its io
is garbage collected instead (no write or close can follow), they are dropped with a ``RuntimeWarning``
that counts them (a finalizer may run on any thread, even zarr's own, where nothing can be stored).
"""

from __future__ import annotations

from .changes import DatasetChanges, store_appended_rows


class RowTally:
    """How many datasets hold appended rows (what a finalizer may refer to: nothing else of the io)."""

    def __init__(self) -> None:
        self.datasets = 0


class AppendedRows:
    """The datasets of one io that hold appended rows not stored yet, in the order they were appended."""

    def __init__(self) -> None:
        self._datasets: dict[int, DatasetChanges] = {}
        self.tally = RowTally()

    def __bool__(self) -> bool:
        return bool(self._datasets)

    def holding(self, dataset: DatasetChanges) -> None:
        """Note that ``dataset`` holds rows to store at the next :meth:`store`."""
        self._datasets.setdefault(id(dataset), dataset)
        self.tally.datasets = len(self._datasets)

    def stored(self, dataset: DatasetChanges) -> None:
        """Note that ``dataset`` stored (or dropped) its rows."""
        self._datasets.pop(id(dataset), None)
        self.tally.datasets = len(self._datasets)

    def store(self) -> None:
        """Store the rows of every dataset (before a commit)."""
        store_appended_rows(list(self._datasets.values()))  # (each leaves this list as its rows are taken)

    def clear(self) -> None:
        """Drop every held row (the session is undone)."""
        datasets, self._datasets = list(self._datasets.values()), {}
        self.tally.datasets = 0
        for dataset in datasets:
            dataset.drop()
