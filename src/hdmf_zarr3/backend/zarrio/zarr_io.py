"""``ZarrIO``: the HDMFIO backend for Zarr format v3. :class:`~.io_file.ZarrFileIO`, its base, owns the file
(opening, closing, what it tells about itself); this class adds what users do with the tree it holds: read
it, write it, export into it, hdmf-zarr 0.14's accessors and the display of a dataset. Each method hands the
work to the collaborator that owns it (:class:`~.reading.FileReader`, :class:`~.writing.FileWriter`,
:class:`~.hdmf_zarr_api.HdmfZarrApi`)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from hdmf.backends.io import HDMFIO
from hdmf.build import Builder, GroupBuilder
from hdmf.container import Container
from zarr.abc.store import Store

from ...format.layout import Relayout
from ...integrations import dataset_html, nwbinspector_locations
from ..contexts import DatasetContext, ReadContext, WriteContext
from ..datasets import ZarrDataset
from ..write import VirtualOptions
from .io_file import ZarrFileIO
from .writing import BuilderWrite


class ZarrIO(ZarrFileIO):
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

    # --- reading (FileReader) -----------------------------------------------------------------
    def read(self, dask: bool = False, **kwargs: Any) -> Container:
        """Read the file's container (lazily).

        Parameters
        ----------
        dask : bool
            Hand out numeric datasets of 64 MiB or more as dask arrays (one block per shard or
            chunk, or per row of them when they do not span the trailing axes) instead of lazy
            h5py-like datasets. HDMF's containers accept no dask arrays, so
            they are swapped into the containers' fields once the containers are built.
        """
        nwbinspector_locations.install(ZarrIO)  # its messages about what this io reads carry their node path
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
        write_args = dict(herd=herd, link_data=link_data, exhaust_dci=exhaust_dci, progress=progress, **kwargs)
        self._writer.write(partial(HDMFIO.write, self), container, cache_spec, write_args)

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
        asked = BuilderWrite(link_data, export_source, progress, relayout, virtual, kwargs)
        self._writer.write_builder(builder, asked)
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
        write_args = {**(write_args or {}), **kwargs}
        self._writer.export(partial(HDMFIO.export, self, container=container), src_io, write_args, cache_spec)

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

    # --- export into a new file ---------------------------------------------------------------
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
