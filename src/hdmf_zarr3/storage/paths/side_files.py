"""Files beside a file (a lock, a zip being written, a working copy, an HDF5 destination's temporary),
touched one safe way.

A side file lives in the directory holding the file, which is the user's: the file's own path may be
reached through symlinks there (its parent is resolved, as a reader resolves the file), but the side file's
own name never is. It is created exclusively with ``O_NOFOLLOW`` in its real parent directory (a name that
exists, a symlink planted there included, is never written through), opened without following a symlink and
without waiting on a FIFO, and only when it is a regular file. A private working directory is made with a
fresh name (``mkdtemp``: mode 0700, never one that exists). Errors are those of :mod:`.refusals`.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator

from ...errors import CorruptStoreError, HdmfZarrError
from .confined import CREATE_FLAGS, DIRECTORY_FLAGS, READ_FLAGS
from .refusals import not_a_regular_file, refusal_at, store_error, touched

#: The longest name of a directory entry on the file systems written to (Linux, macOS), in bytes.
NAME_MAX = 255
#: Bytes a side file's stem leaves for what follows it (``.lock``, ``.<32 hex>.partial``, ``.appending``).
SUFFIX_ROOM = 48


def side_stem(path: str | os.PathLike[str]) -> str:
    """What the side files of ``path`` are named after: ``path`` itself when its name leaves
    :data:`SUFFIX_ROOM` bytes for a suffix, else (a name near the 255-byte limit, whose ``.lock`` could not be
    created) its name cut to fit, followed by a digest of the whole name, the same for every writer of it.

    Side files are named ``side_stem(path) + suffix``; a suffix is at most :data:`SUFFIX_ROOM` bytes.
    """
    directory, name = os.path.split(os.fspath(path))
    raw = os.fsencode(name)
    if len(raw) <= NAME_MAX - SUFFIX_ROOM:
        return os.fspath(path)
    digest = hashlib.sha256(raw).hexdigest()[:16]
    end = NAME_MAX - SUFFIX_ROOM - len(digest) - 1
    while end > 0 and raw[end] & 0xC0 == 0x80:  # never inside a UTF-8 character
        end -= 1
    return os.path.join(directory, f"{os.fsdecode(raw[:end])}.{digest}")


def _parent(path: str) -> tuple[int, str]:
    """A descriptor of the real directory holding ``path`` (the caller closes it), and ``path``'s name."""
    directory, name = os.path.split(os.path.abspath(path))
    if not name or name in (".", ".."):
        raise CorruptStoreError("names no file in a directory", path)
    try:
        return os.open(os.path.realpath(directory), DIRECTORY_FLAGS), name
    except OSError as exc:
        raise store_error(exc, path, "open the directory holding it") from exc


@contextlib.contextmanager
def _parents(src: str, dst: str) -> Iterator[tuple[int, str, int, str]]:
    """The real parent directories of ``src`` and ``dst``, opened (as :func:`_parent`), with their last names;
    both closed when the block ends."""
    src_parent, src_name = _parent(src)
    try:
        dst_parent, dst_name = _parent(dst)
        try:
            yield src_parent, src_name, dst_parent, dst_name
        finally:
            os.close(dst_parent)
    finally:
        os.close(src_parent)


def create_side_file(path: str | os.PathLike[str], mode: int = 0o666) -> int:
    """A descriptor of the new, empty regular file ``path`` opened for writing (the caller closes it).

    Parameters
    ----------
    path : str or os.PathLike
        The side file (e.g. ``<file>.lock``); its directory is resolved, its own name never followed.
    mode : int
        Permission bits of the new file (less the umask).

    Returns
    -------
    int
        The descriptor, opened ``O_WRONLY``.

    Raises
    ------
    FileExistsError
        A regular file is there already (e.g. a lock held by another writer).
    UnsafeDataError
        A symlink is there (dangling or not).
    CorruptStoreError
        A directory, FIFO, device or socket is there.
    StoreError
        Any other failure (``errno`` kept); each error names ``path``.
    """
    shown = os.fspath(path)
    parent, name = _parent(shown)
    try:
        touched("create", shown)
        return os.open(name, CREATE_FLAGS, mode, dir_fd=parent)
    except FileExistsError:
        refused = refusal_at(name, parent, shown, want_directory=False)
        if refused is not None:
            raise refused from None
        raise
    except OSError as exc:
        raise store_error(exc, shown, "create it") from exc
    finally:
        os.close(parent)


def link_side_file(source: str | os.PathLike[str], destination: str | os.PathLike[str]) -> None:
    """Give the side file ``source`` (a regular file of ours, written whole) the new name ``destination`` as
    well, with a hard link made in their real parent directories: ``destination`` appears at once with all its
    bytes, and only if nothing is there. A regular file there raises :class:`FileExistsError` (e.g. a lock held by
    another writer); a symlink there (dangling too) :class:`~hdmf_zarr3.errors.UnsafeDataError`, a directory,
    FIFO or device :class:`~hdmf_zarr3.errors.CorruptStoreError`; any other failure
    :class:`~hdmf_zarr3.errors.StoreError` with its ``errno``; each naming ``destination``."""
    src, dst = os.fspath(source), os.fspath(destination)
    with _parents(src, dst) as (src_parent, src_name, dst_parent, dst_name):
        try:
            touched("link", dst)
            os.link(src_name, dst_name, src_dir_fd=src_parent, dst_dir_fd=dst_parent, follow_symlinks=False)
        except FileExistsError:
            refused = refusal_at(dst_name, dst_parent, dst, want_directory=False)
            if refused is not None:
                raise refused from None
            raise
        except OSError as exc:
            raise store_error(exc, dst, f"link {src} to it") from exc


def open_side_file(path: str | os.PathLike[str], *, writable: bool = False) -> int | None:
    """A descriptor of the existing regular file ``path``, never following, waiting on or opening anything else.

    Parameters
    ----------
    path : str or os.PathLike
        The side file; its directory is resolved, its own name never followed.
    writable : bool
        Open it read-write instead of read-only.

    Returns
    -------
    int or None
        The descriptor (the caller closes it); ``None`` when nothing is there.

    Raises
    ------
    UnsafeDataError
        A symlink is there.
    CorruptStoreError
        A directory, FIFO, device or socket is there (a device is not even opened).
    """
    shown = os.fspath(path)
    parent, name = _parent(shown)
    try:
        refused = refusal_at(name, parent, shown, want_directory=False)
        if refused is not None:
            raise refused
        flags = (READ_FLAGS & ~os.O_RDONLY) | os.O_RDWR if writable else READ_FLAGS
        try:
            touched("open", shown)
            fd = os.open(name, flags, dir_fd=parent)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise refusal_at(name, parent, shown, want_directory=False) or store_error(exc, shown, "open it") from exc
    finally:
        os.close(parent)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise not_a_regular_file(shown, mode)
    return fd


def remove_side_file(path: str | os.PathLike[str]) -> bool:
    """Unlink the file ``path`` (a symlink there is unlinked as a link, never followed); ``False`` when
    absent. A directory there is refused: a side file is never one."""
    shown = os.fspath(path)
    parent, name = _parent(shown)
    try:
        touched("unlink", shown)
        os.unlink(name, dir_fd=parent)
        return True
    except FileNotFoundError:
        return False
    except OSError as exc:
        if exc.errno in (errno.EISDIR, errno.EPERM):
            refused = refusal_at(name, parent, shown, want_directory=False)
            if refused is not None:
                raise refused from exc
        raise store_error(exc, shown, "delete it") from exc
    finally:
        os.close(parent)


def replace_side_file(source: str | os.PathLike[str], destination: str | os.PathLike[str]) -> None:
    """Rename the side file (or private directory) ``source`` to ``destination``, each name taken in its real
    parent directory without following it. A symlink, FIFO or device at ``destination`` is refused."""
    src, dst = os.fspath(source), os.fspath(destination)
    with _parents(src, dst) as (src_parent, src_name, dst_parent, dst_name):
        try:
            info = os.stat(src_name, dir_fd=src_parent, follow_symlinks=False)
            refused = refusal_at(dst_name, dst_parent, dst, want_directory=stat.S_ISDIR(info.st_mode))
            if refused is not None:
                raise refused
            touched("rename", dst)
            os.replace(src_name, dst_name, src_dir_fd=src_parent, dst_dir_fd=dst_parent)
        except HdmfZarrError:
            raise
        except OSError as exc:
            raise store_error(exc, dst, f"rename {src} to it") from exc


def private_directory(beside: str | os.PathLike[str], prefix: str, suffix: str = "") -> str:
    """A new, empty directory only this user can enter (mode 0700), with a fresh name starting with
    ``prefix`` (and ending with ``suffix``), in the real directory holding ``beside``; its path is returned."""
    shown = os.fspath(beside)
    directory = os.path.realpath(os.path.dirname(os.path.abspath(shown)))
    try:
        touched("mkdir", os.path.join(os.path.dirname(os.path.abspath(shown)), prefix))
        return tempfile.mkdtemp(suffix=suffix, prefix=prefix, dir=directory)
    except OSError as exc:
        raise store_error(exc, shown, "make a working directory beside it") from exc


def remove_private_directory(path: str | os.PathLike[str]) -> None:
    """Delete the directory ``path`` (taken in its real parent) and all it holds, never entering a symlink;
    errors are ignored (what cannot be deleted stays: it is a working copy, not the file)."""
    shown = os.fspath(path)
    with contextlib.suppress(HdmfZarrError):
        parent, name = _parent(shown)
        try:
            touched("rmtree", shown)
            shutil.rmtree(name, dir_fd=parent, ignore_errors=True)
        finally:
            os.close(parent)
