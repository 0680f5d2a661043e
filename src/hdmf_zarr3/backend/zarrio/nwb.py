"""``NWBZarrIO``: ZarrIO for PyNWB, loading the namespaces cached in the file on read."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

from hdmf.backends.io import HDMFIO
from hdmf.build import BuildManager
from pynwb import NWBFile, get_manager, get_type_map
from zarr.abc.store import Store

from ...errors import CorruptStoreError, IncompleteFileError
from ...format.documents import completion
from ...storage.handles import StoreHandle
from .file_modes import FileMode
from .zarr_io import ZarrIO


def parse_nwb_version(value: Any) -> tuple[str | None, tuple | None]:
    """``("2.9.0", (2, 9, 0))`` from an ``nwb_version`` attribute; ``(None, None)`` if absent."""
    if not isinstance(value, str):
        return None, None
    parts = value.replace("NWB-", "").replace("-", ".").replace("_", ".").split(".")
    return value, tuple(int(p) if p.isnumeric() else p for p in parts)


class NWBZarrIO(ZarrIO):
    """Read and write NWB files as Zarr v3 stores.

    Parameters
    ----------
    path : str, Path or zarr Store
        Location of the file.
    mode : {"r", "r+", "a", "w", "w-", "x", "r-"}
        File mode, as for :class:`pynwb.NWBHDF5IO` (``"r-"``: see :class:`ZarrIO`).
    load_namespaces : bool
        Load the namespaces cached in the file (read modes only, and only without ``manager``).
    manager : BuildManager, optional
        The build manager to use; PyNWB's default otherwise.
    extensions : str or list of str, optional
        Paths of extension namespace files to load in addition.
    """

    def __init__(
        self,
        path: str | Path | Store | None = None,
        mode: str = "r",
        load_namespaces: bool = True,
        manager: BuildManager | None = None,
        extensions: str | list[str] | None = None,
        **kwargs: Any,
    ):
        creates = FileMode(mode).creates
        if creates or manager is not None:
            load_namespaces = False
        suffixes = (".zarr", ".zarr.zip")
        if creates and isinstance(path, (str, Path)) and not str(path).rstrip("/").endswith(suffixes):
            warnings.warn(
                f"The file path provided: {path} does not end in '.zarr'. It is recommended that NWB "
                "files using the Zarr backend use the '.nwb.zarr' extension.",
                UserWarning,
                stacklevel=2,
            )
        if load_namespaces:  # loaded into its type map once the file is open (opened once, by ZarrIO)
            manager = BuildManager(get_type_map())
        elif manager is None:
            manager = get_manager(extensions=extensions) if extensions else get_manager()
        super().__init__(path, mode=mode, manager=manager, **kwargs)
        if load_namespaces:
            try:
                self.load_namespaces_io(manager.type_map)  # (a new file, in mode 'a': none cached, none loaded)
                if extensions:
                    for ext in [extensions] if isinstance(extensions, str) else extensions:
                        manager.type_map.load_namespaces(ext)
            except BaseException:
                self.close()  # releases the write lock
                raise

    @property
    def nwb_version(self) -> tuple[str | None, tuple | None]:
        """The NWB version of the file: its string and parsed parts, or ``(None, None)``."""
        return parse_nwb_version(self._documents.get("/", {}).get("attributes", {}).get("nwb_version"))

    def read(self, skip_version_check: bool = False, **kwargs: Any) -> NWBFile:  # type: ignore[override]  # NWBHDF5IO's
        """Read the NWBFile (lazily, as :meth:`ZarrIO.read`; ``dask=True`` is accepted too).

        Parameters
        ----------
        skip_version_check : bool
            Read the file even if its ``nwb_version`` is missing or older than NWB 2 (otherwise a
            ``TypeError``), as for :meth:`pynwb.NWBHDF5IO.read`.
        """
        self._check_readable()
        if not skip_version_check:
            version_str, version = self.nwb_version
            mark = self._require_open().incomplete()
            if version is None and mark is not None and self._partial():
                raise IncompleteFileError(
                    f"{completion.describe(mark)} before the root's attributes (nwb_version) were stored",
                    "/",
                )
            if version is None:
                raise TypeError("Missing NWB version in file. The file is not a valid NWB file.")
            if not isinstance(version[0], int):
                raise CorruptStoreError(f"nwb_version {version_str!r} is no version (major.minor.patch)", "/")
            if version[0] < 2:
                raise TypeError(
                    f"NWB version {version_str} not supported. PyNWB supports NWB files version 2 and above."
                )
        return super().read(**kwargs)

    @staticmethod
    def read_nwb(
        path: str | Path | Store | None = None,
        file: StoreHandle | None = None,
        storage_options: dict[str, Any] | None = None,
    ) -> NWBFile:
        """Read an NWB file read-only, loading its cached namespaces (as ``NWBHDF5IO.read_nwb``).

        Parameters
        ----------
        path : str, Path or zarr Store
            The file; an ``s3://`` URL is read anonymously (unsigned requests, no credential lookup) unless
            ``storage_options`` says otherwise, as hdmf-zarr's ``read_nwb`` does.
        file : StoreHandle, optional
            An open store to read instead of ``path``.
        storage_options : dict, optional
            Options of the object store a URL opens (see :class:`ZarrIO`).
        """
        if storage_options is None and isinstance(path, (str, Path)) and os.fspath(path).startswith("s3://"):
            storage_options = {"anon": True}
        io = NWBZarrIO(
            path if file is None else file.store, mode="r", load_namespaces=True, storage_options=storage_options
        )
        return io.read()

    def export(  # type: ignore[override]  # NWBHDF5IO's and hdmf-zarr's signature (nwbfile second)
        self,
        src_io: HDMFIO,
        nwbfile: NWBFile | None = None,
        write_args: dict | None = None,
        cache_spec: bool = True,
        container: NWBFile | None = None,
        **kwargs: Any,
    ) -> None:
        """Export an NWB file read by any backend (e.g. NWBHDF5IO) to this Zarr file (``kwargs``: hdmf-zarr's
        ``consolidate_metadata`` & co., see :meth:`ZarrIO.write_builder`)."""
        super().export(
            src_io=src_io,
            container=nwbfile if nwbfile is not None else container,
            write_args=write_args,
            cache_spec=cache_spec,
            **kwargs,
        )


def read_nwb(path: str | Path | Store) -> NWBFile:
    """Open an NWB Zarr file read-only and return its NWBFile (the IO stays open with the file;
    close it with ``nwbfile.get_read_io().close()``)."""
    return NWBZarrIO.read_nwb(path)
