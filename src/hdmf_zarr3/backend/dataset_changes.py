"""Changing a lazy dataset in place, as h5py does in modes ``r+`` and ``a``: assigning to a selection and
appending rows along the first axis (a mixin of :class:`~hdmf_zarr3.backend.datasets.ZarrDataset`).

Every change keeps the chunks (and document) it rewrites first (``handle.preserve``), so an error that
leaves the ``with`` block, or a failed write, puts them back; the file is committed on close. Appended
rows are held in memory until the next ``write()`` or ``close()`` (see :mod:`.appended_rows`).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..errors import ModeError, UnsupportedDataError
from ..format.array_view import ArrayView
from ..format.documents import chunk_key, key_separator
from ..format.names import store_key
from ..format.selection import touched_cells
from ..integrations.h5py_lock import h5py_lock_released

if TYPE_CHECKING:
    import zarr

    from ..format.dtypes import StorageType
    from ..storage.stores import StoreHandle
    from .contexts import DatasetContext, DatasetOwner
    from .datasets import ZarrDataset

#: Rows appended to one dataset are held in memory up to this size, then stored (not committed) at once:
#: a long stream of appends (samples to a TimeSeries) before any write() keeps memory bounded.
HELD_BYTES = 64 * 2**20


class InPlaceChanges:
    """Assignment, ``append`` and ``extend`` of a lazy dataset (what they need of it is declared below)."""

    _context: DatasetContext
    _path: str
    _doc: dict[str, Any]
    _cache: np.ndarray | None
    _decoder: Any
    _appended: list[np.ndarray]  # rows appended and not stored yet, as encoded
    appended_count: int  # how many (they count in the shape)
    _appended_bytes: int  # their size in memory (stored once it reaches HELD_BYTES)
    storage: StorageType

    if TYPE_CHECKING:

        @property
        def io(self) -> DatasetOwner: ...

        @property
        def shape(self) -> tuple[int, ...]: ...

        @property
        def dataset(self) -> zarr.Array: ...

        def _zarr_array(self) -> zarr.Array: ...

        @property
        def array_view(self) -> ArrayView: ...

        def _open_handle(self) -> StoreHandle: ...

    def __setitem__(self, key: Any, value: Any) -> None:
        """Store ``value`` at ``key`` now, as ``h5py.Dataset`` does. The chunks rewritten are kept first, so an
        error that leaves the ``with`` block (or a failed write) puts them back."""
        handle = self._context.require_handle()
        if not handle.writable:
            raise ModeError(
                f"cannot change the data: the file is open in mode {self.io.mode!r} (use 'r+' or 'a')", self._path
            )
        separator = key_separator(self._doc)
        if self._doc.get("zarr_format") != 3 or separator is None:
            raise ModeError(
                "cannot change the data of a Zarr v2 array (hdmf-zarr <= 0.13) in place; convert the file first",
                self._path,
            )
        values = self._encode_values(value)
        self.store_appended()
        # (an IndexError here comes before anything is kept or written)
        cells = touched_cells(key, self.shape, self.array_view.chunk_grid)
        handle.preserve([store_key(self._path, chunk_key(cell, separator)) for cell in cells])
        orthogonal = (
            isinstance(key, (list, np.ndarray))
            or isinstance(key, tuple)
            and any(isinstance(k, (list, np.ndarray)) for k in key)
        )
        self._cache = None
        with h5py_lock_released():
            if orthogonal:
                self.dataset.oindex[key] = values
            else:
                self.dataset[key] = values
        handle.changed(self._path, self._doc)  # the document is unchanged; the file is committed on close

    def _encode_values(self, value: Any) -> Any:
        from ..format.array_encoding import encode_values

        if self.storage.kind in ("numeric", "struct"):
            try:
                return np.asarray(value, dtype=self.storage.numpy_dtype)
            except (TypeError, ValueError, OverflowError) as exc:
                raise UnsupportedDataError(
                    f"cannot store {value!r} in a {self.storage.zarr_dtype} dataset: {exc}", self._path
                ) from None
        return encode_values(value, self.storage, self._context.reference_for_append, self._path)

    # --- appending --------------------------------------------------------------------------
    def _encode_rows(self, values: list, waiting: list) -> np.ndarray:
        """Rows as stored; a reference to a container the next write adds is stored as null for now and its
        container listed in ``waiting`` (see :mod:`.pending_references`)."""
        from ..format.array_encoding import encode_values

        return encode_values(
            values, self.storage, lambda obj: self._context.reference_for_append(obj, waiting), self._path
        )

    def append(self, arg: Any) -> None:
        """Append one element (or row) along the first axis."""
        self.extend([arg])

    def extend(self, args: Any) -> None:
        """Append several elements along the first axis."""
        if not self._open_handle().writable:
            raise ModeError(f"cannot append: file opened in mode {self.io.mode!r}", self._path)
        self._zarr_array()  # (an array that cannot be appended to says so now, not at the write)
        rows, waiting = list(args), list[Any]()
        values = np.asarray(self._encode_rows(rows, waiting))
        shape = self.shape
        if not shape or values.ndim != len(shape) or values.shape[1:] != shape[1:]:
            raise ValueError(
                f"{self._path}: cannot append rows of shape {values.shape[1:]} to a dataset of shape {shape}"
            )
        if not len(values):
            return
        self._appended.append(values)  # stored by the next write() or close(), once (see .appended_rows)
        self.appended_count += len(values)
        self._appended_bytes += values.nbytes
        self._context.appended_rows.holding(self)
        if waiting:
            self._context.pending_references.add(cast("ZarrDataset", self), shape[0], rows, waiting)
        if self._appended_bytes >= HELD_BYTES:  # a long stream of appends before any write: memory stays bounded
            self.store_appended()

    def store_appended(self) -> None:
        """Store the rows appended since the last store, in one append: the chunks (or shards) they land
        in and the document that takes the new shape are journaled first."""
        if not self._appended:
            return
        blocks, self._appended, self.appended_count, self._appended_bytes = self._appended, [], 0, 0
        self._context.appended_rows.stored(self)
        values = blocks[0] if len(blocks) == 1 else np.concatenate(blocks, axis=0)
        array = self._zarr_array()
        self._cache = None
        handle = self._open_handle()
        handle.preserve(_rewritten_keys(self._path, self._doc, len(values)) + [store_key(self._path, "zarr.json")])
        with h5py_lock_released():
            array.append(values, axis=0)
        self._doc = array.metadata.to_dict()
        self._decoder = None  # its shape changed
        handle.changed(self._path, self._doc)

    def drop_appended(self) -> None:
        """Forget the rows appended and not stored (the session is undone)."""
        self._appended, self.appended_count, self._appended_bytes = [], 0, 0
        self._context.appended_rows.stored(self)


def _rewritten_keys(path: str, doc: dict[str, Any], rows: int) -> list[str]:
    """Store keys of the chunks (or shards) that appending ``rows`` along the first axis writes."""
    separator = key_separator(doc)
    shape = doc.get("shape") or []
    if separator is None or not shape or rows <= 0:
        return []
    grid = ArrayView.from_document(doc).chunk_grid
    first = range(shape[0] // grid[0], (shape[0] + rows - 1) // grid[0] + 1)
    rest = [range(max(1, -(-s // g))) for s, g in zip(shape[1:], grid[1:])]
    return [store_key(path, chunk_key(cell, separator)) for cell in itertools.product(first, *rest)]
