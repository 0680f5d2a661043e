"""``ZarrIO``: the HDMFIO backend for Zarr format v3. It orchestrates; the work lives in
:mod:`.writer`, :mod:`.reader`, :mod:`.spec_cache` and :mod:`..storage`."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hdmf.backends.errors import UnsupportedOperation
from hdmf.backends.io import HDMFIO
from hdmf.backends.utils import WriteStatusTracker
from hdmf.build import Builder, BuildManager, GroupBuilder, TypeMap
from hdmf.container import Container
from hdmf.spec import NamespaceCatalog
from zarr.abc.store import Store
from zarr.storage import LocalStore

from ..errors import CorruptStoreError, DialectError, HdmfZarrError, IncompleteFileError, ModeError
from ..format import completion, dialects
from ..format import documents as docs
from ..format import names as N
from ..format.dialects import Dialect
from ..format.dialects.native import NativeDialect
from ..format.references import Reference
from ..format.relayout import Relayout
from ..integrations import dask_arrays, hdmf_shims
from ..integrations.html import dataset_html
from ..storage import locations, locks
from ..storage.guarded import limit_reads
from ..storage.pools import WorkPools
from ..storage.remote import ready_store
from ..storage.self_overwrite import refuse_self_overwrite
from ..storage.stores import CREATE_MODES, StoreHandle, open_store
from . import closed_files, dataio_bridge, hdmf_zarr_api, integrity, spec_cache, spec_copy
from .datasets import ZarrDataset
from .externals import ForeignFiles
from .pending_references import PendingReferences, not_written_yet
from .reader import BuilderReader
from .reference_targets import ReferenceEncoder
from .writer import BuilderWriter


class ZarrIO(hdmf_zarr_api.HdmfZarrApi, HDMFIO):
    """Read and write HDMF files as Zarr format v3 stores.

    Parameters
    ----------
    path : str, Path or zarr Store
        Where the file lives: a local directory (created on write), a ``.zip`` file, a URL
        (``s3://``, ``gs://``, ``az://``, ``https://``) or any zarr ``Store``.
    mode : {"r", "r+", "a", "w", "w-", "x", "r-"}
        As for :class:`hdmf.backends.hdf5.HDF5IO`; ``"r-"`` (hdmf-zarr's) reads without the consolidated
        metadata, listing the store.
    manager : BuildManager or TypeMap, optional
        The build manager; a new one over an empty namespace catalog by default.
    herd_path : str, optional
        Path of a HERD (external resources) zip file to read or write alongside.
    storage_options : dict, optional
        Options of the object store a URL opens (obstore's: ``endpoint``, ``region``,
        ``access_key_id``, ``secret_access_key``, ``skip_signature``, ``client_options``, ...).
    convention : {"hdmf_zarr3", "hdmf-zarr"}
        How a new file is written: in this package's format (the default), or in hdmf-zarr 0.14's
        convention, for tools that read Zarr NWB files only through hdmf-zarr (``pynwb.read_nwb``,
        nwbinspector). Files are read in whichever convention they were written.
    allow_incomplete : bool
        Open a file whose last write or append did not finish (the writer crashed or was killed)
        and read what is there, instead of raising :class:`~hdmf_zarr3.IncompleteFileError`.
    external_roots : list of str or Path, optional
        Directories (or URL prefixes) that links and references into other files may point into,
        besides the directory holding this file (always allowed). A ``source`` that leads anywhere
        else (an absolute path, ``..``, a URL, a symlink out) raises
        :class:`~hdmf_zarr3.UnsafeLinkError` before anything is opened.
    chunk_key_separator : {"/", "."}
        How the chunk keys of arrays this object writes are joined (Zarr v3's ``default`` chunk key
        encoding). ``"/"`` (the default) nests one directory per axis (``data/c/0/0``); ``"."`` keeps
        them flat (``data/c.0.0``), which DANDI needs for 2-d or larger arrays deep in an NWB file
        (it accepts keys at most 7 levels deep; see ``hdmf-zarr3 check-dandi``).
    force_overwrite : bool
        With mode ``"w"``: delete a local file or directory at ``path`` that is not a Zarr file (an HDF5
        file, a directory of other files) instead of refusing it (hdmf-zarr's keyword).
    """

    def __init__(
        self,
        path: str | Path | Store | None = None,
        mode: str = "r",
        manager: BuildManager | TypeMap | None = None,
        herd_path: str | None = None,
        storage_options: dict[str, Any] | None = None,
        convention: str | None = None,
        allow_incomplete: bool = False,
        external_roots: list[str | Path] | None = None,
        chunk_key_separator: str = "/",
        force_overwrite: bool = False,
    ):
        hdmf_shims.activate(ZarrDataset)  # the hdmf/numcodecs shims, applied by the first ZarrIO made (see there)
        if chunk_key_separator not in docs.SEPARATORS:
            raise ValueError(f"chunk_key_separator must be one of {docs.SEPARATORS}, got {chunk_key_separator!r}")
        path = ready_store(path, mode)  # an obstore store or fsspec mapper: the zarr Store wrapping it
        if manager is None:
            manager = BuildManager(TypeMap(NamespaceCatalog()))
        elif isinstance(manager, TypeMap):
            manager = BuildManager(manager)
        hdmf_zarr_api.clear_for_overwrite(path, mode, force_overwrite)
        # HDMFIO.__init__ calls open(): everything open() needs is set first.
        self._path = path
        self._mode = mode
        self._storage_options = storage_options
        self._allow_incomplete = allow_incomplete
        self._chunk_key_separator = chunk_key_separator
        self._external_roots = None if external_roots is None else [os.fspath(r) for r in external_roots]
        self._handle: StoreHandle | None = None
        self._pools: WorkPools | None = None  # started on first use, shut down by close()
        self._dialect: Dialect | None = None
        self._convention = dialects.convention(convention)
        self._root: GroupBuilder | None = None
        self._reader: BuilderReader | None = None
        self._foreign_files = ForeignFiles(self)  # files this one links or refers into
        self._foreign: ForeignFiles | None = None  # set when this file was opened as another's target
        self._written_builders = WriteStatusTracker()
        self._pending_refs = PendingReferences()  # appended rows whose targets the next write adds
        if isinstance(path, Store):  # HDMF tells files apart by their source: name the store
            root = getattr(path, "root", None)
            source = os.path.abspath(root) if isinstance(path, LocalStore) and root is not None else str(path)
        else:
            source = None if path is None else locations.absolute(os.fspath(path))
        super().__init__(manager=manager, source=source, herd_path=herd_path)

    # --- lifecycle ----------------------------------------------------------------------------
    @property
    def mode(self) -> str:
        return self._mode

    @property
    def _file(self) -> StoreHandle | None:
        """The open store (what ``load_namespaces(file=...)`` accepts)."""
        return self._handle

    @property
    def file(self) -> StoreHandle | None:
        return self._handle

    def open(self) -> None:
        if self._handle is None:
            opened = getattr(self, "_opened", None)  # a handle a subclass already opened (NWBZarrIO)
            # ... and the dialect it detected there to load namespaces: detected once per open
            known = getattr(self, "_opened_dialect", None) if opened is not None else None
            self._handle = (
                opened
                if opened is not None
                else open_store(self._path, self._mode, self._storage_options, allow_incomplete=self._allow_incomplete)
            )
            self._opened = self._opened_dialect = None
            try:
                self._dialect = known if known is not None else _dialect_of(self._handle)
                if (
                    self._handle.documents()
                    and self._convention.name != dialects.Convention.name
                    and self._mode not in CREATE_MODES
                ):
                    raise ModeError(f"convention {self._convention.name!r} applies to new files only (modes w, w-, x)")
            except BaseException:
                self._handle, handle = None, self._handle
                handle.close()  # releases the write lock
                raise
            if self._handle.writable:  # never closed: its lock must not outlive it (nor a zip's working copy)
                locks.guard(self, self._handle.abandon)

    @property
    def pools(self) -> WorkPools:
        """The thread pools this io encodes, decodes and reads sources on (shut down by :meth:`close`)."""
        if self._handle is None:
            raise UnsupportedOperation(f"Cannot use the thread pools of closed Zarr file '{self.source}'")
        if self._pools is None:
            self._pools = WorkPools()
        return self._pools

    def close(self) -> None:
        locks.unguard(self)
        if getattr(self, "_foreign_files", None) is not None:
            self._foreign_files.close()
        pools, self._pools = getattr(self, "_pools", None), None
        if pools is not None:
            pools.close(wait=True)  # every write given to them is stored before the commit below
        if getattr(self, "_handle", None) is not None:
            handle, self._handle = self._handle, None
            try:
                self._pending_refs.undo_if_waiting(handle)  # rows never completed are not stored with nulls
                handle.commit()  # consolidate what was changed since the last write (appends)
            finally:
                handle.close()  # releases the write lock even if the commit failed

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        # An error inside ``with`` undoes what was changed since the last write (rows a table appended
        # on its own, say), as a failed write would: close() alone would commit it.
        if exc_type is not None and getattr(self, "_handle", None) is not None:
            self._pending_refs.clear()
            self._handle.rollback()
        self.close()

    def is_open(self) -> bool:
        return getattr(self, "_handle", None) is not None

    def _require_open(self) -> StoreHandle:
        if self._handle is None:
            raise UnsupportedOperation(f"Cannot access closed Zarr file '{self.source}'")
        return self._handle

    @property
    def dialect(self) -> str:
        """The convention the file was written in: ``"hdmf_zarr3"``, ``"hdmf-zarr 0.14"`` or
        ``"hdmf-zarr <=0.13 (Zarr v2)"``."""
        self._require_open()
        return self._dialect.name

    @property
    def _documents(self) -> dict[str, dict[str, Any]]:
        self._require_open()
        return self._dialect.documents

    @property
    def root_object_id(self) -> str | None:
        """The object id of the file's root; still known once the file is closed (a link to one of its
        datasets names it)."""
        if self._dialect is None:
            self._require_open()
        return self._dialect.documents.get("/", {}).get("attributes", {}).get("object_id")

    # --- namespaces ---------------------------------------------------------------------------
    @classmethod
    def load_namespaces(
        cls,
        namespace_catalog: NamespaceCatalog | TypeMap,
        path: str | Path | None = None,
        namespaces: list[str] | None = None,
        file: StoreHandle | None = None,
        **kwargs: Any,
    ) -> dict:
        """Load the namespaces cached in a file into ``namespace_catalog``.

        Extra keywords PyNWB passes for HDF5 (``driver``, ``aws_region``) are accepted and ignored.
        """
        kwargs.pop("driver", None)
        kwargs.pop("aws_region", None)
        io = kwargs.pop("io", None)
        if file is None and io is not None:
            file = io._file
        handle = (
            file
            if file is not None
            else open_store(
                path, "r", kwargs.pop("storage_options", None), allow_incomplete=kwargs.pop("allow_incomplete", False)
            )
        )
        return spec_cache.load_namespaces(handle, _dialect_of(handle).documents, namespace_catalog, namespaces)

    def load_namespaces_io(
        self, namespace_catalog: NamespaceCatalog | TypeMap, namespaces: list[str] | None = None
    ) -> dict:
        return spec_cache.load_namespaces(self._require_open(), self._documents, namespace_catalog, namespaces)

    @staticmethod
    def can_read(path: str | Path, storage_options: dict[str, Any] | None = None) -> bool:
        """True if ``path`` is an HDMF file in Zarr this package reads (any of its dialects)."""
        try:
            _dialect_of(open_store(path, "r", storage_options))
        except Exception:
            return False
        return True

    # --- writing ------------------------------------------------------------------------------
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
                    super().write(
                        container=container,
                        herd=herd,
                        link_data=link_data,
                        exhaust_dci=exhaust_dci,
                        progress=progress,
                        **kwargs,
                    )
            finally:
                self._pending_dataio = {}
            self._pending_refs.fill_in()
            if cache_spec:
                self._cache_spec()
            self._handle.commit()

    @contextlib.contextmanager
    def _undo_on_failure(self) -> Iterator[None]:
        """Run a write; if it fails, an append is undone (the file reads as before) and a new file stays
        marked incomplete."""
        try:
            yield
        except BaseException:
            self._pending_refs.clear()
            if self._handle is not None:
                self._handle.rollback()
            raise

    def write_builder(
        self,
        builder: GroupBuilder,
        link_data: bool = True,
        exhaust_dci: bool = True,
        export_source: str | None = None,
        progress: bool = False,
        relayout: Relayout | None = None,
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
                self,
                builder,
                self.pools,
                link_data=link_data,
                export_source=export_source,
                dataio=dataio,
                progress=progress,
                relayout=relayout,
                parallel=parallel,
            ).write()
        if self._root is None:
            self._root = builder

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
            self._handle.commit()

    @classmethod
    def export_io(
        cls,
        path: str | Path,
        src_io: HDMFIO,
        container: Container | None = None,
        write_args: dict | None = None,
        cache_spec: bool = True,
        **kwargs: Any,
    ) -> None:
        """Export ``src_io`` to a new Zarr file at ``path`` (convenience for :meth:`export`)."""
        with cls(path, mode="w", **kwargs) as io:
            io.export(src_io=src_io, container=container, write_args=write_args, cache_spec=cache_spec)

    # --- reading ------------------------------------------------------------------------------
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
            container = super().read(**kwargs)
        except HdmfZarrError:
            raise
        except Exception as exc:  # HDMF or PyNWB could not build a container from what a partial file holds
            if not partial:
                raise
            raise integrity.unbuildable(
                self.read_builder(), self.manager.type_map, self._handle.incomplete(), exc
            ) from exc
        if dask:
            dask_arrays.swap_in(container, self._require_open().store, ZarrDataset)
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
            reader = BuilderReader(self, self._dialect)
            self._root = reader.read()
            self._reader = reader
        return self._root

    def _mark_written(self, builder: Builder) -> None:
        self._written_builders.set_written(builder)

    def get_builder(self, obj: Any) -> Builder:
        """The builder read for a node, given its path or a dataset read from this file."""
        path = obj.path if isinstance(obj, ZarrDataset) else getattr(obj, "path", obj)
        if not isinstance(path, str):
            raise TypeError(f"expected a node path or a dataset of this file, got {type(obj).__name__}")
        self.read_builder()
        found = self._reader.built.get(N.normalize(path))
        if found is None:
            raise ValueError(f"{self.source}:{path} has not been built")
        return found

    def region_attribute(self, path: str, key: str) -> Any:
        """The region selection(s) held by attribute ``key`` of the node at ``path``.

        The attribute itself reads as the referenced object, as HDMF expects (and as HDF5IO gives it).
        """
        self.read_builder()
        found = self._reader.regions.get((N.normalize(path), key))
        if found is None:
            raise KeyError(f"{path}@{key} holds no region reference")
        return found

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
        self.read_builder()
        return self._reader.resolve(ref, where)

    def _external_builder(self, ref: Reference, where: str, missing_ok: bool = False) -> Builder | None:
        """Resolve a reference into another file (Zarr or HDF5), opened read-only next to this one."""
        foreign = self._foreign if self._foreign is not None else self._foreign_files
        return foreign.builder(ref, self._require_open().directory, where, missing_ok)

    def _reference_for_append(self, obj: Any, waiting: list | None = None) -> Reference | None:
        """The record of a reference stored in place; with ``waiting``, a container the next write adds is
        listed there and ``None`` returned (its row is filled in by that write, see :mod:`.pending_references`)."""
        root = self.read_builder()
        target = None if waiting is None else not_written_yet(obj, root, self.manager)
        if target is not None:
            waiting.append(target)
            return None
        return ReferenceEncoder(root, self.manager, self._require_open().directory)(obj)

    # --- display ------------------------------------------------------------------------------
    @staticmethod
    def generate_dataset_html(dataset: Any) -> str:
        """HTML table describing a dataset: shape, dtype, chunks, shards, codecs and sizes."""
        return dataset_html(dataset, ZarrDataset)


def _dialect_of(handle: StoreHandle) -> Dialect:
    """The dialect of an open file; a new (or empty) file is written in ours. Foreign dialects are
    read-only: changing one in place would mix conventions."""
    documents = handle.documents()
    limit_reads(handle.store, documents)  # no storage object is read beyond what its array allows
    if handle.mode in CREATE_MODES or not documents:
        return NativeDialect(documents)
    handle.check_complete()
    name = locations.basename(handle.location) if handle.location else None
    try:
        dialect = dialects.detect(documents, name, location=handle.location)
    except DialectError as exc:
        mark = handle.incomplete()
        if mark is None:
            raise
        raise IncompleteFileError(f"{completion.describe(mark)} before any HDMF node was stored", "/") from exc
    if handle.writable and not dialect.writable:
        raise ModeError(
            f"this file was written by {dialect.name}, which hdmf_zarr3 reads but does not change in "
            f"place; open it with mode 'r', or convert it first: hdmf_zarr3.convert(src, dst)",
            "/",
        )
    return dialect
