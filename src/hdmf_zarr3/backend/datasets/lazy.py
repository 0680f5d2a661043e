"""Lazy, h5py-like datasets handed to HDMF on read. They only read: assignment and appends, which HDMF and
h5py users call on the dataset, are handed to its :class:`~.changes.DatasetChanges`.

zarr-python 3 arrays differ from ``h5py.Dataset``: scalar indexing gives 0-d arrays, strings come
back as numpy ``StringDType``, and there is no ``len``. These wrappers give HDMF what it expects:
numpy scalars or ``str`` for single elements, object arrays of ``str`` for strings, ``len`` and
iteration, ``append``, and references resolved only when they are read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np
import zarr
from hdmf.query import HDMFDataset

from ...errors import ClosedFileError
from ...format.data import references as stored_references
from ...format.dialects import ArrayLayout
from ...format.vocabulary import ArrayView
from ...integrations import h5py_lock_released
from ...storage.codecs import UnitDecoder, basic_selection, read_key, read_picked
from ...storage.safety import LivingStore
from ...storage.stores import WorkPools, nodes
from .changes import DatasetChanges
from .zarr_array_info import SameArrayEquality, ZarrArrayInfo

if TYPE_CHECKING:
    from ...format.vocabulary import StorageType
    from ..contexts import DatasetContext, DatasetOwner

#: Arrays of one chunk up to this size are read whole on first access and then served from memory.
SMALL_BYTES = 1 << 20


class ZarrDataset(SameArrayEquality, ZarrArrayInfo, HDMFDataset):
    """A dataset of numbers, booleans, strings or numeric compounds, read chunk-wise on demand.

    Parameters
    ----------
    context : DatasetContext
        What the dataset needs of the file it was read from (:meth:`ZarrIO.dataset_context`).
    path, doc, layout
        The array's node path, its metadata document and its layout in the file's dialect.
    cache : ndarray, optional
        The whole content already read (kept by :meth:`invert`).
    """

    def __init__(
        self,
        context: DatasetContext,
        path: str,
        doc: dict[str, Any],
        layout: ArrayLayout,
        cache: np.ndarray | None = None,
    ):
        self._context = context
        self._path = path
        self._doc = doc
        self.layout = layout
        self.storage = layout.storage
        self._array: zarr.Array | None = None
        self._handed_out: zarr.Array | None = None  # the array of ``dataset`` (see there)
        self._cache: np.ndarray | None = cache  # whole content of a small single-chunk array
        self._decoder: UnitDecoder | bool | None = None  # False: zarr reads this array
        self._facts_of: tuple[dict[str, Any], ArrayView] | None = None
        self._changes: DatasetChanges | None = None  # made by the first change (see changes)

    # --- identity ---------------------------------------------------------------------------
    @property
    def io(self) -> DatasetOwner:
        """The io (a :class:`~hdmf_zarr3.ZarrIO`) this dataset was read by."""
        return self._context.owner

    @property
    def context(self) -> DatasetContext:
        """What this dataset was given of its file (handed on to the datasets made from it)."""
        return self._context

    @property
    def path(self) -> str:
        return self._path

    def open_handle(self) -> Any:
        """The open store of the file this dataset was read from (a closed file cannot be read)."""
        handle = self._context.handle()
        if handle is None:
            from ..contexts import handle_for

            handle = handle_for(self)  # HDMF building a container that links here (see closed_files)
        if handle is None:
            raise ClosedFileError(
                f"the file {self.io.source} was closed: read the data while it is open "
                "(e.g. inside its ``with`` block), or copy it out first",
                self._path,
            )
        return handle

    def forget_reads(self) -> None:
        """Drop what reads through a handle that is now closed left behind (arrays, decoders, values)."""
        self._array, self._decoder, self._cache, self._handed_out = None, None, None, None

    def forget_values(self) -> None:
        """Drop the values kept in memory (the stored ones are being changed)."""
        self._cache = None

    def document_changed(self, doc: dict[str, Any], storage: StorageType | None = None) -> None:
        """The array's document is ``doc`` now (rows were appended; with ``storage``, its elements were
        widened to that type): what was read of the old one goes."""
        self._doc = doc
        if storage is not None:
            self.storage = storage
            self.layout = dataclasses.replace(self.layout, storage=storage)
        self._array, self._decoder, self._cache = None, None, None  # (their shape changed)

    # --- changes, handed to DatasetChanges ----------------------------------------------------
    @property
    def changes(self) -> DatasetChanges:
        """What changes this dataset in place (made on first use)."""
        if self._changes is None:
            self._changes = DatasetChanges(self, self._context)
        return self._changes

    @property
    def appended_count(self) -> int:
        """Rows appended and not stored yet (they count in the shape)."""
        return self._changes.held_rows if self._changes is not None else 0

    def store_appended(self) -> None:
        """Store the rows appended and not stored yet, if any."""
        if self._changes is not None:
            self._changes.store()

    def __setitem__(self, key: Any, value: Any) -> None:
        """Store ``value`` at ``key`` now, as ``h5py.Dataset`` does (modes ``r+`` and ``a``)."""
        self.changes.assign(key, value)

    def widen_to_hold(self, value: int) -> None:
        """Make the stored integer type hold ``value``, rewriting the array if it is too narrow (an index
        of a ragged column about to pass its type's maximum: see :meth:`DatasetChanges.widen_to_hold`)."""
        self.changes.widen_to_hold(value)

    def append(self, arg: Any) -> None:
        """Append one element (or row) along the first axis (stored by the next write or close)."""
        self.changes.extend([arg])

    def extend(self, args: Any) -> None:
        """Append several elements along the first axis (stored by the next write or close)."""
        self.changes.extend(args)

    @property
    def name(self) -> str:
        return self._path

    @property
    def attrs(self) -> dict[str, Any]:
        return self._doc.get("attributes", {})

    @property
    def dataset(self) -> zarr.Array:
        """The underlying zarr array (created on first use, without a store round trip); rows appended
        and not stored yet are stored first. Kept past the io's ``close()``, it raises ``ClosedFileError``."""
        self.store_appended()
        self.zarr_array()  # (the checks: an array of objects has none, a closed file cannot be read)
        handle = self.open_handle()
        if self._handed_out is None:
            # zarr's array outlives the io: it reads through a store that asks the file's lifetime first
            self._handed_out = nodes.open_array(
                LivingStore(handle.store, handle.life, self._path), self._path, self._doc
            )
        return self._handed_out

    def zarr_array(self) -> zarr.Array:
        """The zarr array of the stored rows."""
        if self.layout.objects:
            from ...errors import CorruptStoreError

            raise CorruptStoreError(
                "an array of pickled or JSON-encoded objects (hdmf-zarr <= 0.13) has no zarr "
                "array; read it through this dataset",
                self._path,
            )
        handle = self.open_handle()  # every time: an array made while open must not read once closed
        if self._array is None:
            self._array = nodes.open_array(handle.store, self._path, self._doc)
        return self._array

    # --- shape and type ---------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        shape = self.array_view.shape
        if self.appended_count:  # rows appended and not stored yet count
            return (shape[0] + self.appended_count, *shape[1:])
        return shape

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def dtype(self) -> Any:
        return self.storage.numpy_dtype

    @property
    def chunks(self) -> tuple[int, ...]:
        """The read unit: the chunk shape (the inner chunks of a sharded array)."""
        return self.array_view.read_chunks

    @property
    def shards(self) -> tuple[int, ...] | None:
        """The shard shape (the unit of storage objects), or ``None`` when not sharded."""
        return self.array_view.shards

    @property
    def stored_document(self) -> dict[str, Any]:
        """The array's metadata document as stored now (rows held in memory not counted)."""
        return self._doc

    @property
    def document(self) -> dict[str, Any]:
        """The array's metadata document as stored (``zarr.json``, or ``.zarray`` for Zarr v2); rows appended
        and not stored yet are stored first."""
        self.store_appended()
        return self._doc

    @property
    def array_view(self) -> ArrayView:
        """The facts of :attr:`document` (chunks, shards, codecs, item size), read once per document."""
        cached = self._facts_of
        if cached is None or cached[0] is not self._doc:  # an append replaces the document
            cached = self._facts_of = (self._doc, ArrayView.from_document(self._doc))
        return cached[1]

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize  # as numpy counts it in memory (an object: one pointer)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a scalar dataset")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._path!r} shape={self.shape} zarr_dtype={self.storage.zarr_dtype!r}>"

    # --- reading ----------------------------------------------------------------------------
    def _small(self) -> bool:
        """One chunk of at most SMALL_BYTES: read once, then served from memory (tables, ids)."""
        shape = self.array_view.shape
        return (
            bool(shape)
            and int(np.prod(shape)) * self.array_view.itemsize <= SMALL_BYTES
            and all(s <= c for s, c in zip(shape, self.chunks))
        )

    def _raw(self, key: Any) -> Any:
        self.open_handle()  # values kept in memory (small arrays) are no more readable once closed
        if self.appended_count and not _within(key, self.array_view.shape):
            self.store_appended()  # the selection reaches rows appended and not stored yet
        orthogonal = isinstance(key, tuple) and any(isinstance(k, (list, np.ndarray)) for k in key)
        # Zarr v2 object arrays were decoded whole when the file was read; small arrays are read whole once
        if self.layout.objects or (not orthogonal and (self._cache is not None or self._small())):
            if self._cache is None:
                with h5py_lock_released():
                    whole = np.asarray(self.zarr_array()[...])  # (not 0-d: small arrays have a shape)
                self._cache = self._text(whole)
            res = self._cache[key]
            return res[()] if isinstance(res, np.ndarray) and res.ndim == 0 else res
        direct = self._direct_read(key)
        if direct is not None:
            return direct
        with h5py_lock_released():
            array = self.zarr_array()
            # zarr's own indexers cost the chunks a strided or fancy selection spans: only unit-step
            # basic selections are left to it, the others read the chunks they need (chunkwise)
            res = None if basic_selection(key, self.array_view.shape) else read_picked(array, key)
            if res is None:
                res = array.oindex[key] if isinstance(key, (list, np.ndarray)) or orthogonal else array[key]
        if isinstance(res, np.ndarray):
            res = self._text(res)
            if res.ndim == 0:
                res = res[()]
        elif isinstance(res, bytes) and self.storage.kind == "string":
            res = res.decode("utf-8")
        return res

    def _text(self, values: np.ndarray) -> np.ndarray:
        """Strings as an object array of ``str`` (zarr gives StringDType; Zarr v2 bytes give ``bytes``)."""
        if values.dtype.kind == "T":
            return values.astype(object)
        if values.dtype.kind == "O" and self.storage.kind == "string":
            flat = [v.decode("utf-8") if isinstance(v, bytes) else v for v in values.ravel().tolist()]
            return np.array(flat, dtype=object).reshape(values.shape)
        return values

    def stored_elements(self, key: Any) -> Any:
        """The elements at ``key`` as stored (references and regions undecoded), for copying them unchanged."""
        return self._raw(key)

    def prime(self, whole: np.ndarray) -> None:
        """Take the whole content of an array read ahead of time (small, or decoded only that way)."""
        if self.layout.objects or self._small():
            self._cache = self._text(whole)

    def _direct_read(self, key: Any) -> Any:
        """Numbers selected by slices of any step, integers and integer or boolean arrays, decoded without
        zarr's pipeline, only the chunks holding a selected element (``None``: not possible)."""
        handle = self.open_handle()
        if self._decoder is None:
            self._decoder = UnitDecoder.for_document(handle.store, self._path, self._doc) or False
        decoder = self._decoder
        if not isinstance(decoder, UnitDecoder):
            return None
        with h5py_lock_released(), self._pools() as pools:
            res = read_key(decoder, key, self.array_view.shape, pools)
        return res[()] if res is not None and res.ndim == 0 else res

    @contextmanager
    def _pools(self) -> Iterator[WorkPools]:
        """The io's thread pools; for a closed file read during a build (see closed_files), pools of
        this read alone, shut down when it ends."""
        if self.io.is_open():
            yield self.io.pools
        else:
            with WorkPools() as pools:
                yield pools

    def __getitem__(self, key: Any) -> Any:
        return self._convert(self._raw(key))

    def _convert(self, raw: Any) -> Any:
        return raw

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        arr = np.asarray(self._raw(Ellipsis) if self.ndim else self._raw(()))
        return arr.astype(dtype) if dtype is not None else arr

    def __iter__(self) -> Iterator[Any]:
        if not self.shape:
            raise TypeError("iteration over a scalar dataset")
        step = max(1, self.chunks[0])
        for start in range(0, self.shape[0], step):
            block = self[start : min(self.shape[0], start + step)]
            yield from block

    def __next__(self) -> Any:
        raise TypeError(f"{type(self).__name__} is not an iterator; use iter()")


def _within(key: Any, stored: tuple[int, ...]) -> bool:
    """Whether ``key`` selects only stored rows (of ``stored``, the stored shape), whatever the rows
    appended after them: a non-negative index or a slice with non-negative bounds below the stored
    length along the first axis (anything else may reach the appended rows)."""
    first = key[0] if isinstance(key, tuple) and key else key
    if isinstance(first, (int, np.integer)) and not isinstance(first, bool):
        return bool(0 <= first < stored[0])
    if isinstance(first, slice):
        start, stop, step = first.start or 0, first.stop, first.step or 1
        return bool(
            isinstance(start, (int, np.integer))
            and isinstance(stop, (int, np.integer))
            and 0 <= start
            and 0 <= stop <= stored[0]
            and step > 0
        )
    return False


class RegionSelection:
    """A region reference read back: its target and the selection, read only when asked for."""

    def __init__(self, target: Any, region: dict[str, Any]):
        self.target = target
        self.region = region

    def _array(self) -> Any:
        data = getattr(self.target, "data", self.target)
        if isinstance(data, RegionSelection):
            data = data[()]
        return data

    def __getitem__(self, key: Any) -> Any:
        values = np.asarray(stored_references.read_region(self._array(), self.region))
        return values[key]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        values = np.asarray(stored_references.read_region(self._array(), self.region))
        return values.astype(dtype) if dtype is not None else values

    def __repr__(self) -> str:
        name = getattr(self.target, "name", self.target)
        return f"<RegionSelection {name!r} {self.region}>"
