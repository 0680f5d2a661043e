"""Single-file Zarr stores (``.nwb.zarr.zip``): safe extraction and atomic replacement.

A zip is read in place by zarr's ``ZipStore`` (as :class:`.guarded.GuardedZipStore`: members bounded in
size, stored or deflated only). Writing one in place cannot replace an entry (the
root ``zarr.json`` is rewritten when a write finishes), so writes go to a working directory which,
when the file is closed, is packed into a new zip that atomically replaces the old one: a crash
leaves the previous file (or none) and never a half-written one.

A writer killed outright leaves its working directory (``<zip>.<random>.partial/``, as large as the
file) and perhaps a half-packed ``<zip>.partial`` beside the zip; :func:`remove_leftovers` removes them
when the next writer holds the zip's lock, and :func:`~hdmf_zarr3.break_lock` does too. A directory
replaced with mode ``w`` (see :mod:`.replacing`) leaves the same kind of working directory beside it,
removed the same way.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import zipfile
from collections.abc import Callable

from ..errors import CorruptStoreError, StoreError
from ..format import completion

#: What follows ``<zip name>.`` in a working directory's name (tempfile.mkdtemp's random part, then the
#: suffix); no dots, so another zip's ``<zip name>.<more>.zip.<random>.partial`` never matches.
_WORKING = r"\.[A-Za-z0-9_]+\.partial"


def extract_all(archive: zipfile.ZipFile, directory: str) -> None:
    """Extract every member into ``directory``, refusing names that would land outside it."""
    root = os.path.realpath(directory)
    for info in archive.infolist():
        target = os.path.realpath(os.path.join(root, info.filename))
        if os.path.isabs(info.filename) or not target.startswith(root + os.sep):
            raise CorruptStoreError(f"zip member {info.filename!r} points outside the archive")
    archive.extractall(root)


def replace_zip(directory: str, location: str, ours: Callable[[], bool] | None = None) -> None:
    """Pack ``directory`` into ``location`` (stored, not compressed: chunks are compressed already).

    ``ours`` says whether this writer still holds the zip's lock: a writer whose lock was broken
    (:func:`~hdmf_zarr3.break_lock` while it was running) may have lost its working directory to it, and
    must not replace the zip with what is left.
    """
    if not os.path.isdir(directory) or (ours is not None and not ours()):
        shutil.rmtree(directory, ignore_errors=True)
        raise StoreError(
            "the write lock was broken while this writer was running (its working directory may "
            "be gone); the zip was not replaced",
            location,
        )
    partial = location + ".partial"
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        for base, dirs, files in os.walk(directory):
            dirs.sort()
            for name in sorted(files):
                full = os.path.join(base, name)
                archive.write(full, os.path.relpath(full, directory).replace(os.sep, "/"))
    if ours is not None and not ours():  # checked again: packing takes a while
        os.remove(partial)
        shutil.rmtree(directory, ignore_errors=True)
        raise StoreError(
            "the write lock was broken while this writer was packing the zip; the zip was not replaced", location
        )
    os.replace(partial, location)
    shutil.rmtree(directory, ignore_errors=True)


def abandon(directory: str, location: str, ours: Callable[[], bool] | None = None) -> None:
    """The working copy of a writer never closed: it replaces the zip only if its root is there and
    complete (what a finished ``write()`` committed); a change not committed yet, a failed write or
    nothing written drops it, and the zip stays as it was. Plain file I/O only (runs at exit)."""
    if _finished(directory):
        replace_zip(directory, location, ours)
    else:
        shutil.rmtree(directory, ignore_errors=True)


def _finished(directory: str) -> bool:
    try:
        with open(os.path.join(directory, "zarr.json"), "rb") as f:
            root = json.loads(f.read())
    except (OSError, ValueError):
        return False
    return isinstance(root, dict) and completion.incomplete(root) is None


def leftovers(location: str) -> list[str]:
    """What killed writers of the zip at ``location`` may have left beside it: working directories
    (``<zip>.<random>.partial/``) and a half-packed ``<zip>.partial``. Symbolic links are not counted."""
    parent, name = os.path.split(location)
    working = re.compile(re.escape(name) + _WORKING)
    try:
        entries = list(os.scandir(parent or "."))
    except OSError:
        return []
    return [
        e.path
        for e in entries
        if (e.name == name + ".partial" and e.is_file(follow_symlinks=False))
        or (working.fullmatch(e.name) and e.is_dir(follow_symlinks=False))
    ]


def remove_leftovers(location: str) -> list[str]:
    """Remove the :func:`leftovers` of the zip at ``location`` and return their paths.

    Call it only while holding the zip's write lock (or knowing its holder is dead): a live writer's
    working directory looks the same. Best effort: what cannot be removed (permissions) stays, and does
    not keep the file from being opened.
    """
    removed = []
    for path in leftovers(location):
        try:
            if os.path.isdir(path):
                shutil.rmtree(path)
            else:
                os.remove(path)
        except OSError:
            continue
        removed.append(path)
    return removed
