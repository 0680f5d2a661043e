"""What the writer, the reader and lazy datasets are given of the :class:`~hdmf_zarr3.ZarrIO` that made them.

Each gets a small frozen context holding what it needs and nothing more (the open store, the dialect or
convention, the document cache, a callable to mark builders written, callables that resolve references)
instead of the whole io, so none of them reads the io's private state and none imports the io module.
The io builds them (:meth:`ZarrIO.write_context`, ``read_context``, ``dataset_context``); state that
changes while a dataset lives (the open handle, the dialect) is handed over as a callable that reads it
when asked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from hdmf.build import Builder, BuildManager

    from ...format.data import Reference
    from ...format.dialects import Convention, Dialect
    from ...storage.handles import StoreHandle
    from ...storage.stores import WorkPools


class HeldRows(Protocol):
    """The io's list of datasets holding appended rows (:class:`~hdmf_zarr3.backend.datasets.AppendedRows`)."""

    def holding(self, changes: Any) -> None: ...

    def stored(self, changes: Any) -> None: ...


class HeldReferences(Protocol):
    """Appended rows whose references the next write fills in
    (:class:`~hdmf_zarr3.backend.write.PendingReferences`)."""

    def add(self, changes: Any, start: int, rows: list[Any], targets: list[Any]) -> None: ...


class DatasetOwner(Protocol):
    """The public face of the io a lazy dataset was read by (what ``dataset.io`` gives)."""

    @property
    def source(self) -> str | None: ...

    @property
    def mode(self) -> str: ...

    @property
    def manager(self) -> BuildManager: ...

    @property
    def pools(self) -> WorkPools: ...

    @property
    def root_object_id(self) -> str | None: ...

    def is_open(self) -> bool: ...


@dataclass(frozen=True)
class DatasetContext:
    """What a lazy dataset needs of the file it was read from.

    Attributes
    ----------
    owner : DatasetOwner
        The io that read it (``dataset.io``): its source, mode, manager and thread pools.
    handle : callable
        The open store of the file, or ``None`` once the file is closed.
    require_handle : callable
        The open store; raises hdmf's ``UnsupportedOperation`` when the file is closed.
    dialect : callable
        The dialect the file is read in (decodes reference elements and compound rows).
    resolve_reference : callable
        ``(reference, where) -> Builder``: the builder a stored reference points to.
    reference_for_append : callable
        ``(obj, waiting=None) -> Reference | None``: the record of a reference stored in place (see
        :meth:`FileReader.reference_for_append` of :mod:`.reading`).
    construct : callable
        ``builder -> Container``: HDMF's container of a builder, what fails meanwhile as our typed error
        (see :meth:`FileReader.construct` of :mod:`.reading`).
    pending_references : HeldReferences
        Appended rows whose reference targets the next write adds.
    appended_rows : HeldRows
        The datasets holding appended rows that the next write (or the close) stores.
    undo_changes : callable
        Undoes what was changed since the last write, as a failed write does (an in-place change that failed).
    names_dimensions : bool
        Whether documents stored name their arrays' dimensions (our convention; see ``StoreHandle.put_documents``).
    """

    owner: DatasetOwner
    handle: Callable[[], StoreHandle | None]
    require_handle: Callable[[], StoreHandle]
    dialect: Callable[[], Dialect]
    resolve_reference: Callable[[Reference, str], Builder]
    reference_for_append: Callable[..., Reference | None]
    construct: Callable[[Builder], Any]
    pending_references: HeldReferences
    appended_rows: HeldRows
    undo_changes: Callable[[], None]
    names_dimensions: bool


@dataclass(frozen=True)
class ReadContext:
    """What :class:`~hdmf_zarr3.backend.read.reader.BuilderReader` needs to build one file's tree.

    Attributes
    ----------
    handle : StoreHandle
        The open store.
    source : str or None
        The file's location (the ``source`` of every builder read).
    manager : BuildManager
        The io's build manager (its namespace catalog restores the dtypes of untyped attributes).
    partial : callable
        Whether the caller asked to read a file whose last write did not finish, and this is one.
    mark_written : callable
        Records a builder as read from (so written to) this file.
    external_builder : callable
        ``(reference, where, missing_ok) -> Builder | None``: the target of a reference into another file.
    datasets : DatasetContext
        Handed to every lazy dataset read.
    """

    handle: StoreHandle
    source: str | None
    manager: BuildManager
    partial: Callable[[], bool]
    mark_written: Callable[[Builder], None]
    external_builder: Callable[[Reference, str, bool], Builder | None]
    datasets: DatasetContext


@dataclass(frozen=True)
class WriteContext:
    """What :class:`~hdmf_zarr3.backend.write.writer.BuilderWriter` needs to write one builder tree.

    Attributes
    ----------
    handle : StoreHandle
        The open (writable) store.
    source : str or None
        The file's location (a dataset read from it is linked to, or written in place).
    manager : BuildManager
        The io's build manager.
    convention : Convention
        How builders are spelled in Zarr (this package's convention or hdmf-zarr's).
    chunk_key_separator : str or None
        ``"/"`` or ``"."``: how the chunk keys of the arrays written are joined; ``None``: by the
        layout policy, array by array (:func:`.layout_policy.chunk_key_separator`).
    documents : callable
        The node documents of the file as read (the root's cached-specification attribute is kept).
    storage_options : dict or None
        Options of the object store, to open other Zarr files the tree was read from.
    mark_written : callable
        Records a builder as written to this file.
    is_written : callable
        Whether a builder was written to (or read from) this file already.
    names_dimensions : bool
        Whether documents stored name their arrays' dimensions (our convention; see ``StoreHandle.put_documents``).
    """

    handle: StoreHandle
    source: str | None
    manager: BuildManager
    convention: Convention
    chunk_key_separator: str | None
    documents: Callable[[], dict[str, dict[str, Any]]]
    storage_options: dict[str, Any] | None
    mark_written: Callable[[Builder], None]
    is_written: Callable[[Builder], bool]
    names_dimensions: bool


class ForeignZarrFile(Protocol):
    """A Zarr file opened as the target of another file's links and references (a read-only ZarrIO),
    as :class:`~hdmf_zarr3.backend.read.externals.ForeignFiles` uses it."""

    @property
    def tree_is_read(self) -> bool: ...

    def read_builder(self) -> Any: ...

    def builder_at(self, path: str) -> Builder | None: ...

    def why_missing(self, target: str, where: str) -> str: ...

    def close(self) -> None: ...
