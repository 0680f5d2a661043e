"""Reading a file and resolving what it refers to: the read half of :class:`~hdmf_zarr3.ZarrIO` (a mixin;
the tree is built by :class:`~.reader.BuilderReader`, given a :class:`~.contexts.ReadContext`, and the lazy
datasets are given a :class:`~.contexts.DatasetContext`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from hdmf.backends.errors import UnsupportedOperation
from hdmf.build import Builder, GroupBuilder
from hdmf.container import Container

from ...errors import CorruptStoreError, HdmfZarrError
from ...format.data import Reference
from ...format.documents import names as N
from ...integrations import dask_arrays
from ...storage.stores import CREATE_MODES, locations
from ..datasets import ZarrDataset
from ..read import BuilderReader, integrity
from ..write import ReferenceEncoder, not_written_yet
from .contexts import DatasetContext, ReadContext

if TYPE_CHECKING:
    from hdmf.backends.utils import WriteStatusTracker
    from hdmf.build import BuildManager

    from ...format.dialects import Dialect
    from ...storage.stores import StoreHandle
    from ..datasets import AppendedRows
    from ..read import ForeignFiles
    from ..write import PendingReferences
    from .contexts import DatasetOwner


class ReadingMixin:
    """``read``, ``read_builder`` and reference resolution of :class:`~hdmf_zarr3.ZarrIO` (what they use of it
    is declared below)."""

    _mode: str
    _handle: StoreHandle | None
    _dialect: Dialect | None
    _root: GroupBuilder | None
    _reader: BuilderReader | None
    _foreign: ForeignFiles | None
    _foreign_files: ForeignFiles
    _written_builders: WriteStatusTracker
    _pending_refs: PendingReferences
    _appended_rows: AppendedRows
    _dataset_context: DatasetContext | None

    if TYPE_CHECKING:

        @property
        def source(self) -> str | None: ...

        @property
        def manager(self) -> BuildManager: ...

        def _require_open(self) -> StoreHandle: ...

        def _open_dialect(self) -> Dialect: ...

    def read(self, dask: bool = False, **kwargs: Any) -> Container:
        """Read the file's container (lazily).

        Parameters
        ----------
        dask : bool
            Hand out numeric datasets of 64 MiB or more as dask arrays (one block per shard or
            chunk) instead of lazy h5py-like datasets. HDMF's containers accept no dask arrays, so
            they are swapped into the containers' fields once the containers are built.
        """
        self._check_readable()
        partial = self._partial()
        integrity.check_tree(self.read_builder(), self.manager.type_map, partial, self.source)
        try:
            container = super().read(**kwargs)  # type: ignore[misc]  # HDMFIO's, next in ZarrIO's order
        except HdmfZarrError:
            raise
        except Exception as exc:  # HDMF or PyNWB could not build a container from what a partial file holds
            if not partial:
                raise
            raise integrity.unbuildable(
                self.read_builder(), self.manager.type_map, self._require_open().incomplete(), exc
            ) from exc
        if dask:
            handle = self._require_open()
            dask_arrays.swap_in(container, handle.store, ZarrDataset, handle.life)
        return container

    def _partial(self) -> bool:
        """Whether the caller asked to read a file whose last write did not finish, and this is one."""
        handle = self._require_open()
        return handle.allow_incomplete and handle.incomplete() is not None

    def _check_readable(self) -> None:
        if self._mode in CREATE_MODES:
            raise UnsupportedOperation(
                f"Cannot read from file {self.source} in mode '{self._mode}'. Please use mode 'r', 'r+', or 'a'."
            )

    def read_builder(self) -> GroupBuilder:
        """The GroupBuilder tree of this file (read once; the same objects on every call)."""
        if self._root is None:
            self._require_open()
            reader = BuilderReader(self.read_context(), self._open_dialect())
            self._root = reader.read()
            self._reader = reader
        return self._root

    def read_context(self) -> ReadContext:
        """What :class:`~.reader.BuilderReader` is given of this io (the file must be open)."""
        return ReadContext(
            handle=self._require_open(),
            source=self.source,
            manager=self.manager,
            partial=self._partial,
            mark_written=self._mark_written,
            external_builder=self._external_builder,
            datasets=self.dataset_context,
        )

    @property
    def dataset_context(self) -> DatasetContext:
        """What the lazy datasets read from this file are given of it (:class:`~.contexts.DatasetContext`)."""
        if self._dataset_context is None:
            self._dataset_context = DatasetContext(
                owner=cast("DatasetOwner", self),  # a ZarrIO
                handle=lambda: self._handle,
                require_handle=self._require_open,
                dialect=self._read_dialect,
                resolve_reference=self._resolve_reference,
                reference_for_append=self._reference_for_append,
                pending_references=self._pending_refs,
                appended_rows=self._appended_rows,
            )
        return self._dataset_context

    def _read_dialect(self) -> Dialect:
        if self._dialect is None:  # (never once the file was opened: kept after close)
            self._require_open()
            raise UnsupportedOperation(f"Zarr file '{self.source}' was never opened")
        return self._dialect

    def _tree_reader(self) -> BuilderReader:
        """The reader of this file's tree, which is read first if it was not yet."""
        self.read_builder()
        return cast(BuilderReader, self._reader)

    def _mark_written(self, builder: Builder) -> None:
        self._written_builders.set_written(builder)

    def get_builder(self, obj: Any) -> Builder:
        """The builder read for a node, given its path or a dataset read from this file."""
        path = obj.path if isinstance(obj, ZarrDataset) else getattr(obj, "path", obj)
        if not isinstance(path, str):
            raise TypeError(f"expected a node path or a dataset of this file, got {type(obj).__name__}")
        found = self._tree_reader().built.get(N.normalize(path))
        if found is None:
            raise ValueError(f"{self.source}:{path} has not been built")
        return found

    def region_attribute(self, path: str, key: str) -> Any:
        """The region selection(s) held by attribute ``key`` of the node at ``path``.

        The attribute itself reads as the referenced object, as HDMF expects (and as HDF5IO gives it).
        """
        found = self._tree_reader().regions.get((N.normalize(path), key))
        if found is None:
            raise KeyError(f"{path}@{key} holds no region reference")
        return found

    def region_attribute_keys(self) -> list[tuple[str, str]]:
        """``(node path, attribute)`` of every attribute holding region references (see
        :meth:`region_attribute`), in the order they were read."""
        return list(self._tree_reader().regions)

    @property
    def tree_is_read(self) -> bool:
        """Whether the builder tree of this file has been read (or written) already."""
        return self._root is not None

    def builder_at(self, path: str) -> Builder | None:
        """The builder read for the node at ``path`` (normalized, as stored), ``None`` if there is none."""
        return self._tree_reader().built.get(path)

    def why_missing(self, target: str, where: str) -> str:
        """Why no group or dataset is at ``target``, the target of the link or reference at ``where``."""
        return self._tree_reader().why_missing(target, where)

    def share_foreign_files(self, foreign: ForeignFiles) -> None:
        """Resolve this file's links and references (into itself and into other files) through ``foreign``,
        the cache of the file that opened this one as a link target, so both hand out the same builders."""
        self._foreign = foreign

    def get_container(self, obj: Any) -> Container:
        return self.manager.construct(self.get_builder(obj))

    def _resolve_reference(self, ref: Reference, where: str) -> Builder:
        if self._foreign is not None and ref.is_internal and self.source is not None:
            found = self._foreign.node(locations.absolute(self.source), ref.path)
            if found is None:
                why = (
                    self._reader.why_missing(ref.path, where)
                    if self._reader is not None
                    else f"reference target {ref.path!r} does not exist"
                )
                raise CorruptStoreError(why, where)
            return found
        return self._tree_reader().resolve(ref, where)  # raises if missing

    def _external_builder(self, ref: Reference, where: str, missing_ok: bool = False) -> Builder | None:
        """Resolve a reference into another file (Zarr or HDF5), opened read-only next to this one."""
        foreign = self._foreign if self._foreign is not None else self._foreign_files
        return foreign.builder(ref, self._require_open().directory, where, missing_ok)

    def _reference_for_append(self, obj: Any, waiting: list[Any] | None = None) -> Reference | None:
        """The record of a reference stored in place; with ``waiting``, a container the next write adds is
        listed there and ``None`` returned (its row is filled in by that write, see :mod:`.pending_references`)."""
        root = self.read_builder()
        if waiting is not None:
            target = not_written_yet(obj, root, self.manager)
            if target is not None:
                waiting.append(target)
                return None
        return ReferenceEncoder(root, self.manager, self._require_open().directory)(obj)
