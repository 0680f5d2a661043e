"""Lazy, h5py-like datasets handed to HDMF on read.

zarr-python 3 arrays differ from ``h5py.Dataset``: scalar indexing gives 0-d arrays, strings come
back as numpy ``StringDType``, and there is no ``len``. These wrappers give HDMF what it expects:
numpy scalars or ``str`` for single elements, object arrays of ``str`` for strings, ``len`` and
iteration, ``append``, and references resolved only when they are read.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np
import zarr
from hdmf.query import BuilderResolver, ContainerResolver, HDMFDataset

from ..errors import ClosedFileError, ModeError, UnsupportedDataError
from ..format import dtypes as D
from ..format import references as R
from ..format.array_view import ArrayView
from ..format.dialects import ArrayLayout
from ..format.documents import chunk_key, key_separator
from ..format.names import store_key
from ..format.selection import touched_cells
from ..integrations.hdmf_shims import h5py_lock_released
from ..storage import nodes
from ..storage.direct_read import UnitDecoder, read_key
from ..storage.pools import WorkPools
from .dataset_info import SameArrayEquality, ZarrArrayInfo

if TYPE_CHECKING:
    from .io import ZarrIO

#: Arrays of one chunk up to this size are read whole on first access and then served from memory.
SMALL_BYTES = 1 << 20


class ZarrDataset(SameArrayEquality, ZarrArrayInfo, HDMFDataset):
    """A dataset of numbers, booleans, strings or numeric compounds, read chunk-wise on demand."""

    def __init__(self, io: ZarrIO, path: str, doc: dict[str, Any], layout: ArrayLayout):
        self._io = io
        self._path = path
        self._doc = doc
        self.layout = layout
        self.storage = layout.storage
        self._array: zarr.Array | None = None
        self._cache: np.ndarray | None = None  # whole content of a small single-chunk array
        self._decoder: UnitDecoder | bool | None = None  # False: zarr reads this array
        self._facts_of: tuple[dict[str, Any], ArrayView] | None = None

    # --- identity ---------------------------------------------------------------------------
    @property
    def io(self) -> ZarrIO:
        return self._io

    @property
    def path(self) -> str:
        return self._path

    def _open_handle(self) -> Any:
        """The open store of the file this dataset was read from (a closed file cannot be read)."""
        handle = self._io._handle
        if handle is None:
            from .closed_files import handle_for

            handle = handle_for(self)  # HDMF building a container that links here (see closed_reads)
        if handle is None:
            raise ClosedFileError(
                f"the file {self._io.source} was closed: read the data while it is open "
                "(e.g. inside its ``with`` block), or copy it out first",
                self._path,
            )
        return handle

    def _forget_reads(self) -> None:
        """Drop what reads through a handle that is now closed left behind (arrays, decoders, values)."""
        self._array, self._decoder, self._cache = None, None, None

    @property
    def name(self) -> str:
        return self._path

    @property
    def attrs(self) -> dict[str, Any]:
        return self._doc.get("attributes", {})

    @property
    def dataset(self) -> zarr.Array:
        """The underlying zarr array (created on first use, without a store round trip)."""
        if self.layout.objects:
            from ..errors import CorruptStoreError

            raise CorruptStoreError(
                "an array of pickled or JSON-encoded objects (hdmf-zarr <= 0.13) has no zarr "
                "array; read it through this dataset",
                self._path,
            )
        if self._array is None:
            self._array = nodes.open_array(self._open_handle().store, self._path, self._doc)
        return self._array

    # --- shape and type ---------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._facts.shape

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
        return self._facts.read_chunks

    @property
    def shards(self) -> tuple[int, ...] | None:
        """The shard shape (the unit of storage objects), or ``None`` when not sharded."""
        return self._facts.shards

    @property
    def document(self) -> dict[str, Any]:
        """The array's metadata document as stored (``zarr.json``, or ``.zarray`` for Zarr v2)."""
        return self._doc

    @property
    def _facts(self) -> ArrayView:
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
        return (
            bool(self.shape)
            and self.size * self._facts.itemsize <= SMALL_BYTES
            and all(s <= c for s, c in zip(self.shape, self.chunks))
        )

    def _raw(self, key: Any) -> Any:
        if self.layout.objects:  # decoded whole when the file was read (Zarr v2 object codecs)
            res = self._cache[key]
            return res[()] if isinstance(res, np.ndarray) and res.ndim == 0 else res
        orthogonal = isinstance(key, tuple) and any(isinstance(k, (list, np.ndarray)) for k in key)
        if not orthogonal and (self._cache is not None or self._small()):
            if self._cache is None:
                with h5py_lock_released():
                    whole = self.dataset[...]
                self._cache = self._text(whole)
            res = self._cache[key]
            return res[()] if isinstance(res, np.ndarray) and res.ndim == 0 else res
        direct = None if orthogonal else self._direct_read(key)
        if direct is not None:
            return direct
        with h5py_lock_released():
            res = self.dataset.oindex[key] if isinstance(key, (list, np.ndarray)) or orthogonal else self.dataset[key]
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

    def _prime(self, whole: np.ndarray) -> None:
        """Take the whole content of an array read ahead of time (small, or decoded only that way)."""
        if self.layout.objects or self._small():
            self._cache = self._text(whole)

    def _direct_read(self, key: Any) -> Any:
        """Numbers selected by slices and integers, decoded without zarr's pipeline (``None``: not possible)."""
        handle = self._open_handle()
        if self._decoder is None:
            self._decoder = UnitDecoder.for_document(handle.store, self._path, self._doc) or False
        if not self._decoder:
            return None
        with h5py_lock_released(), self._pools() as pools:
            res = read_key(self._decoder, key, self.shape, pools)
        return res[()] if res is not None and res.ndim == 0 else res

    @contextmanager
    def _pools(self) -> Iterator[WorkPools]:
        """The io's thread pools; for a closed file read during a build (see closed_reads), pools of
        this read alone, shut down when it ends."""
        if self._io.is_open():
            yield self._io.pools
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

    # --- changing in place (as h5py does in modes r+ and a) ------------------------------------
    def __setitem__(self, key: Any, value: Any) -> None:
        """Store ``value`` at ``key`` now, as ``h5py.Dataset`` does. The chunks rewritten are kept first, so an
        error that leaves the ``with`` block (or a failed write) puts them back."""
        handle = self._io._require_open()
        if not handle.writable:
            raise ModeError(
                f"cannot change the data: the file is open in mode {self._io.mode!r} (use 'r+' or 'a')", self._path
            )
        separator = key_separator(self._doc)
        if self._doc.get("zarr_format") != 3 or separator is None:
            raise ModeError(
                "cannot change the data of a Zarr v2 array (hdmf-zarr <= 0.13) in place; convert the file first",
                self._path,
            )
        values = self._encode_values(value)
        # (an IndexError here comes before anything is kept or written)
        cells = touched_cells(key, self.shape, self._facts.chunk_grid)
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
        return encode_values(value, self.storage, self._io._reference_for_append, self._path)

    # --- appending --------------------------------------------------------------------------
    def _encode_rows(self, values: list, waiting: list) -> np.ndarray:
        """Rows as stored; a reference to a container the next write adds is stored as null for now and its
        container listed in ``waiting`` (see :mod:`.pending_references`)."""
        from ..format.array_encoding import encode_values

        return encode_values(values, self.storage, lambda obj: self._io._reference_for_append(obj, waiting), self._path)

    def append(self, arg: Any) -> None:
        """Append one element (or row) along the first axis."""
        self.extend([arg])

    def extend(self, args: Any) -> None:
        """Append several elements along the first axis."""
        if not self._open_handle().writable:
            raise ModeError(f"cannot append: file opened in mode {self._io.mode!r}", self._path)
        rows, waiting = list(args), []
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
            self._io._pending_refs.add(self, start, rows, waiting)


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
        values = np.asarray(R.read_region(self._array(), self.region))
        return values[key]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        values = np.asarray(R.read_region(self._array(), self.region))
        return values.astype(dtype) if dtype is not None else values

    def __repr__(self) -> str:
        name = getattr(self.target, "name", self.target)
        return f"<RegionSelection {name!r} {self.region}>"


class _ResolvingDataset(ZarrDataset):
    """Shared by datasets whose elements hold references (resolved to builders or containers)."""

    _to_container = False

    def _resolve(self, ref: R.Reference | None) -> Any:
        if ref is None:
            return None
        builder = self._io._resolve_reference(ref, self._path)
        target = self._io.manager.construct(builder) if self._to_container else builder
        return RegionSelection(target, ref.region) if ref.region is not None else target

    def invert(self) -> _ResolvingDataset:
        cls = self.get_inverse_class()
        inverse = cls(self._io, self._path, self._doc, self.layout)
        inverse._cache = self._cache
        return inverse

    def resolve(self, manager: Any = None) -> Any:
        return self[:]


class _ReferenceDataset(_ResolvingDataset):
    @property
    def dtype(self) -> str:
        return str(self.storage.zarr_dtype)

    def _convert(self, raw: Any) -> Any:
        if isinstance(raw, np.ndarray):
            return [self._convert(x) for x in raw]
        return self._resolve(self._io._dialect.reference(raw, self.layout, self._path))


class BuilderReferenceDataset(_ReferenceDataset, BuilderResolver):
    """A dataset of object references whose elements read as Builders."""

    @classmethod
    def get_inverse_class(cls) -> type:
        return ContainerReferenceDataset


class ContainerReferenceDataset(_ReferenceDataset, ContainerResolver):
    """A dataset of object references whose elements read as Containers."""

    _to_container = True

    @classmethod
    def get_inverse_class(cls) -> type:
        return BuilderReferenceDataset


class _CompoundDataset(_ResolvingDataset):
    """A compound dataset stored as JSON rows. Rows read as h5py's do under HDMF's HDF5IO: one row is an
    ``np.void``, several a structured array; text fields hold ``str`` and reference fields the resolved
    builder (or container)."""

    @property
    def dtype(self) -> list[Any]:
        return [
            D.builder_dtype(D.for_compound(f.dtype)) if f.nested else f.dtype if f.dtype != D.TEXT else "utf8"
            for f in self.storage.fields
        ]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """Rows as a structured array (strings and references in object fields)."""
        out = self[:] if self.ndim else np.asarray(self[()])
        return out.astype(dtype) if dtype is not None else out

    def _convert(self, raw: Any) -> Any:
        if isinstance(raw, np.ndarray):
            out = np.empty(raw.shape, dtype=self.storage.row_dtype)
            for index, row in np.ndenumerate(raw):
                self._fill(out, index, row)
            return out
        out = np.empty((), dtype=self.storage.row_dtype)
        self._fill(out, (), raw)
        return out[()]

    def _fill(self, out: np.ndarray, index: tuple[int, ...], raw: Any) -> None:
        """Decode one stored row into ``out[index]``, field by field (a tuple assignment would let numpy
        unpack builders, which are dicts, into object fields)."""
        values = self._io._dialect.row(raw, self.layout, self._path)
        for field, value in zip(self.storage.fields, values):
            D.put_field(out[field.name], index, self._resolve_field(value, field), field)

    def _resolve_field(self, value: Any, field: D.Field) -> Any:
        """A field's value with its references resolved (in the fields of a compound field too)."""
        if field.nested:
            return tuple(self._resolve_field(v, f) for f, v in zip(field.dtype, value))
        if isinstance(value, R.Reference) or (value is None and field.dtype in D.REFERENCE_DTYPES):
            return self._resolve(value)
        return value


class BuilderCompoundDataset(_CompoundDataset, BuilderResolver):
    @classmethod
    def get_inverse_class(cls) -> type:
        return ContainerCompoundDataset


class ContainerCompoundDataset(_CompoundDataset, ContainerResolver):
    _to_container = True

    @classmethod
    def get_inverse_class(cls) -> type:
        return BuilderCompoundDataset


def wrap(io: ZarrIO, path: str, doc: dict[str, Any], layout: ArrayLayout) -> ZarrDataset:
    """The lazy dataset class for a stored array of the given layout."""
    if layout.storage.kind == "reference":
        return BuilderReferenceDataset(io, path, doc, layout)
    if layout.storage.kind == "rows":
        return BuilderCompoundDataset(io, path, doc, layout)
    return ZarrDataset(io, path, doc, layout)
