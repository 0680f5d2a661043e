"""``ZarrIO``: the HDMFIO backend for Zarr format v3. It orchestrates: it opens and closes the store, and
hands the writer, the reader and the lazy datasets explicit contexts (:mod:`.contexts`); its read and write
halves are :mod:`.io_reading` and :mod:`.io_writing`; the work lives in :mod:`.writer`, :mod:`.reader`,
:mod:`.spec_cache` and :mod:`..storage`."""

from __future__ import annotations

import os
import warnings
from functools import partial
from pathlib import Path
from typing import Any

from hdmf.backends.errors import UnsupportedOperation
from hdmf.backends.io import HDMFIO
from hdmf.backends.utils import WriteStatusTracker
from hdmf.build import BuildManager, GroupBuilder, TypeMap
from hdmf.container import Container
from hdmf.spec import NamespaceCatalog
from zarr.abc.store import Store
from zarr.storage import LocalStore

from ...errors import ModeError
from ...format import dialects
from ...format.dialects import Dialect
from ...format.documents import zarr_json as docs
from ...format.specs import layout as S
from ...integrations import dataset_html, hdmf_shims
from ...storage.remote import ready_store
from ...storage.safety import failures, locks
from ...storage.stores import CREATE_MODES, StoreHandle, WorkPools, locations, open_store
from ..datasets import AppendedRows, RowTally, ZarrDataset
from ..read import BuilderReader, ForeignFiles
from ..specs import cache as spec_cache
from ..write import PendingReferences
from . import hdmf_zarr_api
from .contexts import DatasetContext
from .opening import dialect_of
from .reading import ReadingMixin
from .writing import WritingMixin


class ZarrIO(ReadingMixin, WritingMixin, hdmf_zarr_api.HdmfZarrApi, HDMFIO):
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

    #: A store a subclass opened before ``__init__`` (NWBZarrIO, to load the cached namespaces) and the
    #: dialect it detected: :meth:`open` takes both over.
    _opened: StoreHandle | None = None
    _opened_dialect: Dialect | None = None

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
        self._foreign_files = ForeignFiles(  # files this one links or refers into
            self._directory, self._external_roots, lambda: self.manager, self._open_foreign
        )
        self._foreign: ForeignFiles | None = None  # set when this file was opened as another's target
        self._written_builders = WriteStatusTracker()
        self._pending_refs = PendingReferences()  # appended rows whose targets the next write adds
        self._appended_rows = AppendedRows()  # datasets holding appended rows the next write stores
        self._dataset_context: DatasetContext | None = None  # made on first use (io_reading)
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
            opened = self._opened  # a handle a subclass already opened (NWBZarrIO)
            # ... and the dialect it detected there to load namespaces: detected once per open
            known = self._opened_dialect if opened is not None else None
            handle = (
                opened
                if opened is not None
                else open_store(
                    self._path,
                    self._mode,
                    self._storage_options,
                    allow_incomplete=self._allow_incomplete,
                    external_roots=self._external_roots,
                )
            )
            self._handle = handle
            self._opened = self._opened_dialect = None
            try:
                self._dialect = known if known is not None else dialect_of(handle)
                if (
                    handle.documents()
                    and self._convention.name != dialects.Convention.name
                    and self._mode not in CREATE_MODES
                ):
                    raise ModeError(f"convention {self._convention.name!r} applies to new files only (modes w, w-, x)")
                # our files name every array's dimensions (format/documents/dimension_names.py); hdmf-zarr's as it does
                handle.names_dimensions = self._convention.name == dialects.Convention.name
            except BaseException:
                self._handle = None
                handle.close()  # releases the write lock
                raise
            if handle.writable:  # never closed: its lock must not outlive it (nor a zip's working copy)
                abandon = partial(_abandon, handle, self._appended_rows.tally, self.source)
                locks.guard(self, abandon, before_exit=self._store_held_rows)

    def _store_held_rows(self) -> None:
        """At exit, never closed: rows held since the last write are stored, not committed (see
        :mod:`.appended_rows`)."""
        if self._handle is not None:
            self._appended_rows.store()

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
        handle: StoreHandle | None = getattr(self, "_handle", None)
        if handle is not None:
            try:
                try:  # (the datasets store their rows through the open handle)
                    if self._pending_refs:  # rows never completed are not stored with nulls: undone
                        self._appended_rows.clear()
                        self._pending_refs.undo_if_waiting(handle)
                    self._appended_rows.store()  # rows appended since the last write, once per dataset
                    handle.commit()  # consolidate what was changed since the last write (appends)
                except BaseException as exc:
                    self._appended_rows.clear()
                    handle.rollback()  # (nothing left to undo once the commit stored the complete root)
                    error = failures.typed(exc, self.source)
                    if error is exc:
                        raise
                    raise error from exc
                finally:
                    self._handle = None
            finally:
                handle.close()  # releases the write lock even if the commit failed

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        # An error inside ``with`` undoes what was changed since the last write (rows a table appended
        # on its own, say), as a failed write would: close() alone would commit it.
        handle: StoreHandle | None = getattr(self, "_handle", None)
        try:
            if exc_type is not None and handle is not None:
                self._pending_refs.clear()
                self._appended_rows.clear()
                handle.rollback()
        finally:
            self.close()  # (also when the rollback failed: the lock is released)
        if exc_value is not None:  # an error of the store (a full disk) inside ``with``: ours, naming the file
            error = failures.typed(exc_value, self.source)
            if error is not exc_value:
                raise error from exc_value

    def is_open(self) -> bool:
        return getattr(self, "_handle", None) is not None

    def _require_open(self) -> StoreHandle:
        if self._handle is None:
            raise UnsupportedOperation(f"Cannot access closed Zarr file '{self.source}'")
        return self._handle

    def _open_dialect(self) -> Dialect:
        """The dialect of the open file (:meth:`open` sets it with the handle)."""
        self._require_open()
        if self._dialect is None:
            raise UnsupportedOperation(f"Zarr file '{self.source}' is not open")
        return self._dialect

    @property
    def dialect(self) -> str:
        """The convention the file was written in: ``"hdmf_zarr3"``, ``"hdmf-zarr 0.14"`` or
        ``"hdmf-zarr <=0.13 (Zarr v2)"``."""
        return self._open_dialect().name

    @property
    def _documents(self) -> dict[str, dict[str, Any]]:
        return self._open_dialect().documents

    @property
    def documents(self) -> dict[str, dict[str, Any]]:
        """The node documents of the open file, by node path, with their attributes in this package's
        convention whichever dialect the file was written in (read-only: do not change them)."""
        return self._documents

    @property
    def store_handle(self) -> StoreHandle:
        """The open store (:class:`~hdmf_zarr3.storage.stores.opening.StoreHandle`); raises hdmf's
        ``UnsupportedOperation`` once the file is closed (:attr:`file` gives ``None`` then)."""
        return self._require_open()

    def array_layout(self, path: str) -> dialects.ArrayLayout:
        """How the array at ``path`` is stored, in the dialect of the open file."""
        return self._open_dialect().layout(path)

    def reopen_for_reading(self) -> StoreHandle:
        """A new read-only handle on this file's location, opened with this io's store options (the
        caller closes it); used to read datasets of a closed file while a container is built."""
        return open_store(self._path, "r", self._storage_options, allow_incomplete=self._allow_incomplete)

    def cached_specifications(self) -> S.Cached:
        """The specifications cached in the open file, exactly as stored (``{}`` if it caches none)."""
        return spec_cache.read_cached(self._require_open(), self._documents)

    def _directory(self) -> str | None:
        return self._handle.directory if self._handle is not None else None

    def _open_foreign(self, target: str, foreign: ForeignFiles) -> ZarrIO:
        """Another Zarr file, opened read-only as a link target with this file's store options."""
        io = type(self)(target, mode="r", manager=self.manager, storage_options=self._storage_options)
        io.share_foreign_files(foreign)
        return io

    @property
    def root_object_id(self) -> str | None:
        """The object id of the file's root; still known once the file is closed (a link to one of its
        datasets names it)."""
        dialect = self._dialect if self._dialect is not None else self._open_dialect()
        return dialect.documents.get("/", {}).get("attributes", {}).get("object_id")

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
        return spec_cache.load_namespaces(self._require_open(), self._documents, namespace_catalog, namespaces)

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


def _abandon(handle: StoreHandle, held: RowTally, source: str | None) -> None:
    """What becomes of a writer never closed (see :func:`~hdmf_zarr3.storage.safety.locks.guard`)."""
    if held.datasets:  # collected: no write or close can store them any more
        warnings.warn(
            f"{source}: the file was never closed; rows appended to {held.datasets} dataset(s) since the last "
            "write() are not stored (close files, or use `with`)",
            RuntimeWarning,
            stacklevel=1,
        )
    handle.abandon()
