"""Changing a lazy dataset in place, as h5py does in modes ``r+`` and ``a``: assigning to a selection and
appending rows along the first axis. A :class:`DatasetChanges` belongs to one lazy dataset
(:class:`~hdmf_zarr3.backend.datasets.lazy.ZarrDataset`, which only reads and hands every change to it, as
xarray's lazy arrays leave writes to their store).

Every change keeps the chunks (and document) it rewrites first (``handle.preserve``), so an error that
leaves the ``with`` block, or a failed write, puts them back; the file is committed on close. Appended
rows are held in memory until the next ``write()`` or ``close()`` (see :mod:`.appended_rows`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ...errors import ModeError, UnsupportedDataError
from ...format.data import touched_cells
from ...format.documents import chunk_key
from ...format.layout import retyped_codecs
from ...format.vocabulary import ArrayView, key_separator, store_key
from ...integrations import h5py_lock_released
from ...storage.safety import store_failures
from ...storage.stores import ZARR_JSON, selection_write, sync
from ...storage.writes import RowAppend, row_appends

if TYPE_CHECKING:
    import zarr

    from ...format.vocabulary import StorageType
    from ...storage.handles import StoreHandle
    from ..contexts import DatasetContext, DatasetOwner

#: Rows appended to one dataset are held in memory up to this size, then stored (not committed) at once:
#: a long stream of appends (samples to a TimeSeries) before any write() keeps memory bounded.
HELD_BYTES = 64 * 2**20


class StoredArray(Protocol):
    """What :class:`DatasetChanges` needs of the lazy dataset it changes."""

    storage: StorageType

    @property
    def io(self) -> DatasetOwner: ...

    @property
    def path(self) -> str: ...

    @property
    def stored_document(self) -> dict[str, Any]: ...

    @property
    def array_view(self) -> ArrayView: ...

    @property
    def dataset(self) -> zarr.Array: ...

    def zarr_array(self) -> zarr.Array: ...

    def open_handle(self) -> StoreHandle: ...

    def document_changed(self, doc: dict[str, Any], storage: StorageType | None = None) -> None: ...

    def forget_values(self) -> None: ...


class DatasetChanges:
    """Assignment, ``append`` and ``extend`` of one lazy dataset, and the rows it holds until they are stored.

    Parameters
    ----------
    target : StoredArray
        The dataset changed (it reads; this object writes).
    context : DatasetContext
        What the dataset was given of its file (the open store, references, the io's held rows).
    """

    def __init__(self, target: StoredArray, context: DatasetContext) -> None:
        self._target = target
        self._context = context
        self._held: list[np.ndarray] = []  # rows appended and not stored yet, as encoded
        self.held_rows = 0  # how many (they count in the dataset's shape)
        self._held_bytes = 0  # their size in memory (stored once it reaches HELD_BYTES)

    @property
    def path(self) -> str:
        return self._target.path

    def _shape(self) -> tuple[int, ...]:
        shape = self._target.array_view.shape
        return (shape[0] + self.held_rows, *shape[1:]) if self.held_rows else shape

    def assign(self, key: Any, value: Any) -> None:
        """Store ``value`` at ``key`` now, as ``h5py.Dataset`` does. The chunks rewritten are kept first, so an
        error that leaves the ``with`` block (or a failed write) puts them back."""
        handle = self._context.require_handle()
        path, doc = self.path, self._target.stored_document
        if not handle.writable:
            raise ModeError(
                f"cannot change the data: the file is open in mode {self._target.io.mode!r} (use 'r+' or 'a')", path
            )
        separator = key_separator(doc)
        if doc.get("zarr_format") != 3 or separator is None:
            raise ModeError(
                "cannot change the data of a Zarr v2 array (hdmf-zarr <= 0.13) in place; convert the file first",
                path,
            )
        values = self._encode_values(value)
        with self._undone_on_failure():
            self.store()  # (rows appended before: stored first, so the shape below is the stored one)
        # (an IndexError or a ValueError here comes before anything is kept or written)
        cells = touched_cells(key, self._shape(), self._target.array_view.chunk_grid)
        orthogonal = (
            isinstance(key, (list, np.ndarray))
            or isinstance(key, tuple)
            and any(isinstance(k, (list, np.ndarray)) for k in key)
        )
        write = selection_write(self._target.dataset, key, values, orthogonal)
        with self._undone_on_failure():
            handle.preserve([store_key(path, chunk_key(cell, separator)) for cell in cells])
            self._target.forget_values()
            with h5py_lock_released():
                write()  # (zarr's writes all ended, finished or cancelled, when this returns or raises)
            handle.changed(path, self._target.stored_document)  # the document is unchanged; committed on close

    @contextlib.contextmanager
    def _undone_on_failure(self) -> Iterator[None]:
        """Undo what was changed since the last write if the block fails (a full disk, an I/O error, Ctrl-C)
        after the file may have been touched: the file goes back to what it was, as after a failed write,
        instead of being committed half changed by the close. The error is raised as ours, naming the file."""
        try:
            yield
        except BaseException as exc:
            self._context.undo_changes()
            error = store_failures.typed(exc, self._target.io.source, f"storing the change of {self.path} failed")
            if error is exc:
                raise
            raise error from exc

    @contextlib.contextmanager
    def _store_errors_typed(self) -> Iterator[None]:
        """An ``OSError`` of the store while a change is stored now (outside a write: an assignment, rows
        stored early) as our :class:`~hdmf_zarr3.errors.StoreError` naming the file, with its ``errno``. What
        was stored stays journaled: a failed write or the end of a ``with`` block undoes it, as any change."""
        try:
            yield
        except OSError as exc:
            error = store_failures.typed(exc, self._target.io.source, f"storing the change of {self.path} failed")
            if error is exc:
                raise
            raise error from exc

    def _encode_values(self, value: Any) -> Any:
        from ...format.data import encode_values

        storage = self._target.storage
        if storage.kind in ("numeric", "struct"):
            try:
                return np.asarray(value, dtype=storage.numpy_dtype)
            except (TypeError, ValueError, OverflowError) as exc:
                raise UnsupportedDataError(
                    f"cannot store {value!r} in a {storage.zarr_dtype} dataset: {exc}", self.path
                ) from None
        return encode_values(value, storage, self._context.reference_for_append, self.path)

    def widen_to_hold(self, value: int) -> None:
        """Make the stored integer type hold ``value`` (an index about to be appended): a type too narrow is
        replaced by the narrowest of its kind that holds it, as HDMF widens an index in memory. The array's
        document and every chunk are rewritten, all of them kept first (journaled, undone by an error as
        any change is); a type that cannot be widened is ``UnsupportedDataError`` naming the array."""
        dtype = np.dtype(self._target.storage.numpy_dtype)
        if dtype.kind in "iu" and 0 <= value <= np.iinfo(dtype).max:
            return
        path, doc = self.path, self._target.stored_document
        wider = [np.dtype(f"{dtype.kind}{n}") for n in (2, 4, 8) if dtype.kind in "iu" and n > dtype.itemsize]
        wider = [w for w in wider if value <= np.iinfo(w).max]
        if not wider or doc.get("zarr_format") != 3 or key_separator(doc) is None:
            raise UnsupportedDataError(
                f"cannot store the index {value} in this {dtype} array: its data type cannot be widened in place "
                "(a Zarr v2 array, or no integer type holds it); the table was not changed",
                path,
            )
        handle = self._context.require_handle()
        if not handle.writable:
            raise ModeError(f"cannot append: file opened in mode {self._target.io.mode!r}", path)
        self.store()  # the rows held so far, in the old type
        doc = self._target.stored_document
        values = np.asarray(self._target.zarr_array()[...]).astype(wider[0])
        from ...format.vocabulary import from_attribute

        storage = from_attribute(wider[0].name, wider[0].name, path)
        attributes = {**doc.get("attributes", {}), "zarr_dtype": wider[0].name}
        new = {**doc, "data_type": wider[0].name, "attributes": attributes}
        new["codecs"] = retyped_codecs(doc.get("codecs", []), storage)
        separator = key_separator(doc) or "/"
        cells = touched_cells(..., self._shape(), self._target.array_view.chunk_grid)
        handle.preserve([store_key(path, chunk_key(cell, separator)) for cell in cells])
        handle.put_documents({path: new}, self._context.names_dimensions)  # (keeps the old document first)
        self._target.document_changed(new, storage)
        with h5py_lock_released():  # (through our sync, as an assignment: zarr's writes end before any undo)
            selection_write(self._target.zarr_array(), ..., values, False)()
        handle.changed(path, new)

    # --- appending --------------------------------------------------------------------------
    def _encode_rows(self, values: list, waiting: list) -> np.ndarray:
        """Rows as stored; a reference to a container the next write adds is stored as null for now and its
        container listed in ``waiting`` (see :mod:`.pending_references`)."""
        from ...format.data import encode_values

        return encode_values(
            values, self._target.storage, lambda obj: self._context.reference_for_append(obj, waiting), self.path
        )

    def append(self, arg: Any) -> None:
        """Append one element (or row) along the first axis."""
        self.extend([arg])

    def extend(self, args: Any) -> None:
        """Append several elements along the first axis."""
        if not self._target.open_handle().writable:
            raise ModeError(f"cannot append: file opened in mode {self._target.io.mode!r}", self.path)
        self._target.zarr_array()  # (an array that cannot be appended to says so now, not at the write)
        rows, waiting = list(args), list[Any]()
        values = np.asarray(self._encode_rows(rows, waiting))
        shape = self._shape()
        if not shape or values.ndim != len(shape) or values.shape[1:] != shape[1:]:
            raise ValueError(
                f"{self.path}: cannot append rows of shape {values.shape[1:]} to a dataset of shape {shape}"
            )
        if not len(values):
            return
        self._held.append(values)  # stored by the next write() or close(), once (see .appended_rows)
        self.held_rows += len(values)
        self._held_bytes += values.nbytes
        self._context.appended_rows.holding(self)
        if waiting:
            self._context.pending_references.add(self, shape[0], rows, waiting)
        if self._held_bytes >= HELD_BYTES:  # a long stream of appends before any write: memory stays bounded
            with self._undone_on_failure():
                self.store()

    def store(self) -> None:
        """Store the rows appended since the last store, in one append (see :func:`store_appended_rows`)."""
        if self._held:
            with self._store_errors_typed():
                store_appended_rows([self])

    def take(self) -> RowAppend | None:
        """The rows held (as one block), taken out to be stored now; ``None`` if none are held."""
        if not self._held:
            return None
        blocks, self._held, self.held_rows, self._held_bytes = self._held, [], 0, 0
        self._context.appended_rows.stored(self)
        values = blocks[0] if len(blocks) == 1 else np.concatenate(blocks, axis=0)
        self._target.zarr_array()  # (a v2 array, or objects: refused as extend() refused it)
        return RowAppend(self.path, self._target.stored_document, values)

    def writable_handle(self) -> StoreHandle:
        """The open store of this dataset's file."""
        return self._target.open_handle()

    def append_through_zarr(self, values: np.ndarray) -> dict[str, Any]:
        """Append ``values`` with zarr itself (an array :mod:`...storage.writes.row_appends` does not handle);
        returns the new document."""
        array = self._target.zarr_array()
        # (through our sync: a Ctrl-C cancels and awaits zarr's writes, no shard is stored after the undo)
        sync(array.async_array.append(values, axis=0))
        return array.metadata.to_dict()

    def stored(self, doc: dict[str, Any]) -> None:
        """The appended rows are stored and ``doc`` is the array's document now."""
        self._target.document_changed(doc)
        self._target.open_handle().changed(self.path, doc)

    def drop(self) -> None:
        """Forget the rows appended and not stored (the session is undone)."""
        self._held, self.held_rows, self._held_bytes = [], 0, 0
        self._context.appended_rows.stored(self)


def store_appended_rows(datasets: Sequence[DatasetChanges]) -> None:
    """Store the rows held by ``datasets`` (of one file) together: the chunks (or shards) they land in and
    the documents that take the new shapes are journaled first, in one batch; the arrays
    :mod:`..storage.writes.row_appends` handles are then appended in two store rounds for all, the rest each
    through zarr."""
    taken = [(dataset, append) for dataset in datasets if (append := dataset.take()) is not None]
    if not taken:
        return
    handle = taken[0][0].writable_handle()
    handle.preserve(
        [
            key
            for _, a in taken
            for key in [*row_appends.touched_keys(a.path, a.doc, len(a.values)), store_key(a.path, ZARR_JSON)]
        ]
    )
    direct = [row_appends.can_append(a.doc) for _, a in taken]
    with h5py_lock_released():
        documents = iter(row_appends.append_rows(handle.store, [a for (_, a), d in zip(taken, direct) if d]))
        for (dataset, append), by_us in zip(taken, direct):
            dataset.stored(next(documents) if by_us else dataset.append_through_zarr(append.values))
