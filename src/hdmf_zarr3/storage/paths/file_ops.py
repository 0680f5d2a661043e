"""The small operations :class:`.confined.RootDirectory` is made of: a key split into names, a temporary
name, a whole write to a descriptor, a tree deleted below a directory descriptor."""

from __future__ import annotations

import os
import secrets
import shutil
import stat

from ...errors import UnsafeDataError
from .refusals import store_error


def split_key(key: str, root: str) -> tuple[str, ...]:
    """The names of ``key`` (``/``-separated, relative to the file's root); ``.``, ``..`` and empty names are
    refused: a key never leaves the file."""
    parts = tuple(part for part in key.split("/") if part)
    if any(part in (".", "..") for part in parts):
        raise UnsafeDataError(f"the key {key!r} leaves its directory; it is not used", os.path.join(root, key))
    return parts


def temporary_name(name: str, token: str | None = None) -> str:
    """A fresh name beside ``name`` for a file written before it is renamed to ``name`` (the form
    :data:`hdmf_zarr3.storage.stores.nodes.INTERRUPTED_WRITE` recognizes as left by an interrupted write);
    ``token``: its 32 hex digits (a fresh random one by default)."""
    return f"{name}.{token or secrets.token_hex(16)}.partial"


def is_regular_file(parent: int, name: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        return False


def write_all(fd: int, data: bytes | memoryview) -> None:
    """Write all of ``data`` to ``fd``."""
    view = memoryview(data).cast("B")
    while view:
        view = view[os.write(fd, view) :]


def remove_tree_at(parent: int, name: str, path: str) -> None:
    """Delete the directory ``name`` of ``parent`` and all it holds, never entering a symlink (shutil's
    descriptor-based walk: each directory opened with ``O_NOFOLLOW``, a symlink unlinked as a link)."""
    failures: list[OSError] = []

    def failed(function: object, failed_path: str, exc: BaseException) -> None:
        if isinstance(exc, OSError) and not isinstance(exc, FileNotFoundError):
            failures.append(exc)

    shutil.rmtree(name, dir_fd=parent, onexc=failed)
    if failures:
        raise store_error(failures[0], path, "delete what it holds")
