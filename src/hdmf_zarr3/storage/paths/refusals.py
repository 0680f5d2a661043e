"""What is wrong with a name found where a file or a directory of ours belongs, as our typed errors.

Every refusal names the path (``.path`` is the path on disk, as the caller spelled the file's root, joined
with the names inside it) and what was found there. A symlink anywhere under the file is refused with
:class:`~hdmf_zarr3.errors.UnsafeDataError` (a write never follows one: it could lead out of the file);
a FIFO, device, socket or directory where a regular file belongs, or anything but a directory where a
directory belongs, with :class:`~hdmf_zarr3.errors.CorruptStoreError`; any other failure of the system
call with :class:`~hdmf_zarr3.errors.StoreError` carrying its ``errno``.
"""

from __future__ import annotations

import os
import stat
import sys

from ...errors import CorruptStoreError, StoreError, UnsafeDataError

#: The audit event every operation of this room raises with ``(operation, path)`` before it touches
#: ``path`` (tests trace with it what a write touches; ``sys.audit`` costs nothing without hooks).
AUDIT_EVENT = "hdmf_zarr3.paths.touch"

_KINDS = [
    (stat.S_ISREG, "a regular file"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISLNK, "a symlink"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
]


def touched(operation: str, path: str) -> None:
    """Announce that ``operation`` is about to touch ``path`` (the audit event :data:`AUDIT_EVENT`)."""
    sys.audit(AUDIT_EVENT, operation, path)


def kind_of(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is, in words ("a named pipe (FIFO)", "a directory", ...)."""
    return next((kind for test, kind in _KINDS if test(mode)), "not a regular file")


def symlink_refused(path: str, target: str | None) -> UnsafeDataError:
    """The error of a symlink found at ``path`` (leading to ``target``) where a write would pass."""
    where = f" to {target}" if target else ""
    return UnsafeDataError(f"is a symlink{where}; it is never followed (it could lead out of the file)", path)


def not_a_directory(path: str, mode: int) -> CorruptStoreError:
    """The error of something other than a directory (of ``st_mode`` ``mode``) where one belongs."""
    return CorruptStoreError(f"is {kind_of(mode)} where a directory belongs; nothing is written through it", path)


def not_a_regular_file(path: str, mode: int) -> CorruptStoreError:
    """The error of something other than a regular file (of ``st_mode`` ``mode``) where one belongs."""
    return CorruptStoreError(f"is {kind_of(mode)} where a regular file belongs; it is not opened", path)


def store_error(exc: OSError, path: str, doing: str) -> StoreError:
    """``exc`` (raised while ``doing`` something to ``path``) as a :class:`StoreError` with its ``errno``."""
    error = StoreError(f"cannot {doing}: {exc.strerror or exc}", path)
    # (an OSError still: code checking ENOSPC keeps working; strerror is left unset, or str() would drop the path)
    error.errno = exc.errno
    return error


def refusal_at(name: str, dir_fd: int, path: str, want_directory: bool) -> CorruptStoreError | UnsafeDataError | None:
    """Why the entry ``name`` of the directory ``dir_fd`` (shown as ``path``) cannot be used as a directory
    (``want_directory``) or a regular file; ``None`` if it can, or if it is absent."""
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError:  # (unexaminable: the caller raises what it got)
        return None
    if stat.S_ISLNK(info.st_mode):
        try:
            target: str | None = os.readlink(name, dir_fd=dir_fd)
        except OSError:
            target = None
        return symlink_refused(path, target)
    if want_directory and not stat.S_ISDIR(info.st_mode):
        return not_a_directory(path, info.st_mode)
    if not want_directory and not stat.S_ISREG(info.st_mode):
        return not_a_regular_file(path, info.st_mode)
    return None
