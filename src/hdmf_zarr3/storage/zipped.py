"""Single-file Zarr stores (``.nwb.zarr.zip``): safe extraction and atomic replacement.

A zip is read in place by zarr's ``ZipStore`` (as :class:`.guarded.GuardedZipStore`: members bounded in
size, stored or deflated only). Writing one in place cannot replace an entry (the
root ``zarr.json`` is rewritten when a write finishes), so writes go to a working directory which,
when the file is closed, is packed into a new zip that atomically replaces the old one: a crash
leaves the previous file (or none) and never a half-written one.
"""

from __future__ import annotations

import os
import shutil
import zipfile

from ..errors import CorruptStoreError


def extract_all(archive: zipfile.ZipFile, directory: str) -> None:
    """Extract every member into ``directory``, refusing names that would land outside it."""
    root = os.path.realpath(directory)
    for info in archive.infolist():
        target = os.path.realpath(os.path.join(root, info.filename))
        if os.path.isabs(info.filename) or not target.startswith(root + os.sep):
            raise CorruptStoreError(f"zip member {info.filename!r} points outside the archive")
    archive.extractall(root)


def replace_zip(directory: str, location: str) -> None:
    """Pack ``directory`` into ``location`` (stored, not compressed: chunks are compressed already)."""
    partial = location + ".partial"
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        for base, dirs, files in os.walk(directory):
            dirs.sort()
            for name in sorted(files):
                full = os.path.join(base, name)
                archive.write(full, os.path.relpath(full, directory).replace(os.sep, "/"))
    os.replace(partial, location)
    shutil.rmtree(directory, ignore_errors=True)
