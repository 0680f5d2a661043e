"""The open file of a :class:`~hdmf_zarr3.ZarrIO`: ``ZarrFileIO``, the base class that makes the io's
collaborators and owns the file's life (open, close, ``with``) and what it tells about the file (mode, dialect,
documents, the open store, the cached namespaces). :class:`~.zarr_io.ZarrIO` adds the tree read and written.

Its state lives in collaborators made in ``__init__``, each owning its fields: :class:`~.file_owner.FileOwner`
(the open store, its dialect, the pools), :class:`~.reading.FileReader`, :class:`~.writing.FileWriter` and
:class:`~.hdmf_zarr_api.HdmfZarrApi` (hdmf-zarr 0.14's extra methods). The writer, the reader and the lazy
datasets are handed explicit contexts (:mod:`hdmf_zarr3.backend.contexts`)."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path
from typing import Any, cast

from hdmf.backends.io import HDMFIO
from hdmf.build import BuildManager, TypeMap
from hdmf.spec import NamespaceCatalog
from zarr.abc.store import Store
from zarr.storage import LocalStore

from ...format import dialects
from ...format.documents import zarr_json as docs
from ...format.specs import cache_layout as spec_layout
from ...integrations import hdmf_shims
from ...storage.handles import StoreHandle, decide, open_store
from ...storage.safety import locks, store_failures
from ...storage.stores import WorkPools, locations
from ..cached_specs import cache as spec_cache
from ..contexts import DatasetOwner
from ..datasets import ZarrDataset
from ..read import ForeignFiles
from . import hdmf_zarr_api
from .file_owner import FileOwner, abandon_unclosed, dialect_of
from .reading import FileReader
from .writing import FileWriter


class ZarrFileIO(HDMFIO):
    """The file half of :class:`~hdmf_zarr3.ZarrIO` (its parameters are documented there): the collaborators
    made, the file opened and closed, and what it tells about itself."""

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
        if manager is None:
            manager = BuildManager(TypeMap(NamespaceCatalog()))
        elif isinstance(manager, TypeMap):
            manager = BuildManager(manager)
        roots = None if external_roots is None else [os.fspath(r) for r in external_roots]
        opening = decide(path, mode, storage_options, allow_incomplete, roots, force_overwrite)  # once: how to open
        path = opening.target  # (an obstore store or fsspec mapper: the zarr Store wrapping it)
        if isinstance(path, Store):  # HDMF tells files apart by their source: name the store
            root = getattr(path, "root", None)
            source = os.path.abspath(root) if isinstance(path, LocalStore) and root is not None else str(path)
        else:
            source = None if path is None else locations.absolute(os.fspath(path))
        # HDMFIO.__init__ calls open(): everything open() needs is made first.
        self._open_file = FileOwner(opening, mode, source, dialects.convention(convention))
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
                store_failures.typed(exc_value, self.source)
                if undo_error is None
                else store_failures.with_undo_failure(exc_value, undo_error, self.source)
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
        """The open store (:class:`~hdmf_zarr3.storage.handles.StoreHandle`); raises hdmf's
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

    def _open_foreign(self, target: str, foreign: ForeignFiles) -> ZarrFileIO:
        """Another Zarr file, opened read-only as a link target with this file's store options."""
        io = type(self)(target, mode="r", manager=self.manager, storage_options=self._open_file.storage_options)
        io.share_foreign_files(foreign)
        return io

    def share_foreign_files(self, foreign: ForeignFiles) -> None:
        """Resolve this file's links and references (into itself and into other files) through ``foreign``,
        the cache of the file that opened this one as a link target, so both hand out the same builders."""
        self._reader.foreign = foreign

    @property
    def root_object_id(self) -> str | None:
        """The object id of the file's root; still known once the file is closed (a link to one of its
        datasets names it)."""
        dialect = self._open_file.dialect
        if dialect is None:
            dialect = self._open_file.open_dialect()
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
