"""Every path inside a local file touched one safe way: below its real root, never through a symlink.

A file's directory may hold, shipped or planted, a symlink in place of a group (``acquisition/`` leading
to another directory), a FIFO or device in place of a chunk, a directory in place of a document. A write
that opens ``root + "/" + key`` follows all of them: it changes files outside the file, or blocks forever
on a FIFO. :class:`RootDirectory` opens the file's real root once and reaches every key from it one name
at a time, each directory opened relative to its parent's descriptor with ``O_NOFOLLOW | O_DIRECTORY``
(a symlink is refused by the kernel, so no check can be raced), the last name with ``O_NOFOLLOW |
O_NONBLOCK`` and then ``fstat``-ed: only regular files and directories are used; a FIFO never blocks, a
device is never opened for writing. New files are created exclusively (``O_EXCL``) under a temporary name
and renamed into place relative to the directory descriptor; deletions never enter a symlink (one inside
the file is unlinked as a link). The directory descriptors are kept for the life of the object, so a batch
of thousands of keys opens each directory once.

Errors are typed (:mod:`.refusals`): a symlink is :class:`~hdmf_zarr3.errors.UnsafeDataError`, another
kind of file where a file or a directory belongs :class:`~hdmf_zarr3.errors.CorruptStoreError`, any other
failure :class:`~hdmf_zarr3.errors.StoreError` with its ``errno``; each names the path on disk.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading
from collections.abc import Iterator
from types import TracebackType

from ...errors import CorruptStoreError, HdmfZarrError, StoreError
from .file_ops import is_regular_file, remove_tree_at, split_key, temporary_name, write_all
from .refusals import not_a_directory, not_a_regular_file, refusal_at, store_error, touched

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC | getattr(os, "O_NOCTTY", 0)
CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC


class RootDirectory:
    """The directory of a local file, every key below it reached without following a symlink.

    Parameters
    ----------
    root : str or os.PathLike
        The file's directory. Its own path is resolved (a symlinked root is the file it leads to, as a
        reader opens it); below it nothing is followed.
    create : bool
        Create the root (and its parents) when it does not exist.

    Use it as a context manager, or call :meth:`close`; the directory descriptors are kept until then. One
    object may be used by several threads.
    """

    def __init__(self, root: str | os.PathLike[str], *, create: bool = False) -> None:
        self.root = os.fspath(root)
        real = os.path.realpath(self.root)
        try:
            if create and not os.path.isdir(real):  # (the path as given: a dangling symlink is not made real)
                touched("mkdir", self.root)
                os.makedirs(self.root, exist_ok=True)
                real = os.path.realpath(self.root)
            touched("open", self.root)
            fd = os.open(real, DIRECTORY_FLAGS)
        except OSError as exc:
            if exc.errno == errno.ENOTDIR:
                raise CorruptStoreError("is not a directory; the file's root must be one", self.root) from exc
            raise store_error(exc, self.root, "open the file's directory") from exc
        self._directories: dict[tuple[str, ...], int] = {(): fd}
        self._lock = threading.Lock()

    def __enter__(self) -> RootDirectory:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Close every directory descriptor (the object cannot be used afterwards)."""
        with self._lock:
            descriptors, self._directories = list(self._directories.values()), {}
        for fd in descriptors:
            with contextlib.suppress(OSError):
                os.close(fd)

    def path_of(self, key: str | tuple[str, ...]) -> str:
        """The path on disk of ``key`` as errors name it (the root as given, joined with the key's names)."""
        parts = key if isinstance(key, tuple) else split_key(key, self.root)
        return os.path.join(self.root, *parts)

    # -- directories ------------------------------------------------------------------------------------

    def directory(self, parts: tuple[str, ...], create: bool = False) -> int | None:
        """The descriptor of the directory ``parts`` below the root (kept open by this object); ``None`` when it
        does not exist and ``create`` is false. Anything but a directory on the way is refused."""
        found = self._directories.get(parts)  # (one dict lookup is atomic: the lock guards only insertions)
        if found is not None:
            return found
        parent = self.directory(parts[:-1], create)
        if parent is None:
            return None
        fd = self._open_child(parent, parts, create)
        if fd is None:
            return None
        with self._lock:
            if parts in self._directories:  # (another thread opened it meanwhile)
                os.close(fd)
                return self._directories[parts]
            self._directories[parts] = fd
        return fd

    def _open_child(self, parent: int, parts: tuple[str, ...], create: bool) -> int | None:
        name, path = parts[-1], self.path_of(parts)
        for _ in range(3):  # (a directory made, or removed, by another writer meanwhile)
            try:
                touched("open", path)
                return os.open(name, DIRECTORY_FLAGS, dir_fd=parent)
            except FileNotFoundError:
                if not create:
                    return None
                refused = refusal_at(name, parent, path, want_directory=True)  # (a dangling symlink)
                if refused is not None:
                    raise refused from None
                try:
                    touched("mkdir", path)
                    os.mkdir(name, 0o777, dir_fd=parent)
                except FileExistsError:
                    continue
                except OSError as exc:
                    raise store_error(exc, path, "create a directory") from exc
            except NotADirectoryError as exc:
                if create or not is_regular_file(parent, name):
                    raise self._refusal(parent, name, path, exc, want_directory=True) from exc
                return None  # (a key below a regular file is absent to a reader, as zarr sees it)
            except OSError as exc:
                raise self._refusal(parent, name, path, exc, want_directory=True) from exc
        raise StoreError("appears and disappears while it is created", path)

    def _refusal(
        self, parent: int, name: str, path: str, exc: OSError, want_directory: bool, doing: str = "open it"
    ) -> HdmfZarrError:
        refused = refusal_at(name, parent, path, want_directory)
        if refused is not None:
            return refused
        return store_error(exc, path, doing)

    def make_directories(self, key: str) -> None:
        """Create the directory ``key`` and its parents below the root (existing ones are kept)."""
        self.directory(split_key(key, self.root), create=True)

    def entry(self, key: str) -> os.stat_result | None:
        """What ``key`` is, without following it (``lstat``); ``None`` when absent (or below a file)."""
        parts = split_key(key, self.root)
        if not parts:
            return os.fstat(self._directories[()])
        parent = self.directory(parts[:-1])
        if parent is None:
            return None
        try:
            return os.stat(parts[-1], dir_fd=parent, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise store_error(exc, self.path_of(parts), "examine it") from exc

    def list_directory(self, key: str) -> list[str]:
        """The names in the directory ``key`` (empty when it does not exist); a symlink on the way is refused."""
        fd = self.directory(split_key(key, self.root))
        if fd is None:
            return []
        touched("listdir", self.path_of(key))
        try:
            return os.listdir(fd)
        except OSError as exc:
            raise store_error(exc, self.path_of(key), "list it") from exc

    # -- files ------------------------------------------------------------------------------------------

    def open_file(self, key: str) -> int | None:
        """A descriptor of the regular file ``key`` opened for reading (the caller closes it); ``None`` when
        absent. A symlink, FIFO, device, socket or directory is refused, never waited on."""
        parts = split_key(key, self.root)
        parent = self.directory(parts[:-1])
        if parent is None:
            return None
        path = self.path_of(parts)
        refused = refusal_at(parts[-1], parent, path, want_directory=False)  # (a device is not even opened)
        if refused is not None:
            raise refused
        try:
            touched("open", path)
            fd = os.open(parts[-1], READ_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise self._refusal(parent, parts[-1], path, exc, want_directory=False) from exc
        mode = os.fstat(fd).st_mode  # what was opened, not what the name was a moment ago
        if not stat.S_ISREG(mode):
            os.close(fd)
            raise not_a_regular_file(path, mode)
        return fd

    def read_bytes(self, key: str, limit: int | None = None) -> bytes | None:
        """The bytes of the regular file ``key`` (``None`` when absent); a file larger than ``limit`` bytes
        is refused with :class:`CorruptStoreError` before it is read."""
        fd = self.open_file(key)
        if fd is None:
            return None
        with os.fdopen(fd, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if limit is not None and size > limit:
                raise CorruptStoreError(f"is {size} bytes, more than the {limit} it may take", self.path_of(key))
            return handle.read()

    def create_file(self, key: str, mode: int = 0o666) -> int:
        """A descriptor of the new, empty regular file ``key`` opened for writing (``O_EXCL``: a name that
        exists, a dangling symlink included, raises :class:`FileExistsError`); parents are created."""
        parts = split_key(key, self.root)
        parent = self.directory(parts[:-1], create=True)
        assert parent is not None
        path = self.path_of(parts)
        try:
            touched("create", path)
            return os.open(parts[-1], CREATE_FLAGS, mode, dir_fd=parent)
        except FileExistsError:
            refused = refusal_at(parts[-1], parent, path, want_directory=False)
            if refused is not None:
                raise refused from None
            raise
        except OSError as exc:
            raise store_error(exc, path, "create it") from exc

    def write(
        self, key: str, data: bytes | memoryview, *, exclusive: bool = False, temporary: str | None = None
    ) -> None:
        """Store ``data`` as the regular file ``key``, whole: written to a new temporary name beside it, then
        renamed into place (``exclusive``: linked into place, :class:`FileExistsError` if ``key`` exists).
        Parents are created; a symlink, FIFO, device or directory at ``key`` is refused, never written through.
        ``temporary``: the 32 hex digits of the temporary name (:func:`temporary_name`)."""
        parts = split_key(key, self.root)
        parent = self.directory(parts[:-1], create=True)
        assert parent is not None
        name, path = parts[-1], self.path_of(parts)
        refused = refusal_at(name, parent, path, want_directory=False)
        if refused is not None:
            raise refused
        temporary = temporary_name(name, temporary)
        try:
            touched("create", os.path.join(os.path.dirname(path), temporary))
            fd = os.open(temporary, CREATE_FLAGS, 0o666, dir_fd=parent)  # (a fresh name: O_EXCL never follows)
        except OSError as exc:
            raise store_error(exc, path, "store it") from exc
        try:
            try:
                write_all(fd, data)
            finally:
                os.close(fd)
            touched("rename", path)
            if exclusive:
                os.link(temporary, name, src_dir_fd=parent, dst_dir_fd=parent, follow_symlinks=False)
            else:
                os.replace(temporary, name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=parent)
            if isinstance(exc, OSError) and not isinstance(exc, (FileExistsError, HdmfZarrError)):
                raise self._refusal(parent, name, path, exc, want_directory=False, doing="store it") from exc
            raise
        if exclusive:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=parent)

    def replace(self, source: str, destination: str) -> None:
        """Rename ``source`` to ``destination`` (both keys below the root; ``destination``'s parents are
        created, a regular file there replaced). A symlink on either way, or at ``destination``, is refused."""
        src_parts, dst_parts = split_key(source, self.root), split_key(destination, self.root)
        src_path, dst_path = self.path_of(src_parts), self.path_of(dst_parts)
        src_dir = self.directory(src_parts[:-1])
        found = None if src_dir is None else self.entry(source)
        if src_dir is None or found is None:
            raise StoreError("does not exist; it cannot be renamed", src_path)
        if stat.S_ISLNK(found.st_mode):
            raise refusal_at(src_parts[-1], src_dir, src_path, want_directory=False) or not_a_regular_file(
                src_path, found.st_mode
            )
        dst_dir = self.directory(dst_parts[:-1], create=True)
        assert dst_dir is not None
        refused = refusal_at(dst_parts[-1], dst_dir, dst_path, want_directory=stat.S_ISDIR(found.st_mode))
        if refused is not None:
            raise refused
        touched("rename", dst_path)
        try:
            os.replace(src_parts[-1], dst_parts[-1], src_dir_fd=src_dir, dst_dir_fd=dst_dir)
        except OSError as exc:
            raise store_error(exc, dst_path, f"rename {src_path} to it") from exc
        if stat.S_ISDIR(found.st_mode):  # (kept descriptors would name the old places)
            self._forget(src_parts)
            self._forget(dst_parts)

    def link(self, source: str, destination: str) -> None:
        """Make ``destination`` a hard link to the regular file ``source`` (both keys below the root;
        ``destination``'s parents are created). :class:`FileExistsError` if ``destination`` exists."""
        src_parts, dst_parts = split_key(source, self.root), split_key(destination, self.root)
        src_dir = self.directory(src_parts[:-1])
        src_path, dst_path = self.path_of(src_parts), self.path_of(dst_parts)
        if src_dir is None:
            raise FileNotFoundError(errno.ENOENT, "no such file", src_path)
        refused = refusal_at(src_parts[-1], src_dir, src_path, want_directory=False)
        if refused is not None:
            raise refused
        dst_dir = self.directory(dst_parts[:-1], create=True)
        assert dst_dir is not None
        touched("link", dst_path)
        try:
            os.link(src_parts[-1], dst_parts[-1], src_dir_fd=src_dir, dst_dir_fd=dst_dir, follow_symlinks=False)
        except (FileExistsError, FileNotFoundError):
            raise
        except OSError as exc:
            raise store_error(exc, dst_path, f"link {src_path} to it") from exc

    # -- deletions --------------------------------------------------------------------------------------

    def remove(self, key: str) -> bool:
        """Delete ``key``: a file (or a symlink, as a link) is unlinked, a directory removed with all it holds,
        never entering a symlink. ``False`` when there was nothing to delete."""
        parts = split_key(key, self.root)
        if not parts:
            raise StoreError("is the file's root; remove_tree of the root is not done here", self.root)
        parent = self.directory(parts[:-1])
        if parent is None:
            return False
        name, path = parts[-1], self.path_of(parts)
        try:
            info = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise store_error(exc, path, "examine it") from exc
        if stat.S_ISDIR(info.st_mode):
            self._forget(parts)
            touched("rmtree", path)
            remove_tree_at(parent, name, path)
        else:
            touched("unlink", path)
            try:
                os.unlink(name, dir_fd=parent)
            except FileNotFoundError:
                return False
            except OSError as exc:
                raise store_error(exc, path, "delete it") from exc
        return True

    def remove_directory(self, key: str) -> bool:
        """Delete the directory ``key`` with all it holds (``False`` if absent); a file there is refused."""
        info = self.entry(key)
        if info is not None and not stat.S_ISDIR(info.st_mode):
            raise not_a_directory(self.path_of(key), info.st_mode)
        return self.remove(key) if info is not None else False

    def clear(self) -> None:
        """Delete everything inside the root, keeping the root itself."""
        for name in self.list_directory(""):
            self.remove(name)

    def _forget(self, parts: tuple[str, ...]) -> None:
        """Close the kept descriptors of ``parts`` and below (the directory is about to be deleted)."""
        with self._lock:
            gone = [p for p in self._directories if p[: len(parts)] == parts]
            descriptors = [self._directories.pop(p) for p in gone]
        for fd in descriptors:
            with contextlib.suppress(OSError):
                os.close(fd)


@contextlib.contextmanager
def under(root: str | os.PathLike[str], *, create: bool = False) -> Iterator[RootDirectory]:
    """``with under(root) as tree:`` a :class:`RootDirectory` closed at the end of the block."""
    tree = RootDirectory(root, create=create)
    try:
        yield tree
    finally:
        tree.close()
