"""Reading stored objects of a local directory: only regular files inside it, never more bytes than allowed.

A key is followed one path component at a time; a symlink leading out of the directory, a loop, a named pipe,
a device or a directory is refused before anything is opened, and what was opened is checked again
(``fstat``). :func:`read_file` reads one object (or one range of it) per call; :class:`ObjectFile` keeps one
object open for several reads, one after another: a shard's index, then runs of its chunks in the order they
are stored, which the kernel's readahead then reads ahead of (docs/performance.md).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable

from zarr.abc.buffer import Buffer, BufferPrototype
from zarr.abc.store import ByteRequest, OffsetByteRequest, RangeByteRequest, SuffixByteRequest

from ...errors import CorruptStoreError, StoreError, UnsafeDataError
from ..paths import kind_of

_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)


def too_large(path: str, what: str, size: int, bound: int) -> CorruptStoreError:
    """The error of a stored object of ``size`` bytes where its metadata allows ``bound``."""
    return CorruptStoreError(f"{what} is {size} bytes, more than the {bound} its metadata allows", path)


def locate(root: str, key: str, node: str, what: str) -> str | None:
    """The path of ``key`` under ``root`` if it is a regular file inside ``root``; ``None`` if absent; an error
    for anything else (a symlink out, a loop, a FIFO, a device, a directory)."""
    path, info = root, None
    parts = key.split("/")
    for i, part in enumerate(parts):
        path = os.path.join(path, part)
        try:
            info = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        if stat.S_ISLNK(info.st_mode):
            target = os.path.realpath(path)
            if os.path.commonpath([target, root]) != root:
                raise UnsafeDataError(f"{what} is a symlink to {target}, outside the file; it is not read", node)
            try:
                info = os.stat(path)
            except FileNotFoundError:
                return None
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise CorruptStoreError(f"{what} is a loop of symlinks", node) from exc
                raise
        if i < len(parts) - 1 and not stat.S_ISDIR(info.st_mode):
            return None  # as LocalStore: a key below a file is absent
    if info is None or not stat.S_ISREG(info.st_mode):
        kind = kind_of(info.st_mode) if info is not None else "not a regular file"
        raise CorruptStoreError(f"{what} is {kind}, not a regular file; it is not read", node)
    return path


def _open_regular(root: str, key: str, node: str, what: str, bound: int) -> tuple[int, int] | None:
    """``(descriptor, size)`` of ``key`` under ``root`` opened for reading (``None`` if absent), refusing
    anything but a regular file inside ``root`` no larger than ``bound``; the caller closes it."""
    path = locate(root, key, node, what)
    if path is None:
        return None
    fd = os.open(path, _OPEN_FLAGS)
    try:
        info = os.fstat(fd)  # what was opened, not what the name pointed to a moment ago
        if not stat.S_ISREG(info.st_mode):
            raise CorruptStoreError(f"{what} is not a regular file; it is not read", node)
        if info.st_size > bound:
            raise too_large(node, what, info.st_size, bound)
    except BaseException:
        os.close(fd)
        raise
    return fd, info.st_size


def read_file(
    root: str, key: str, node: str, what: str, bound: int, prototype: BufferPrototype, byte_range: ByteRequest | None
) -> Buffer | None:
    """The bytes of ``key`` under ``root`` (``None`` if absent), refusing anything but a regular file inside
    ``root`` no larger than ``bound``. Nothing but such a file is ever opened."""
    try:
        opened = _open_regular(root, key, node, what, bound)
        if opened is None:
            return None
        fd, size = opened
        try:
            start, stop = byte_span(byte_range, size)
            data = os.pread(fd, stop - start, start) if stop > start else b""
        finally:
            os.close(fd)
    except (CorruptStoreError, UnsafeDataError):
        raise
    except OSError as exc:
        raise _unreadable(exc, node, what) from exc
    return prototype.buffer.from_bytes(data)


def _unreadable(exc: OSError, node: str, what: str) -> StoreError:
    """A symlink loop, a permission, a disk error while reading ``what``: our error naming it."""
    return StoreError(f"cannot read {what}: {exc.strerror or exc}", node)


def byte_span(byte_range: ByteRequest | None, size: int) -> tuple[int, int]:
    """``[start, stop)`` of a byte request on an object of ``size`` bytes (as LocalStore reads it)."""
    if byte_range is None:
        return 0, size
    if isinstance(byte_range, RangeByteRequest):
        return min(byte_range.start, size), min(max(byte_range.start, byte_range.end), size)
    if isinstance(byte_range, OffsetByteRequest):
        return min(byte_range.offset, size), size
    if isinstance(byte_range, SuffixByteRequest):
        return max(0, size - byte_range.suffix), size
    raise TypeError(f"Unexpected byte_range, got {byte_range}.")


class ObjectFile:
    """One stored object opened once for several reads (from any thread: each read is one ``pread``).

    Made by :func:`open_object`; ``after_read`` runs after every read (the store's check that its directory
    was not replaced meanwhile: bytes read after a swap are never returned). Close it, or use it as a context.
    """

    def __init__(self, fd: int, size: int, node: str, what: str, after_read: Callable[[], None]):
        self._fd, self.size, self.node, self.what, self._after_read = fd, size, node, what, after_read

    def read(self, start: int, stop: int) -> bytes:
        """The bytes ``[start, stop)``, clipped to the object's size as a ranged read is."""
        start, stop = min(max(start, 0), self.size), min(max(start, stop), self.size)
        try:
            data = os.pread(self._fd, stop - start, start) if stop > start else b""
        except OSError as exc:  # a disk error, a file system gone
            raise _unreadable(exc, self.node, self.what) from exc
        self._after_read()
        return data

    def close(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)

    def __enter__(self) -> ObjectFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_object(
    root: str, key: str, node: str, what: str, bound: int, after_read: Callable[[], None]
) -> ObjectFile | None:
    """``key`` under ``root`` opened for several reads (``None`` if absent), with :func:`read_file`'s checks."""
    try:
        opened = _open_regular(root, key, node, what, bound)
    except (CorruptStoreError, UnsafeDataError):
        raise
    except OSError as exc:
        raise _unreadable(exc, node, what) from exc
    return None if opened is None else ObjectFile(*opened, node, what, after_read)
