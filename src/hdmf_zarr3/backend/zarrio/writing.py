"""Writing and exporting a file: :class:`FileWriter`, the write half of :class:`~hdmf_zarr3.ZarrIO` (the work is
done by :class:`~.writer.BuilderWriter`, given a :class:`~hdmf_zarr3.backend.contexts.WriteContext`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hdmf.backends.io import HDMFIO
from hdmf.backends.utils import WriteStatusTracker
from hdmf.build import Builder, GroupBuilder
from hdmf.container import Container

from ...errors import ModeError, StoreError
from ...format.layout import Relayout
from ...storage.safety import refuse_self_overwrite, store_failures
from ...storage.stores import locations
from ..cached_specs import cache as spec_cache
from ..cached_specs import copying as spec_copy
from ..contexts import WriteContext, closed_files
from ..datasets import AppendedRows
from ..settings import bridge as dataio_bridge
from ..write import BuilderWriter, PendingReferences
from . import hdmf_zarr_api

if TYPE_CHECKING:
    from ...storage.handles import StoreHandle
    from ..contexts import DatasetOwner
    from ..write import VirtualOptions
    from .file_owner import FileOwner


@dataclass(frozen=True)
class BuilderWrite:
    """What one :meth:`ZarrIO.write_builder` asks for (its parameters, documented there; ``keywords``: its
    ``**kwargs``, hdmf-zarr's write keywords)."""

    link_data: bool
    export_source: str | None
    progress: bool
    relayout: Relayout | None
    virtual: VirtualOptions | None
    keywords: dict[str, Any]


class FileWriter:
    """``write``, ``write_builder`` and ``export`` of :class:`~hdmf_zarr3.ZarrIO`, and what is held between
    writes: the builders written, the appended rows and the references they wait for.

    Parameters
    ----------
    owner : DatasetOwner
        The io this writes for (its public face: ``source``, ``manager``).
    file : FileOwner
        The file written.
    chunk_key_separator : {"/", "."}, optional
        As given to :class:`~hdmf_zarr3.ZarrIO`.
    """

    def __init__(self, owner: DatasetOwner, file: FileOwner, chunk_key_separator: str | None) -> None:
        self.owner = owner
        self.file = file
        self.chunk_key_separator = chunk_key_separator
        self.written = WriteStatusTracker()
        self.pending_refs = PendingReferences()  # appended rows whose targets the next write adds
        self.appended_rows = AppendedRows()  # datasets holding appended rows the next write stores
        self.pending_dataio: dict[Any, Any] = {}  # the DataIO settings of the container being written
        self.consolidate = True  # hdmf-zarr's consolidate_metadata, as the last write_builder said

    def write(
        self, hdmf_write: Callable[..., None], container: Container, cache_spec: bool, write_args: dict[str, Any]
    ) -> None:
        """Write ``container`` through ``hdmf_write`` (HDMFIO's ``write`` of the io, which builds it and calls
        back :meth:`write_builder` with ``write_args``, see :meth:`ZarrIO.write`), then store the held rows,
        fill in references and commit."""
        self.file.file_mode.check_writable(self.owner.source)
        write_args = {key: value for key, value in write_args.items() if key != "expandable"}
        self.pending_dataio = dataio_bridge.collect(container)
        with self.undo_on_failure():
            try:
                with closed_files.during_build():  # HDMF's build probes arrays, also those of closed files
                    hdmf_write(container=container, **write_args)
            finally:
                self.pending_dataio = {}
            self.appended_rows.store()  # rows appended since the last write, once per dataset
            self.pending_refs.fill_in()
            if cache_spec:
                self.cache_spec()
            self.commit(self.file.require_open())

    def discard(self, handle: StoreHandle | None) -> None:
        """Forget the rows held and the references waiting, and undo what was changed since the last write."""
        self.pending_refs.clear()
        self.appended_rows.clear()
        if handle is not None:
            handle.rollback()

    @contextlib.contextmanager
    def undo_on_failure(self) -> Iterator[None]:
        """Run a write; if it fails, an append is undone (the file reads as before) and a new file stays
        marked incomplete."""
        try:
            yield
        except BaseException as exc:
            try:
                self.discard(self.file.handle)
            except BaseException as undo_error:  # (the store refused the undo too: a read-only file system)
                raise store_failures.with_undo_failure(exc, undo_error, self.owner.source) from exc
            error = store_failures.typed(exc, self.owner.source)
            if error is exc:
                raise
            raise error from exc

    def finish(self, handle: StoreHandle) -> None:
        """On close: store the rows held and commit; if that fails, undo it (an error of ours, naming the file)."""
        try:  # (the datasets store their rows through the open handle)
            if self.pending_refs:  # rows never completed are not stored with nulls: undone
                self.appended_rows.clear()
                self.pending_refs.undo_if_waiting(handle)
            self.appended_rows.store()  # rows appended since the last write, once per dataset
            self.commit(handle)  # consolidate what was changed since the last write (appends)
            self.consolidate = True  # (the file closed: a reopened one is consolidated unless told otherwise)
        except BaseException as exc:
            self.appended_rows.clear()
            try:
                handle.rollback()  # (nothing left to undo once the commit stored the complete root)
            except BaseException as undo_error:  # (the store refused the undo too: a read-only file system)
                raise store_failures.with_undo_failure(exc, undo_error, self.owner.source) from exc
            error = store_failures.typed(exc, self.owner.source)
            if error is exc:
                raise
            raise error from exc

    def store_held_rows(self) -> None:
        """At exit, never closed: rows held since the last write are stored, not committed (see
        :mod:`.appended_rows`)."""
        if self.file.handle is not None:
            self.appended_rows.store()

    def mark_written(self, builder: Builder) -> None:
        self.written.set_written(builder)

    def write_builder(self, builder: GroupBuilder, asked: BuilderWrite) -> None:
        """Write a GroupBuilder tree (the root of a file) to the file as ``asked`` (see
        :meth:`ZarrIO.write_builder`)."""
        closed_files.build_ended()  # the writer links to datasets of closed files; it never reads them
        handle = self.file.require_open()
        if not handle.writable:
            raise ModeError(f"cannot write in mode {self.file.mode!r}", "/")
        keywords = dict(asked.keywords)
        self.consolidate, parallel = hdmf_zarr_api.take_write_keywords(keywords)
        dataio = dataio_bridge.by_builder(self.pending_dataio, self.owner.manager)
        with self.undo_on_failure():
            BuilderWriter(
                self.write_context(),
                builder,
                self.file.pools,
                link_data=asked.link_data,
                export_source=asked.export_source,
                dataio=dataio,
                progress=asked.progress,
                relayout=asked.relayout,
                parallel=parallel,
                virtual=asked.virtual,
            ).write()

    def write_context(self) -> WriteContext:
        """What :class:`~.writer.BuilderWriter` is given of the io (the file must be open)."""
        handle = self.file.require_open()
        separator = self.chunk_key_separator
        if handle.nested_keys_only:  # icechunk: no depth limit to keep under, and "/" keys only
            if separator not in (None, "/"):
                raise StoreError(f"icechunk stores take '/'-separated chunk keys only, not {separator!r}", "/")
            separator = "/"
        file = self.file
        return WriteContext(
            handle=handle,
            source=self.owner.source,
            manager=self.owner.manager,
            convention=file.convention,
            chunk_key_separator=separator,
            documents=lambda: file.documents,
            storage_options=file.storage_options,
            mark_written=self.mark_written,
            is_written=self.written.get_written,
            names_dimensions=file.names_dimensions,
        )

    def commit(self, handle: StoreHandle) -> None:
        """Store the root, complete: consolidated unless the last ``write_builder`` said otherwise."""
        handle.commit(self.consolidate, self.file.names_dimensions)

    def cache_spec(self) -> None:
        spec_cache.cache_specifications(
            self.file.require_open(),
            self.owner.manager.namespace_catalog,
            self.file.convention.spec_attributes(),
            names_dimensions=self.file.names_dimensions,
        )

    def export(
        self,
        hdmf_export: Callable[..., None],
        src_io: HDMFIO,
        write_args: dict[str, Any],
        cache_spec: bool,
    ) -> None:
        """Export ``src_io`` through ``hdmf_export`` (HDMFIO's ``export`` of the io, given the container to
        export) into this new file, each builder written with ``write_args`` (see :meth:`ZarrIO.export`)."""
        source = self.owner.source
        self.file.file_mode.check_exportable(source)
        if src_io.source is not None and source is not None:
            refuse_self_overwrite(src_io.source, source)
        write_args = dict(write_args)
        hdmf_zarr_api.take_write_keywords(dict(write_args))  # refused before anything is written
        write_args["export_source"] = locations.absolute(src_io.source) if src_io.source is not None else None
        clear_cache = not write_args.get("link_data", True)
        with self.undo_on_failure():
            with closed_files.during_build():
                hdmf_export(src_io=src_io, write_args=write_args, clear_cache=clear_cache)
            if cache_spec:
                # the source's cached specifications, exactly (HDMF's way re-generates the loaded ones)
                spec_copy.cache_in_zarr(
                    self.owner,
                    src_io,
                    rebuilt=clear_cache,
                    attributes=self.file.convention.spec_attributes(),
                    names_dimensions=self.file.names_dimensions,
                )
            self.commit(self.file.require_open())
