"""Ordinary mistakes with a local path, refused with an error naming it before anything is created.

A local Zarr file is a directory (or a ``.zip``). What is refused, and why:

- an HDF5 file, in any mode: it is read with ``NWBHDF5IO`` or converted with :func:`hdmf_zarr3.convert`
  (found by its signature, a few bytes at offset 0, 512, 1024, ... where HDF5 puts it);
- any other file where a directory belongs, and a path ending in ``.zip`` that is not a zip file;
- a FIFO, a device or a socket at the path, and a symlink leading nowhere (a new file would be created
  wherever it points);
- in a write mode, a directory holding files but no Zarr node: writing would mix the new file with
  them, and mode ``w`` would later delete them all (a writer killed before its first key landed leaves
  only a temporary ``<name>.<32 hex digits>.partial``: that is the file's own, not another's);
- a new file below something that is a file, not a directory;
- in mode ``a``, a new file whose directory does not exist: ``a`` opens a file that is there or creates
  one beside others, so a missing directory means a mistyped path (and creating the whole chain of
  directories would hide it).

Mode ``a`` on a missing file in an existing directory creates it, as for ``NWBHDF5IO``; modes ``w``,
``w-`` and ``x`` create missing directories, as zarr does; modes ``r`` and ``r+`` on a missing path
raise ``UnsupportedOperation: ... File does not exist`` (as ``NWBHDF5IO`` does).
"""

from __future__ import annotations

import os
import shutil
import stat
import zipfile

from ...errors import NotZarrError, StoreError
from ..paths import kind_of
from ..stores import INTERRUPTED_WRITE
from ..zip import zipped

HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"

#: Files at the top of a directory that make it a Zarr node (format 3, or format 2 as older writers made).
ZARR_MARKERS = ("zarr.json", ".zgroup", ".zarray", ".zmetadata")

WRITE_MODES = frozenset({"r+", "a", "w", "w-", "x"})


def is_hdf5(path: str) -> bool:
    """Whether ``path`` starts with the HDF5 signature (after a user block of 512, 1024, 2048, ... bytes)."""
    try:
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            offset = 0
            while offset + len(HDF5_SIGNATURE) <= size:
                file.seek(offset)
                if file.read(len(HDF5_SIGNATURE)) == HDF5_SIGNATURE:
                    return True
                offset = 512 if offset == 0 else offset * 2
    except OSError:
        return False
    return False


def _refuse_other_kinds(location: str) -> None:
    """Refuse a symlink leading nowhere (a new file is never created through one: it would land wherever the
    symlink points) and what is neither a regular file nor a directory (a FIFO, a device, a socket)."""
    try:
        found = os.stat(location)  # (never opens: a FIFO does not block)
    except FileNotFoundError:
        if os.path.islink(location):
            raise NotZarrError(
                f"this is a symlink to {os.readlink(location)}, which does not exist; a file is never created "
                "through a symlink",
                location,
            ) from None
        return
    except OSError:
        return  # (what follows says what is wrong, if anything)
    if not (stat.S_ISREG(found.st_mode) or stat.S_ISDIR(found.st_mode)):
        raise NotZarrError(f"this is {kind_of(found.st_mode)}, not a Zarr store (a directory or a zip file)", location)


def check(location: str, mode: str) -> None:
    """Refuse ``location`` (an absolute local path) for ``mode`` if it cannot be the Zarr file asked for.

    Raises
    ------
    NotZarrError
        Something other than a Zarr file is there.
    StoreError
        A new file would be created in a directory that does not exist.
    """
    is_zip = location.endswith(".zip")
    _refuse_other_kinds(location)
    if os.path.isfile(location):
        if is_hdf5(location):
            raise NotZarrError(
                "this is an HDF5 file, not Zarr: read it with pynwb.NWBHDF5IO, or convert it with "
                f"hdmf_zarr3.convert({os.path.basename(location)!r}, '<new name>.nwb.zarr')",
                location,
            )
        if not is_zip:
            raise NotZarrError("this is a file, not a Zarr store (a directory, or a zip file named *.zip)", location)
        if not zipfile.is_zipfile(location) and not zipped.update_unfinished(location):  # (the opener says so)
            raise NotZarrError("this is not a zip file (a path ending in .zip must be a zipped Zarr store)", location)
        return
    if os.path.isdir(location):
        if is_zip:
            raise NotZarrError("this is a directory, but a path ending in .zip must be a zip file", location)
        if (
            mode in WRITE_MODES
            and not any(os.path.exists(os.path.join(location, m)) for m in ZARR_MARKERS)
            and any(not INTERRUPTED_WRITE.search(entry.name) for entry in os.scandir(location))
        ):
            raise NotZarrError(
                "this directory holds other files and no Zarr store: writing would mix the new file "
                "with them (and mode 'w' would later delete them); choose a new path",
                location,
            )
        return
    if mode not in WRITE_MODES or mode == "r+":  # r+ on a missing path is refused as HDF5IO refuses it
        return
    parent = os.path.dirname(location)
    existing = parent
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise StoreError(f"cannot create the file: {existing} is a file, not a directory", location)
    if mode == "a" and existing != parent:
        raise StoreError(
            f"mode 'a' opens a file, or creates one in an existing directory, but the directory "
            f"{parent} does not exist (a mistyped path?); mode 'w' creates it",
            location,
        )


def clear_other_file(location: str) -> None:
    """Delete what :func:`check` refused as no Zarr file at ``location`` (an HDF5 file, a directory of other
    files), for hdmf-zarr's ``force_overwrite``; a symlink there is removed, never followed."""
    if os.path.isdir(location) and not os.path.islink(location):
        shutil.rmtree(location)
    else:
        os.remove(location)
