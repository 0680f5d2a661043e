"""The parts of hdmf-zarr 0.14's ``ZarrIO`` API that ours adds on top of HDMFIO, so that code written for
hdmf-zarr runs unchanged: ``path``, ``abspath``, ``is_remote()``, ``get_written(check_on_disk=...)``,
``get_builder_exists_on_disk``, ``get_builder_disk_path``, mode ``r-``, ``force_overwrite`` and the
write keywords ``consolidate_metadata`` and ``number_of_jobs``, ``max_threads_per_process``,
``multiprocessing_context`` (``GenericDataChunkIterator`` datasets written by worker processes, see
:mod:`.parallel`).

The meanings follow hdmf-zarr's documentation; where ours differs it is said here and in
``docs/other-writers.md`` ("ZarrIO and NWBZarrIO"): stores that worker processes cannot reopen (a
``Store`` object passed in, URLs) are written serially with a :class:`~hdmf_zarr3.ParallelWriteWarning`.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hdmf.build import Builder
from zarr.abc.store import Store

from ...format.vocabulary import store_key
from ...storage.stores import locations, sync
from ..write import ParallelOptions, builder_path

if TYPE_CHECKING:
    from hdmf.backends.utils import WriteStatusTracker

    from .file_owner import FileOwner

#: The files that make a node of the store (Zarr v3; and v2, for files of hdmf-zarr <= 0.13).
_NODE_FILES = ("zarr.json", ".zgroup", ".zarray")


def take_write_keywords(kwargs: dict[str, Any]) -> tuple[bool, ParallelOptions]:
    """Remove hdmf-zarr's write keywords from ``kwargs``; return ``consolidate_metadata`` and the
    parallel-write keywords, checked (see :mod:`.parallel`).

    ``consolidate_metadata=False`` stores the root without the other nodes' metadata inlined (readers
    then list the store). ``number_of_jobs > 1`` writes ``GenericDataChunkIterator`` datasets in worker
    processes; a value of the wrong type or out of range raises ``TypeError`` or ``ValueError`` naming
    the keyword.
    """
    consolidate = bool(kwargs.pop("consolidate_metadata", True))
    return consolidate, ParallelOptions.take(kwargs)


class HdmfZarrApi:
    """hdmf-zarr 0.14's accessors of :class:`~hdmf_zarr3.ZarrIO` (see the module docstring), which delegates
    them here.

    Parameters
    ----------
    file : FileOwner
        The io's file (its ``path``, ``source`` and open store).
    written : WriteStatusTracker
        The builders the io wrote (or read).
    """

    def __init__(self, file: FileOwner, written: WriteStatusTracker) -> None:
        self.file = file
        self.written = written

    @property
    def path(self) -> str | Store | None:
        """The path (or URL, or zarr Store) this object was given; a ``Path`` is given back as ``str``."""
        path = self.file.path
        return os.fspath(path) if isinstance(path, Path) else path

    @property
    def abspath(self) -> str | None:
        """The absolute path of the file (a URL as given, normalized; for a Store without a directory, its
        name, as :attr:`source`)."""
        return self.file.source

    def is_remote(self) -> bool:
        """True if the file lives in an object store reached by URL (``s3://``, ``gs://``, ``https://``, ...)."""
        location = self.file.source
        return location is not None and locations.is_remote(location)

    def get_written(self, builder: Builder, check_on_disk: bool = False) -> bool:
        """Whether ``builder`` was written to (or read from) this file by this object.

        Parameters
        ----------
        builder : Builder
            The builder of interest.
        check_on_disk : bool
            Also check that its node is in the store (see :meth:`get_builder_exists_on_disk`).
        """
        written = self.written.get_written(builder)
        return written and (not check_on_disk or self.get_builder_exists_on_disk(builder))

    def get_builder_exists_on_disk(self, builder: Builder) -> bool:
        """Whether the node of ``builder`` (a group or dataset) is stored in this file, asking the store
        itself. Links live in their parent's attributes: they are no node of their own (False)."""
        store = self.file.require_open().store
        path = builder_path(builder)
        return any(sync(store.exists(store_key(path, name))) for name in _NODE_FILES)

    def get_builder_disk_path(self, builder: Builder, filepath: str | None = None) -> str:
        """Where the node of ``builder`` lives: the file's path (or ``filepath``) joined with the node's path.

        Parameters
        ----------
        builder : Builder
            The builder of interest.
        filepath : str, optional
            The path of the Zarr file; this file's by default.
        """
        base = filepath if filepath is not None else self.file.source
        if base is None:
            raise ValueError("this file has no path (a zarr Store without a directory): pass filepath")
        relative = builder_path(builder).lstrip("/")
        if locations.is_url(base):
            return posixpath.join(base.rstrip("/"), relative) if relative else base
        return os.path.join(base, relative) if relative else base
