"""Changing a lazy dataset in place, as h5py does in modes ``r+`` and ``a``: assigning to a selection and
appending rows along the first axis (a mixin of :class:`~hdmf_zarr3.backend.datasets.ZarrDataset`).

Every change keeps the chunks (and document) it rewrites first (``handle.preserve``), so an error that
leaves the ``with`` block, or a failed write, puts them back; the file is committed on close.
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


class InPlaceChanges:
    """Assignment, ``append`` and ``extend`` of a lazy dataset (what they need of it is declared below)."""

    _context: DatasetContext
    _path: str
    _doc: dict[str, Any]
    _cache: np.ndarray | None
    _decoder: Any
    storage: StorageType

    if TYPE_CHECKING:

        @property
        def io(self) -> DatasetOwner: ...

        @property
        def shape(self) -> tuple[int, ...]: ...

        @property
        def dataset(self) -> zarr.Array: ...

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
        rows, waiting = list(args), list[Any]()
        values = self._encode_rows(rows, waiting)
        start = self.shape[0]
        array = self.dataset
        self._cache = None
        handle = self._open_handle()
        # the chunks the rows land in and the document that takes the new shape
        handle.preserve(_rewritten_keys(self._path, self._doc, len(values)) + [store_key(self._path, "zarr.json")])
        array.append(values, axis=0)
        self._doc = array.metadata.to_dict()
        self._decoder = None  # its shape changed
        handle.changed(self._path, self._doc)
        if waiting:
            self._context.pending_references.add(cast("ZarrDataset", self), start, rows, waiting)


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
