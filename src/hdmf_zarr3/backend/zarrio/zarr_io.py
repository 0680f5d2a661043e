"""``ZarrIO``: the HDMFIO backend for Zarr format v3, one class that reads as a table of contents. Its state
lives in collaborators made in ``__init__``, each owning its fields: :class:`~.file_owner.FileOwner` (the open
store, its dialect, the pools), :class:`~.reading.FileReader`, :class:`~.writing.FileWriter` and
:class:`~.hdmf_zarr_api.HdmfZarrApi` (hdmf-zarr 0.14's extra methods); its methods delegate to them. The
writer, the reader and the lazy datasets are handed explicit contexts (:mod:`hdmf_zarr3.backend.contexts`)."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path
from typing import Any, cast

from hdmf.backends.io import HDMFIO
from hdmf.build import Builder, BuildManager, GroupBuilder, TypeMap
from hdmf.container import Container
from hdmf.spec import NamespaceCatalog
from zarr.abc.store import Store
from zarr.storage import LocalStore

from ...format import dialects
from ...format.documents import zarr_json as docs
from ...format.layout import Relayout
from ...format.specs import layout as spec_layout
from ...integrations import dataset_html, hdmf_shims
from ...storage.remote import ready_store
from ...storage.safety import failures, locks
from ...storage.stores import StoreHandle, WorkPools, locations, open_store
from ..cached_specs import cache as spec_cache
from ..contexts import DatasetContext, DatasetOwner, ReadContext, WriteContext
from ..datasets import ZarrDataset
from ..read import ForeignFiles
from ..write import VirtualOptions
from . import hdmf_zarr_api
from .file_owner import FileOwner, abandon_unclosed, dialect_of
from .reading import FileReader
from .writing import FileWriter


class ZarrIO(HDMFIO):
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
    chunk_key_separator : {"/", "."}, optional
        How the chunk keys of arrays this object writes are joined (Zarr v3's ``default`` chunk key
        encoding). ``"/"`` nests one directory per axis (``data/c/0/0``); ``"."`` keeps them flat
        (``data/c.0.0``). By default each array gets ``"/"`` unless its keys would then be more than
        7 levels deep, the most DANDI accepts (a 2-d array deep in an NWB file), and ``"."`` if so
        (:func:`hdmf_zarr3.format.layout.policy.chunk_key_separator`; see ``hdmf-zarr3 check-dandi``).
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
        chunk_key_separator: str | None = None,
        force_overwrite: bool = False,
    ):
        hdmf_shims.activate(ZarrDataset)  # the hdmf/numcodecs shims, applied by the first ZarrIO made (see there)
        if chunk_key_separator is not None and chunk_key_separator not in docs.SEPARATORS:
            raise ValueError(f"chunk_key_separator must be one of {docs.SEPARATORS}, got {chunk_key_separator!r}")
        path = ready_store(path, mode)  # an obstore store or fsspec mapper: the zarr Store wrapping it
        if manager is None:
            manager = BuildManager(TypeMap(NamespaceCatalog()))
        elif isinstance(manager, TypeMap):
            manager = BuildManager(manager)
        hdmf_zarr_api.clear_for_overwrite(path, mode, force_overwrite)
        if isinstance(path, Store):  # HDMF tells files apart by their source: name the store
            root = getattr(path, "root", None)
            source = os.path.abspath(root) if isinstance(path, LocalStore) and root is not None else str(path)
        else:
            source = None if path is None else locations.absolute(os.fspath(path))
        # HDMFIO.__init__ calls open(): everything open() needs is made first.
        roots = None if external_roots is None else [os.fspath(r) for r in external_roots]
        self._open_file = FileOwner(
            path, mode, source, storage_options, allow_incomplete, roots, dialects.convention(convention)
        )
        owner = cast(DatasetOwner, self)  # the collaborators see the io's public face only
        self._writer = FileWriter(owner, self._open_file, chunk_key_separator)
        foreign_files = ForeignFiles(  # files this one links or refers into
            self._open_file.directory, roots, lambda: self.manager, self._open_foreign
        )
        self._reader = FileReader(owner, self._open_file, self._writer, foreign_files)
        self._hdmf_zarr = hdmf_zarr_api.HdmfZarrApi(self._open_file, self._writer.written)
        super().__init__(manager=manager, source=source, herd_path=herd_path)

    # --- lifecycle ----------------------------------------------------------------------------
    @property
    def mode(self) -> str:
        return self._open_file.mode

    @property
    def _file(self) -> StoreHandle | None:
        """The open store (what ``load_namespaces(file=...)`` accepts)."""
        return self._open_file.handle

    @property
    def file(self) -> StoreHandle | None:
        return self._open_file.handle

    def open(self) -> None:
        handle = self._open_file.open()
        if handle is not None and handle.writable:  # never closed: its lock must not outlive it (nor a zip's copy)
            abandon = partial(abandon_unclosed, handle, self._writer.appended_rows.tally, self.source)
            locks.guard(self, abandon, before_exit=self._writer.store_held_rows)

    @property
    def pools(self) -> WorkPools:
        """The thread pools this io encodes, decodes and reads sources on (shut down by :meth:`close`)."""
        return self._open_file.pools

    def close(self) -> None:
        locks.unguard(self)
        # (HDMFIO.__del__ closes an io whose __init__ failed before its collaborators were made)
        reader: FileReader | None = getattr(self, "_reader", None)
        if reader is not None:
            reader.foreign_files.close()
        open_file: FileOwner | None = getattr(self, "_open_file", None)
        if open_file is not None:
            open_file.close(self._writer.finish)  # the held rows stored and committed, then the lock released

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        # An error inside ``with`` undoes what was changed since the last write (rows a table appended
        # on its own, say), as a failed write would: close() alone would commit it.
        open_file: FileOwner | None = getattr(self, "_open_file", None)
        undo_error: BaseException | None = None
        try:
            if exc_type is not None and open_file is not None and open_file.handle is not None:
                try:
                    self._writer.discard(open_file.handle)
                except BaseException as exc:  # (the store refused the undo too: said with the error, below)
                    undo_error = exc
        finally:
            self.close()  # (also when the rollback failed: the lock is released)
        if exc_value is not None:  # an error of the store (a full disk) inside ``with``: ours, naming the file
            error = (
                failures.typed(exc_value, self.source)
                if undo_error is None
                else failures.with_undo_failure(exc_value, undo_error, self.source)
            )
            if error is not exc_value:
                raise error from exc_value

    def is_open(self) -> bool:
        open_file: FileOwner | None = getattr(self, "_open_file", None)
        return open_file is not None and open_file.handle is not None

    def _require_open(self) -> StoreHandle:
        return self._open_file.require_open()

    @property
    def dialect(self) -> str:
        """The convention the file was written in: ``"hdmf_zarr3"``, ``"hdmf-zarr 0.14"`` or
        ``"hdmf-zarr <=0.13 (Zarr v2)"``."""
        return self._open_file.open_dialect().name

    @property
    def _documents(self) -> dict[str, dict[str, Any]]:
        return self._open_file.documents

    @property
    def documents(self) -> dict[str, dict[str, Any]]:
        """The node documents of the open file, by node path, with their attributes in this package's
        convention whichever dialect the file was written in (read-only: do not change them)."""
        return self._open_file.documents

    @property
    def store_handle(self) -> StoreHandle:
        """The open store (:class:`~hdmf_zarr3.storage.stores.opening.StoreHandle`); raises hdmf's
        ``UnsupportedOperation`` once the file is closed (:attr:`file` gives ``None`` then)."""
        return self._open_file.require_open()

    def array_layout(self, path: str) -> dialects.ArrayLayout:
        """How the array at ``path`` is stored, in the dialect of the open file."""
        return self._open_file.open_dialect().layout(path)

    def reopen_for_reading(self) -> StoreHandle:
        """A new read-only handle on this file's location, opened with this io's store options (the
        caller closes it); used to read datasets of a closed file while a container is built."""
        return self._open_file.reopen_for_reading()

    def cached_specifications(self) -> spec_layout.Cached:
        """The specifications cached in the open file, exactly as stored (``{}`` if it caches none)."""
        return spec_cache.read_cached(self._open_file.require_open(), self._open_file.documents)

    def _open_foreign(self, target: str, foreign: ForeignFiles) -> ZarrIO:
        """Another Zarr file, opened read-only as a link target with this file's store options."""
        io = type(self)(target, mode="r", manager=self.manager, storage_options=self._open_file.storage_options)
        io.share_foreign_files(foreign)
        return io

    @property
    def root_object_id(self) -> str | None:
        """The object id of the file's root; still known once the file is closed (a link to one of its
        datasets names it)."""
        dialect = self._open_file.dialect
        if dialect is None:
            dialect = self._open_file.open_dialect()
        return dialect.documents.get("/", {}).get("attributes", {}).get("object_id")

    # --- reading (FileReader) -----------------------------------------------------------------
    def read(self, dask: bool = False, **kwargs: Any) -> Container:
        """Read the file's container (lazily).

        Parameters
        ----------
        dask : bool
            Hand out numeric datasets of 64 MiB or more as dask arrays (one block per shard or
            chunk) instead of lazy h5py-like datasets. HDMF's containers accept no dask arrays, so
            they are swapped into the containers' fields once the containers are built.
        """
        return self._reader.read(partial(HDMFIO.read, self), dask, **kwargs)

    def _check_readable(self) -> None:
        self._reader.check_readable()

    def _partial(self) -> bool:
        """Whether the caller asked to read a file whose last write did not finish, and this is one."""
        return self._reader.partial()

    def read_builder(self) -> GroupBuilder:
        """The GroupBuilder tree of this file (read once; the same objects on every call)."""
        return self._reader.read_builder()

    def read_context(self) -> ReadContext:
        """What :class:`~.reader.BuilderReader` is given of this io (the file must be open)."""
        return self._reader.read_context()

    @property
    def dataset_context(self) -> DatasetContext:
        """What the lazy datasets read from this file are given of it
        (:class:`~hdmf_zarr3.backend.contexts.DatasetContext`)."""
        return self._reader.dataset_context

    def get_builder(self, obj: Any) -> Builder:
        """The builder read for a node, given its path or a dataset read from this file."""
        return self._reader.get_builder(obj)

    def get_container(self, obj: Any) -> Container:
        """The container of a node, given its path or a dataset read from this file (what fails while HDMF
        builds it is our typed error naming the node)."""
        return self._reader.construct(self._reader.get_builder(obj))

    def region_attribute(self, path: str, key: str) -> Any:
        """The region selection(s) held by attribute ``key`` of the node at ``path``.

        The attribute itself reads as the referenced object, as HDMF expects (and as HDF5IO gives it).
        """
        return self._reader.region_attribute(path, key)

    def region_attribute_keys(self) -> list[tuple[str, str]]:
        """``(node path, attribute)`` of every attribute holding region references (see
        :meth:`region_attribute`), in the order they were read."""
        return list(self._reader.tree_reader().regions)

    @property
    def tree_is_read(self) -> bool:
        """Whether the builder tree of this file has been read (or written) already."""
        return self._reader.root is not None

    def builder_at(self, path: str) -> Builder | None:
        """The builder read for the node at ``path`` (normalized, as stored), ``None`` if there is none."""
        return self._reader.tree_reader().built.get(path)

    def why_missing(self, target: str, where: str) -> str:
        """Why no group or dataset is at ``target``, the target of the link or reference at ``where``."""
        return self._reader.tree_reader().why_missing(target, where)

    def share_foreign_files(self, foreign: ForeignFiles) -> None:
        """Resolve this file's links and references (into itself and into other files) through ``foreign``,
        the cache of the file that opened this one as a link target, so both hand out the same builders."""
        self._reader.foreign = foreign

    # --- writing (FileWriter) -----------------------------------------------------------------
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
        self._writer.write(
            partial(HDMFIO.write, self), container, cache_spec, link_data, exhaust_dci, herd, progress, **kwargs
        )

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
        self._writer.write_builder(
            builder, link_data, exhaust_dci, export_source, progress, relayout, virtual, **kwargs
        )
        self._reader.adopt_root(builder)

    def write_context(self) -> WriteContext:
        """What :class:`~.writer.BuilderWriter` is given of this io (the file must be open)."""
        return self._writer.write_context()

    def export(
        self,
        src_io: HDMFIO,
        container: Container | None = None,
        write_args: dict | None = None,
        cache_spec: bool = True,
        **kwargs: Any,
    ) -> None:
        """Export a file read by any HDMF backend into this (new) Zarr file (``kwargs``: see :meth:`write_builder`)."""
        self._writer.export(partial(HDMFIO.export, self), src_io, container, write_args, cache_spec, **kwargs)

    # --- hdmf-zarr 0.14's API (HdmfZarrApi) ---------------------------------------------------
    @property
    def path(self) -> str | Store | None:
        """The path (or URL, or zarr Store) this object was given; a ``Path`` is given back as ``str``."""
        return self._hdmf_zarr.path

    @property
    def abspath(self) -> str | None:
        """The absolute path of the file (a URL as given, normalized; for a Store without a directory, its
        name, as :attr:`source`)."""
        return self._hdmf_zarr.abspath

    def is_remote(self) -> bool:
        """True if the file lives in an object store reached by URL (``s3://``, ``gs://``, ``https://``, ...)."""
        return self._hdmf_zarr.is_remote()

    def get_written(self, builder: Builder, check_on_disk: bool = False) -> bool:
        """Whether ``builder`` was written to (or read from) this file by this object (``check_on_disk``:
        also that its node is in the store, see :meth:`get_builder_exists_on_disk`)."""
        return self._hdmf_zarr.get_written(builder, check_on_disk)

    def get_builder_exists_on_disk(self, builder: Builder) -> bool:
        """Whether the node of ``builder`` (a group or dataset) is stored in this file, asking the store."""
        return self._hdmf_zarr.get_builder_exists_on_disk(builder)

    def get_builder_disk_path(self, builder: Builder, filepath: str | None = None) -> str:
        """Where the node of ``builder`` lives: the file's path (or ``filepath``) joined with the node's path."""
        return self._hdmf_zarr.get_builder_disk_path(builder, filepath)

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
            file = io.file
        handle = (
            file
            if file is not None
            else open_store(
                path, "r", kwargs.pop("storage_options", None), allow_incomplete=kwargs.pop("allow_incomplete", False)
            )
        )
        return spec_cache.load_namespaces(handle, dialect_of(handle).documents, namespace_catalog, namespaces)

    def load_namespaces_io(
        self, namespace_catalog: NamespaceCatalog | TypeMap, namespaces: list[str] | None = None
    ) -> dict:
        return spec_cache.load_namespaces(
            self._open_file.require_open(), self._open_file.documents, namespace_catalog, namespaces
        )

    @staticmethod
    def can_read(path: str | Path, storage_options: dict[str, Any] | None = None) -> bool:
        """True if ``path`` is an HDMF file in Zarr this package reads (any of its dialects)."""
        try:
            dialect_of(open_store(path, "r", storage_options))
        except Exception:
            return False
        return True

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

    # --- display ------------------------------------------------------------------------------
    @staticmethod
    def generate_dataset_html(dataset: Any) -> str:
        """HTML table describing a dataset: shape, dtype, chunks, shards, codecs and sizes."""
        return dataset_html(dataset, ZarrDataset)
