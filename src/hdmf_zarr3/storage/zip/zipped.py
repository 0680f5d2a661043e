"""Single-file Zarr stores (``.nwb.zarr.zip``): atomic replacement, and changes added in place.

A zip is read in place by zarr's ``ZipStore`` (as :class:`.guarded.GuardedZipStore`: members bounded in
size, stored or deflated only). A new file (mode ``w``) is written in a working directory which, when
the file is closed after a finished write, is packed into a new zip that atomically replaces the old
one: a crash leaves the previous file (or none) and never a half-written one.

A zip opened to be changed (modes ``r+`` and ``a``) is not extracted: it is read in place, and the
session's changes go to a working directory (:mod:`.zip_overlay`). Closing without a change leaves
the zip untouched. A change is added to the zip in place (:func:`update_zip`): the changed and new
members are written after the end of the archive, followed by a new central directory that lists
them and the unchanged members, so the cost is that of the change (the root ``zarr.json`` and the
chunks written), not of the archive. The old versions of changed members stay in the file,
unreferenced, until they take more than half of it; the zip is then packed again, whole. Before the
zip is touched its length is recorded in ``<zip>.appending``; a writer killed before the new central
directory is complete leaves that record, and the next writer (or :func:`~hdmf_zarr3.break_lock`,
:func:`~hdmf_zarr3.recover`) cuts the zip back to that length, which is the previous zip, byte for byte
(a zip that ends with its complete end record, written last, was finished: only the record is removed).

A writer killed outright leaves its working directory (``<zip>.<random>.partial/``: the new file, or the
changes) and perhaps a half-packed ``<zip>.partial`` beside the zip; :func:`remove_leftovers` removes them
when the next writer holds the zip's lock, and :func:`~hdmf_zarr3.break_lock` does too. A directory
replaced with mode ``w`` (see :mod:`.replacing`) leaves the same kind of working directory beside it,
removed the same way.

Every side file is touched one safe way (:mod:`..paths`): named after :func:`..paths.side_stem` (a name that
fits, however long the zip's), created exclusively with ``O_NOFOLLOW`` in the zip's real directory, read only
from a regular file without waiting on a FIFO. A symlink, FIFO or directory found at ``<zip>.partial`` or
``<zip>.appending`` is never written through: it is our typed error naming it, before the zip is touched.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
import stat
import zipfile
from collections.abc import Callable, Iterator
from typing import BinaryIO

from ...errors import CorruptStoreError, StoreError
from ...format.documents import MAX_DOCUMENT_BYTES, completion, load_json
from ..paths import create_side_file, open_side_file, remove_side_file, replace_side_file, side_stem, write_all
from ..stores import finish_cleanup, remove_tree

#: What follows ``<zip name>.`` in a working directory's name (tempfile.mkdtemp's random part, then the
#: suffix); no dots, so another zip's ``<zip name>.<more>.zip.<random>.partial`` never matches.
_WORKING = r"\.[A-Za-z0-9_]+\.partial"
#: Beside the zip while :func:`update_zip` changes it: the zip's length before (JSON ``{"size": n}``).
APPENDING = ".appending"
#: Beside the zip while it is packed (:func:`replace_zip`, :func:`repack`): the new zip, half written.
PACKING = ".partial"
#: The record of an update is ``{"size": <bytes>}``: one larger is none of ours, and is not read further.
MAX_RECORD_BYTES = 256
MAX_RECORD_VALUES = 8


def _beside(location: str) -> str:
    """What the side files of the zip at ``location`` are named after: beside the zip itself (a symlink to it
    resolved, so every spelling of one zip meets them), a name that fits (:func:`..paths.side_stem`)."""
    return side_stem(os.path.realpath(location))


def check_member_names(archive: zipfile.ZipFile, directory: str) -> None:
    """Refuse an archive with a member whose name would land outside ``directory`` if extracted there
    (a zip opened to be changed is not extracted, but such a name is no member of a Zarr file)."""
    root = os.path.realpath(directory)
    for info in archive.infolist():
        target = os.path.realpath(os.path.join(root, info.filename))
        if os.path.isabs(info.filename) or not target.startswith(root + os.sep):
            raise CorruptStoreError(f"zip member {info.filename!r} points outside the archive")


def replace_zip(directory: str, location: str, ours: Callable[[], bool] | None = None) -> None:
    """Pack ``directory`` into ``location`` (stored, not compressed: chunks are compressed already).

    ``ours`` says whether this writer still holds the zip's lock: a writer whose lock was broken
    (:func:`~hdmf_zarr3.break_lock` while it was running) may have lost its working directory to it, and
    must not replace the zip with what is left.
    """
    _check_ours(directory, location, ours)
    try:
        with _packing(location) as (partial, target):
            with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
                for base, dirs, files in os.walk(directory):
                    dirs.sort()
                    for name in sorted(files):
                        full = os.path.join(base, name)
                        archive.write(full, os.path.relpath(full, directory).replace(os.sep, "/"))
            if ours is not None and not ours():  # checked again: packing takes a while
                raise StoreError(
                    "the write lock was broken while this writer was packing the zip; the zip was not replaced",
                    location,
                )
    except BaseException as exc:  # a full disk, Ctrl-C: the old zip stays, the partial one goes
        remove_tree(directory)
        if isinstance(exc, OSError) and not isinstance(exc, StoreError):
            error = StoreError(f"cannot pack the zip ({exc}); the zip was not replaced", location)
            raise _with_errno(error, exc) from exc
        raise
    remove_tree(directory)


@contextlib.contextmanager
def _packing(location: str) -> Iterator[tuple[str, BinaryIO]]:
    """The half-packed zip ``<zip>.partial`` (its path, and the file open for writing), created exclusively
    beside ``location`` (a name that exists is never written through); moved over ``location`` when the block
    ends, removed if it fails."""
    partial = _beside(location) + PACKING
    try:
        fd = create_side_file(partial)
    except FileExistsError as exc:  # (the leftovers of killed writers were removed when the lock was taken)
        raise StoreError(
            "a file of another writer is where the zip is packed; the zip was not replaced", partial
        ) from exc
    try:
        with os.fdopen(fd, "w+b") as target:
            yield partial, target
        replace_side_file(partial, location)
    except BaseException:
        finish_cleanup(functools.partial(_remove_if_there, partial))
        raise


def update_zip(
    directory: str, location: str, deleted: set[str] | None = None, ours: Callable[[], bool] | None = None
) -> None:
    """Add the members in ``directory`` (changed or new) to the zip at ``location`` in place, and drop
    ``deleted``; see the module's description. Packs the zip again, whole, when unreferenced bytes take
    more than half of it."""
    _check_ours(directory, location, ours)
    changed = sorted(
        os.path.relpath(os.path.join(base, name), directory).replace(os.sep, "/")
        for base, _, names in os.walk(directory)
        for name in names
    )
    drop = set(changed) | set(deleted or ())
    record = _beside(location) + APPENDING
    size = os.path.getsize(location)
    try:  # (nothing to undo if it fails: the zip is untouched)
        _write_synced(record, json.dumps({"size": size}).encode())
    except BaseException as exc:
        remove_tree(directory)
        if isinstance(exc, OSError) and not isinstance(exc, StoreError):
            error = StoreError(f"cannot record the update ({exc}); the zip is as it was", record)
            error.errno = exc.errno
            raise error from exc
        raise
    try:
        live = _append_members(location, directory, changed, drop)
        _fsync(location)
    except BaseException as exc:  # a full disk, Ctrl-C: the zip is cut back to what it was
        # (should the cut itself fail, the record stays and the next writer, or recover(), cuts it back)
        finish_cleanup(functools.partial(_cut_back, location, size, record))
        remove_tree(directory)
        if isinstance(exc, OSError) and not isinstance(exc, StoreError):
            error = StoreError(f"cannot add the changes to the zip ({exc}); {_state_after(location, size)}", location)
            raise _with_errno(error, exc) from exc
        raise
    # the update is complete: a record left by a failed removal is known stale (the zip ends complete)
    try:
        finish_cleanup(functools.partial(_remove_if_there, record))
    finally:
        remove_tree(directory)
    if os.path.getsize(location) > 2 * live + 65536:  # mostly old versions of changed members
        finish_cleanup(functools.partial(repack, location))  # (an optimisation: the zip is whole either way)


def _append_members(location: str, directory: str, changed: list[str], drop: set[str]) -> int:
    """Write the members ``changed`` (from ``directory``) after the zip's end, then a central directory without
    ``drop``; return the bytes its members take. After a failed write no central directory is written (zipfile
    would list the members kept so far, without the root's ``zarr.json``: a zip ending complete, which reads as
    a finished update should the cut back fail too, as on a file system turned read-only)."""
    with open(location, "r+b") as raw:  # (ours: closed first on a failure, the archive can then write nothing)
        archive = zipfile.ZipFile(raw, "a", allowZip64=True)
        try:
            end = raw.seek(0, os.SEEK_END)
            archive.start_dir = end  # after the old central directory, which stays valid until the end
            archive.filelist[:] = [info for info in archive.filelist if info.filename not in drop]
            archive.NameToInfo = {info.filename: info for info in archive.filelist}
            for name in changed:
                archive.write(os.path.join(directory, name), name, compress_type=zipfile.ZIP_STORED)
        except BaseException:
            raw.close()
            with contextlib.suppress(ValueError, OSError):  # (writing to the closed file: refused, as meant)
                archive.close()
            raise
        archive.close()
    return sum(30 + len(i.filename.encode()) + len(i.extra) + i.compress_size for i in archive.filelist)


def _state_after(location: str, size: int) -> str:
    """What a failed update left: the zip as it was, or (the cut back refused) bytes after it to cut back."""
    with contextlib.suppress(OSError):
        if os.path.getsize(location) <= size:
            return "the zip is as it was"
    return (
        "the zip could not be cut back to what it was (the file system refused): run "
        f"hdmf_zarr3.recover({location!r}) once the file system is writable (the next writer also does it)"
    )


def _cut_back(location: str, size: int, record: str) -> None:
    if os.path.getsize(location) > size:
        os.truncate(location, size)
    _remove_if_there(record)


def _remove_if_there(path: str) -> None:
    remove_side_file(path)  # (a symlink is unlinked as a link; absent: nothing to do)


def repack(location: str) -> None:
    """Write the zip again with only the members its central directory lists, then put it in place."""
    with _packing(location) as (_, packed):
        with zipfile.ZipFile(location) as source, zipfile.ZipFile(packed, "w", allowZip64=True) as target:
            for info in source.infolist():
                big = info.file_size > 2**31
                with source.open(info) as member, target.open(info, "w", force_zip64=big) as out:
                    shutil.copyfileobj(member, out, 1 << 20)


def undo_unfinished_update(location: str) -> bool:
    """Cut the zip back to the length recorded before an :func:`update_zip` that did not finish (the
    previous zip, byte for byte); ``False`` when there is no such record."""
    record = _beside(location) + APPENDING
    try:  # (a symlink, FIFO or directory there is refused, naming it: never followed, never waited on)
        fd = open_side_file(record)
        if fd is None:
            return False
        with os.fdopen(fd, "rb") as f:
            raw = f.read(MAX_RECORD_BYTES + 1)  # (a record larger than that is none of ours: not read further)
    except OSError as exc:
        if isinstance(exc, StoreError):
            raise
        raise CorruptStoreError(f"unreadable record of an unfinished zip update ({exc})", record) from exc
    what = "record of an unfinished zip update"
    found = load_json(raw, what, record, MAX_RECORD_BYTES, MAX_RECORD_VALUES)
    size = found.get("size") if isinstance(found, dict) else None
    if type(size) is not int or size < 0:  # (a bool, a float or a string would cut the zip anywhere)
        raise CorruptStoreError(f"{what} is not an object with a byte count 'size': {raw[:80]!r}", record)
    try:
        if os.path.getsize(location) > size and not _ends_complete(location):
            os.truncate(location, size)
            _fsync(location)
    except OSError as exc:  # (a full disk, an I/O error: the record stays, and the next writer cuts it back)
        error = StoreError(
            f"cannot cut the zip back to before an unfinished update ({exc}); run recover again", location
        )
        error.errno = exc.errno
        raise error from exc
    remove_side_file(record)
    return True


def update_unfinished(location: str) -> bool:
    """Whether an :func:`update_zip` of ``location`` started and has not finished (its writer was killed,
    or is still adding the change): the zip may not read as one until it finishes or is undone."""
    return os.path.lexists(_beside(location) + APPENDING) and not _ends_complete(location)


def _ends_complete(location: str) -> bool:
    """Whether the zip ends with its end record (written last by :func:`update_zip`) and reads as a zip:
    the update finished, and only the deletion of its record was missed."""
    try:
        with open(location, "rb") as f:
            f.seek(-22, os.SEEK_END)
            if f.read(4) != b"PK\x05\x06":
                return False
        with zipfile.ZipFile(location) as archive:
            archive.infolist()
    except (OSError, zipfile.BadZipFile, ValueError, EOFError):
        return False
    return True


def _write_synced(path: str, data: bytes) -> None:
    """Create the side file ``path`` holding ``data``, exclusively (never through a name that exists), synced."""
    try:
        fd = create_side_file(path)
    except FileExistsError as exc:  # (a record left by a killed writer was undone when the lock was taken)
        raise StoreError("a record of another update is there; the zip was not changed", path) from exc
    try:
        write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        finish_cleanup(functools.partial(_remove_if_there, path))
        raise
    os.close(fd)


def _fsync(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def abandon_update(directory: str, location: str, deleted: set[str], ours: Callable[[], bool] | None = None) -> None:
    """:func:`abandon` for a zip opened to be changed: a finished write is added in place."""
    if _finished(directory):
        update_zip(directory, location, deleted, ours)
    else:
        remove_tree(directory)


def _with_errno(error: StoreError, cause: OSError) -> StoreError:
    """``error`` with the ``errno`` of the ``OSError`` it stands for (a full disk, a read-only file system)."""
    error.errno = cause.errno
    return error


def _check_ours(directory: str, location: str, ours: Callable[[], bool] | None) -> None:
    if not os.path.isdir(directory) or (ours is not None and not ours()):
        remove_tree(directory)
        raise StoreError(
            "the write lock was broken while this writer was running (its working directory may "
            "be gone); the zip was not replaced",
            location,
        )


def abandon(directory: str, location: str, ours: Callable[[], bool] | None = None) -> None:
    """The working copy of a writer never closed: it replaces the zip only if its root is there and
    complete (what a finished ``write()`` committed); a change not committed yet, a failed write or
    nothing written drops it, and the zip stays as it was. Plain file I/O only (runs at exit)."""
    if _finished(directory):
        replace_zip(directory, location, ours)
    else:
        remove_tree(directory)


def _finished(directory: str) -> bool:
    root_path = os.path.join(directory, "zarr.json")
    try:
        with open(root_path, "rb") as f:
            root = load_json(f.read(MAX_DOCUMENT_BYTES + 1), "zarr.json", root_path)
    except (OSError, CorruptStoreError):  # unreadable: no root this writer finished
        return False
    return isinstance(root, dict) and completion.incomplete(root) is None


def leftovers(location: str) -> list[str]:
    """What killed writers of the zip at ``location`` may have left beside it: working directories
    (``<zip>.<random>.partial/``, private: mode 0700 and this user's, as they are made) and a half-packed
    ``<zip>.partial``. Symbolic links are not counted, nor a directory of that name that anyone may enter (not one
    a writer made: the user's, left alone)."""
    stem = _beside(location)
    parent, name = os.path.split(stem)
    working = re.compile(re.escape(name) + _WORKING)
    try:
        entries = list(os.scandir(parent or "."))
    except OSError:
        return []
    return [
        e.path
        for e in entries
        if (e.name in (name + PACKING, name + APPENDING) and e.is_file(follow_symlinks=False))
        or (working.fullmatch(e.name) and _private_directory(e))
    ]


def _private_directory(entry: os.DirEntry[str]) -> bool:
    try:
        found = entry.stat(follow_symlinks=False)
    except OSError:
        return False
    return stat.S_ISDIR(found.st_mode) and stat.S_IMODE(found.st_mode) == 0o700 and found.st_uid == os.getuid()


def remove_leftovers(location: str) -> list[str]:
    """Remove the :func:`leftovers` of the zip at ``location`` and return their paths.

    Call it only while holding the zip's write lock (or knowing its holder is dead): a live writer's
    working directory looks the same. Best effort: what cannot be removed (permissions) stays, and does
    not keep the file from being opened. Something other than a regular file where the zip is packed
    (``<zip>.partial``: a symlink, a FIFO, a directory) is refused here, naming it, before anything is written.
    """
    removed = [_beside(location) + APPENDING] if undo_unfinished_update(location) else []
    fd = open_side_file(_beside(location) + PACKING)  # (refuses what is not a regular file, never waiting)
    if fd is not None:
        os.close(fd)
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
