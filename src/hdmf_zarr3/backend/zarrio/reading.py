"""Reading a file and resolving what it refers to: :class:`FileReader`, the read half of :class:`~hdmf_zarr3.ZarrIO` (
the tree is built by :class:`~.reader.BuilderReader`, given a
:class:`~hdmf_zarr3.backend.contexts.ReadContext`, and the lazy datasets are given a
:class:`~hdmf_zarr3.backend.contexts.DatasetContext`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from hdmf.build import Builder, GroupBuilder
from hdmf.container import Container

from ...errors import CorruptStoreError, HdmfZarrError
from ...format.data import Reference
from ...format.vocabulary import names as node_names
from ...integrations import dask_arrays
from ...storage.safety import audit
from ...storage.stores import locations
from ..contexts import DatasetContext, ReadContext
from ..datasets import ZarrDataset
from ..read import BuilderReader, construct_errors, integrity
from ..write import ReferenceEncoder, not_written_yet

if TYPE_CHECKING:
    from ..contexts import DatasetOwner
    from ..read import ForeignFiles
    from .file_owner import FileOwner
    from .writing import FileWriter


class FileReader:
    """``read``, ``read_builder`` and reference resolution of :class:`~hdmf_zarr3.ZarrIO`, and the tree read.

    Parameters
    ----------
    owner : DatasetOwner
        The io this reads for (its public face: ``source``, ``manager``; what ``dataset.io`` gives).
    file : FileOwner
        The file read.
    writer : FileWriter
        The io's writer: the builders marked written, the rows held and the references waiting, which
        the lazy datasets read from this file add to.
    foreign_files : ForeignFiles
        The files this one links or refers into.
    """

    def __init__(self, owner: DatasetOwner, file: FileOwner, writer: FileWriter, foreign_files: ForeignFiles) -> None:
        self.owner = owner
        self.file = file
        self.writer = writer
        self.foreign_files = foreign_files
        self.foreign: ForeignFiles | None = None  # set when this file was opened as another's target
        self.root: GroupBuilder | None = None
        self.tree: BuilderReader | None = None
        self.datasets: DatasetContext | None = None  # made on first use

    def read(self, hdmf_read: Callable[..., Container], dask: bool = False, **kwargs: Any) -> Container:
        """The file's container, built by ``hdmf_read`` (HDMFIO's ``read`` of the io, which calls back
        :meth:`read_builder`); see :meth:`ZarrIO.read`."""
        self.check_readable()
        partial = self.partial()
        source = self.owner.source
        try:
            integrity.check_tree(self.read_builder(), self.owner.manager.type_map, partial, source)
        except CorruptStoreError as exc:  # (read from the root's copy: a copy that disagrees is what is wrong)
            stale = self.stale_copy(exc)
            if stale is None:
                raise
            raise stale from exc
        try:
            container = hdmf_read(**kwargs)
        except HdmfZarrError:
            raise
        except Exception as exc:  # HDMF or PyNWB could not build a container: ours inside, or the content
            error = self.construct_failure(exc, partial)
            if error is None:
                raise
            raise error from exc
        if dask:
            handle = self.file.require_open()
            dask_arrays.swap_in(container, handle.store, ZarrDataset, handle.life)
        return container

    def stale_copy(self, exc: Exception) -> CorruptStoreError | None:
        """In a file read from the root's consolidated copy, a node whose own document disagrees with that copy
        (HDMF built from the copy: the disagreement, not HDMF's error ``exc``, is what is wrong); else ``None``."""
        handle = self.file.require_open()
        stale = audit.stale_copies(handle.store, handle.location) if handle.use_consolidated else []
        if not stale:
            return None
        path, message = stale[0]
        message = message.removeprefix(f"{path}: ").split("; reading uses the copy")[0]
        return CorruptStoreError(
            f"{message}; reading uses the root's consolidated copy, from which HDMF cannot build the file "
            f"({type(exc).__name__}: {str(exc)[-300:]}); zarr.consolidate_metadata rewrites the copy",
            path,
        )

    def construct_failure(self, exc: Exception, partial: bool) -> HdmfZarrError | None:
        """The error to raise for ``exc``, raised while HDMF built containers (``None``: ``exc`` itself): ours,
        if HDMF wrapped one of ours; in a ``partial`` file, what it lacks; else HDMF's refusal of a node's
        content as ours naming the node (see :mod:`~hdmf_zarr3.backend.read.construct_errors`)."""
        if construct_errors.ours_within(exc) is None:
            if partial:
                return integrity.unbuildable(
                    self.read_builder(), self.owner.manager.type_map, self.file.require_open().incomplete(), exc
                )
            stale = self.stale_copy(exc)  # (before HDMF's complaint: the disagreement is what is wrong)
            if stale is not None:
                return stale
        return construct_errors.typed(exc)

    def construct(self, builder: Builder) -> Container:
        """HDMF's container of ``builder`` (built once); what fails while HDMF builds it is our typed error
        naming the node (see :meth:`construct_failure`)."""
        try:
            return self.owner.manager.construct(builder)
        except HdmfZarrError:
            raise
        except Exception as exc:
            error = self.construct_failure(exc, partial=False)
            if error is None:
                raise
            raise error from exc

    def partial(self) -> bool:
        """Whether the caller asked to read a file whose last write did not finish, and this is one."""
        handle = self.file.require_open()
        return handle.allow_incomplete and handle.incomplete() is not None

    def check_readable(self) -> None:
        self.file.file_mode.check_readable(self.owner.source)

    def read_builder(self) -> GroupBuilder:
        """The GroupBuilder tree of this file (read once; the same objects on every call)."""
        if self.root is None:
            self.file.require_open()
            tree = BuilderReader(self.read_context(), self.file.open_dialect())
            self.root = tree.read()
            self.tree = tree
        return self.root

    def adopt_root(self, builder: GroupBuilder) -> None:
        """``builder`` was written as the root: it is the tree of the file unless one was read already."""
        if self.root is None:
            self.root = builder

    def read_context(self) -> ReadContext:
        """What :class:`~.reader.BuilderReader` is given of the io (the file must be open)."""
        return ReadContext(
            handle=self.file.require_open(),
            source=self.owner.source,
            manager=self.owner.manager,
            partial=self.partial,
            mark_written=self.writer.mark_written,
            external_builder=self.external_builder,
            datasets=self.dataset_context,
        )

    @property
    def dataset_context(self) -> DatasetContext:
        """What the lazy datasets read from this file are given of it
        (:class:`~hdmf_zarr3.backend.contexts.DatasetContext`)."""
        if self.datasets is None:
            file = self.file
            self.datasets = DatasetContext(
                owner=self.owner,
                handle=lambda: file.handle,
                require_handle=file.require_open,
                dialect=file.read_dialect,
                resolve_reference=self.resolve_reference,
                reference_for_append=self.reference_for_append,
                construct=self.construct,
                pending_references=self.writer.pending_refs,
                appended_rows=self.writer.appended_rows,
                undo_changes=lambda: self.writer.discard(file.handle),
                names_dimensions=file.names_dimensions,
            )
        return self.datasets

    def tree_reader(self) -> BuilderReader:
        """The reader of this file's tree, which is read first if it was not yet."""
        self.read_builder()
        return cast(BuilderReader, self.tree)

    def get_builder(self, obj: Any) -> Builder:
        """The builder read for a node, given its path or a dataset read from this file."""
        path = obj.path if isinstance(obj, ZarrDataset) else getattr(obj, "path", obj)
        if not isinstance(path, str):
            raise TypeError(f"expected a node path or a dataset of this file, got {type(obj).__name__}")
        found = self.tree_reader().built.get(node_names.normalize(path))
        if found is None:
            raise ValueError(f"{self.owner.source}:{path} has not been built")
        return found

    def region_attribute(self, path: str, key: str) -> Any:
        """The region selection(s) held by attribute ``key`` of the node at ``path``."""
        found = self.tree_reader().regions.get((node_names.normalize(path), key))
        if found is None:
            raise KeyError(f"{path}@{key} holds no region reference")
        return found

    def resolve_reference(self, ref: Reference, where: str) -> Builder:
        source = self.owner.source
        if self.foreign is not None and ref.is_internal and source is not None:
            found = self.foreign.node(locations.absolute(source), ref.path)
            if found is None:
                why = (
                    self.tree.why_missing(ref.path, where)
                    if self.tree is not None
                    else f"reference target {ref.path!r} does not exist"
                )
                raise CorruptStoreError(why, where)
            return found
        return self.tree_reader().resolve(ref, where)  # raises if missing

    def external_builder(self, ref: Reference, where: str, missing_ok: bool = False) -> Builder | None:
        """Resolve a reference into another file (Zarr or HDF5), opened read-only next to this one."""
        foreign = self.foreign if self.foreign is not None else self.foreign_files
        return foreign.builder(ref, self.file.require_open().directory, where, missing_ok)

    def reference_for_append(self, obj: Any, waiting: list[Any] | None = None) -> Reference | None:
        """The record of a reference stored in place; with ``waiting``, a container the next write adds is
        listed there and ``None`` returned (its row is filled in by that write, see :mod:`.pending_references`)."""
        root = self.read_builder()
        manager = self.owner.manager
        if waiting is not None:
            target = not_written_yet(obj, root, manager)
            if target is not None:
                waiting.append(target)
                return None
        return ReferenceEncoder(root, manager, self.file.require_open().directory)(obj)
