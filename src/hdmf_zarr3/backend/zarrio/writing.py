"""Writing and exporting a file: the write half of :class:`~hdmf_zarr3.ZarrIO` (a mixin; the work is done
by :class:`~.writer.BuilderWriter`, given a :class:`~.contexts.WriteContext`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from hdmf.backends.errors import UnsupportedOperation
from hdmf.backends.io import HDMFIO
from hdmf.build import Builder, GroupBuilder
from hdmf.container import Container

from ...errors import ModeError, StoreError
from ...format.layout import Relayout
from ...storage.safety import failures, refuse_self_overwrite
from ...storage.stores import locations
from ..settings import bridge as dataio_bridge
from ..specs import cache as spec_cache
from ..specs import copying as spec_copy
from ..write import BuilderWriter
from . import closed_files, hdmf_zarr_api
from .contexts import WriteContext

if TYPE_CHECKING:
    from hdmf.build import BuildManager

    from ...format.dialects import Convention
    from ...storage.stores import StoreHandle, WorkPools
    from ..datasets import AppendedRows
    from ..write import PendingReferences, VirtualOptions


class WritingMixin:
    """``write``, ``write_builder`` and ``export`` of :class:`~hdmf_zarr3.ZarrIO` (what they use of it is
    declared below)."""

    _mode: str
    _handle: StoreHandle | None
    _root: GroupBuilder | None
    _convention: Convention
    _chunk_key_separator: str | None
    _storage_options: dict[str, Any] | None
    _pending_refs: PendingReferences
    _appended_rows: AppendedRows
    _pending_dataio: dict[Any, Any]

    if TYPE_CHECKING:

        @property
        def source(self) -> str | None: ...

        @property
        def manager(self) -> BuildManager: ...

        @property
        def pools(self) -> WorkPools: ...

        @property
        def _documents(self) -> dict[str, dict[str, Any]]: ...

        def _require_open(self) -> StoreHandle: ...

        def _mark_written(self, builder: Builder) -> None: ...

        def get_written(self, builder: Builder, check_on_disk: bool = False) -> bool: ...

    def write(
        self,
        container: Container,
        cache_spec: bool = True,
        link_data: bool = True,
        exhaust_dci: bool = True,
        herd: Any = None,
        progress: bool = False,
        **kwargs: Any,
    ) -> None:
        """Write ``container`` (and everything below it) to this file (``kwargs``: see :meth:`write_builder`)."""
        if self._mode in ("r", "r-"):
            raise UnsupportedOperation(
                f"Cannot write to file {self.source} in mode {self._mode!r}. "
                "Please use mode 'r+', 'w', 'w-', 'x', or 'a'"
            )
        kwargs.pop("expandable", None)
        self._pending_dataio = dataio_bridge.collect(container)
        with self._undo_on_failure():
            try:
                with closed_files.during_build():  # HDMF's build probes arrays, also those of closed files
                    super().write(  # type: ignore[misc]  # HDMFIO's, next in ZarrIO's order
                        container=container,
                        herd=herd,
                        link_data=link_data,
                        exhaust_dci=exhaust_dci,
                        progress=progress,
                        **kwargs,
                    )
            finally:
                self._pending_dataio = {}
            self._appended_rows.store()  # rows appended since the last write, once per dataset
            self._pending_refs.fill_in()
            if cache_spec:
                self._cache_spec()
            self._require_open().commit()

    @contextlib.contextmanager
    def _undo_on_failure(self) -> Iterator[None]:
        """Run a write; if it fails, an append is undone (the file reads as before) and a new file stays
        marked incomplete."""
        try:
            yield
        except BaseException as exc:
            self._pending_refs.clear()
            self._appended_rows.clear()
            if self._handle is not None:
                self._handle.rollback()
            error = failures.typed(exc, self.source)
            if error is exc:
                raise
            raise error from exc

    def write_builder(
        self,
        builder: GroupBuilder,
        link_data: bool = True,
        exhaust_dci: bool = True,
        export_source: str | None = None,
        progress: bool = False,
        relayout: Relayout | None = None,
        virtual: VirtualOptions | None = None,
        **kwargs: Any,
    ) -> None:
        """Write a GroupBuilder tree (the root of a file) to this file.

        Parameters
        ----------
        builder : GroupBuilder
            The root of the tree.
        link_data : bool
            Link to datasets read from other Zarr files instead of copying them.
        exhaust_dci : bool
            Accepted for HDF5IO compatibility; iterators are always written in full.
        export_source : str, optional
            Path of the file being exported (set by :meth:`export`).
        progress : bool
            Show a progress bar while copying large datasets.
        relayout : Relayout, optional
            New chunks, shards or codecs for the datasets copied (see :func:`hdmf_zarr3.convert`).
        virtual : VirtualOptions, optional
            Read large datasets of this HDF5 source in place (``convert(..., virtual=True)``).
        **kwargs
            hdmf-zarr's ``consolidate_metadata`` (default True; False: the root without the other nodes'
            metadata inlined), ``number_of_jobs``, ``max_threads_per_process``, ``multiprocessing_context``
            (``number_of_jobs > 1``: pickleable ``GenericDataChunkIterator`` in worker processes, :mod:`.parallel`).
        """
        closed_files.build_ended()  # the writer links to datasets of closed files; it never reads them
        handle = self._require_open()
        if not handle.writable:
            raise ModeError(f"cannot write in mode {self._mode!r}", "/")
        parallel = hdmf_zarr_api.take_write_keywords(handle, kwargs)
        dataio = dataio_bridge.by_builder(getattr(self, "_pending_dataio", {}), self.manager)
        with self._undo_on_failure():
            BuilderWriter(
                self.write_context(),
                builder,
                self.pools,
                link_data=link_data,
                export_source=export_source,
                dataio=dataio,
                progress=progress,
                relayout=relayout,
                parallel=parallel,
                virtual=virtual,
            ).write()
        if self._root is None:
            self._root = builder

    def write_context(self) -> WriteContext:
        """What :class:`~.writer.BuilderWriter` is given of this io (the file must be open)."""
        handle = self._require_open()
        separator = self._chunk_key_separator
        if handle.nested_keys_only:  # icechunk: no depth limit to keep under, and "/" keys only
            if separator not in (None, "/"):
                raise StoreError(f"icechunk stores take '/'-separated chunk keys only, not {separator!r}", "/")
            separator = "/"
        return WriteContext(
            handle=handle,
            source=self.source,
            manager=self.manager,
            convention=self._convention,
            chunk_key_separator=separator,
            documents=lambda: self._documents,
            storage_options=self._storage_options,
            mark_written=self._mark_written,
            is_written=self.get_written,
        )

    def _cache_spec(self) -> None:
        spec_cache.cache_specifications(
            self._require_open(), self.manager.namespace_catalog, self._convention.spec_attributes()
        )

    def export(
        self,
        src_io: HDMFIO,
        container: Container | None = None,
        write_args: dict | None = None,
        cache_spec: bool = True,
        **kwargs: Any,
    ) -> None:
        """Export a file read by any HDMF backend into this (new) Zarr file (``kwargs``: see :meth:`write_builder`)."""
        if self._mode != "w":
            raise UnsupportedOperation(
                f"Cannot export to file {self.source} in mode '{self._mode}'. Please use mode 'w'."
            )
        if src_io.source is not None and self.source is not None:
            refuse_self_overwrite(src_io.source, self.source)
        write_args = {**(write_args or {}), **kwargs}
        hdmf_zarr_api.take_write_keywords(self._require_open(), dict(write_args))  # refused before anything is written
        write_args["export_source"] = locations.absolute(src_io.source) if src_io.source is not None else None
        clear_cache = not write_args.get("link_data", True)
        with self._undo_on_failure():
            with closed_files.during_build():
                HDMFIO.export(self, src_io=src_io, container=container, write_args=write_args, clear_cache=clear_cache)
            if cache_spec:
                # the source's cached specifications, exactly (HDMF's way re-generates the loaded ones)
                spec_copy.cache_in_zarr(
                    self, src_io, rebuilt=clear_cache, attributes=self._convention.spec_attributes()
                )
            self._require_open().commit()
