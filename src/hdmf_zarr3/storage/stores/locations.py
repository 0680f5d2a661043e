"""Where a file lives: a local path or a URL, and paths of other files relative to it.

Links and references name the file they point into relative to the directory of the file that holds
them (``"../raw.nwb.zarr"``), so a pair of files can move together between disks and buckets. These
helpers do that arithmetic for local paths (``os.path``) and for URLs (POSIX paths below the
scheme and bucket), and never fall back on the process's working directory for a URL.
"""

from __future__ import annotations

import os
import posixpath
from urllib.parse import urlsplit

from zarr.abc.store import Store
from zarr.storage import LocalStore

#: Schemes opened through obstore; ``file://`` URLs are local paths.
REMOTE_SCHEMES = frozenset({"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "azure", "http", "https"})


def is_url(location: str) -> bool:
    """True for ``scheme://...`` locations (``file://`` included), False for local paths."""
    scheme = urlsplit(location).scheme
    return len(scheme) > 1 and "://" in location  # one letter: a Windows drive


def is_remote(location: str) -> bool:
    return is_url(location) and urlsplit(location).scheme.lower() in REMOTE_SCHEMES


def local_path(location: str) -> str:
    """The absolute local path of a local location (a path or a ``file://`` URL)."""
    if is_url(location):
        parts = urlsplit(location)
        if parts.scheme.lower() != "file":
            raise ValueError(f"{location!r} is not a local path")
        return os.path.abspath(parts.path)
    return os.path.abspath(os.path.expanduser(location))


def absolute(location: str) -> str:
    """A canonical form: absolute local path, or URL with a normalized path and no trailing slash."""
    if not is_url(location) or urlsplit(location).scheme.lower() == "file":
        return local_path(location)
    parts = urlsplit(location)
    path = posixpath.normpath("/" + parts.path.lstrip("/")) if parts.path.strip("/") else ""
    return f"{parts.scheme.lower()}://{parts.netloc}{path if path != '/' else ''}"


def basename(location: str) -> str:
    """The last component of a path or URL (the file's own name)."""
    location = absolute(location).rstrip("/")
    if not is_url(location):
        return os.path.basename(location)
    return posixpath.basename(urlsplit(location).path.rstrip("/"))


def parent(location: str) -> str:
    """The directory (or URL prefix) holding ``location``."""
    location = absolute(location)
    if not is_url(location):
        return os.path.dirname(location)
    parts = urlsplit(location)
    return f"{parts.scheme}://{parts.netloc}{posixpath.dirname(parts.path) if parts.path else ''}".rstrip("/")


def join(directory: str, relative: str) -> str:
    """``relative`` (or an absolute path or URL) resolved against ``directory``."""
    if is_url(relative) or os.path.isabs(relative) and not is_url(directory):
        return absolute(relative)
    if not is_url(directory):
        return os.path.normpath(os.path.join(directory, relative))
    parts = urlsplit(directory)
    path = posixpath.normpath(posixpath.join("/" + parts.path.lstrip("/"), relative))
    return f"{parts.scheme}://{parts.netloc}{path if path != '/' else ''}"


def relative_to(target: str, directory: str | None) -> str:
    """``target`` relative to ``directory`` when both are on the same disk or bucket, else absolute."""
    target = absolute(target)
    if directory is None:
        return target
    if not is_url(target) and not is_url(directory):
        return os.path.relpath(target, directory).replace(os.sep, "/")
    a, b = urlsplit(target), urlsplit(directory)
    if not (is_url(target) and is_url(directory)) or (a.scheme, a.netloc) != (b.scheme, b.netloc):
        return target
    return posixpath.relpath("/" + a.path.lstrip("/"), "/" + b.path.lstrip("/"))


def same(a: str | None, b: str | None) -> bool:
    """Whether two locations name the same file."""
    return a is not None and b is not None and absolute(a) == absolute(b)


def resolved(location: str) -> str:
    """The canonical identity of a location: symlinks resolved for local paths, a normalized URL."""
    if is_url(location) and urlsplit(location).scheme.lower() != "file":
        return absolute(location)
    return os.path.realpath(local_path(location))


def overlap(a: str, b: str) -> str | None:
    """How location ``a`` relates to ``b``: ``"same"``, ``"inside"`` (``a`` lies inside ``b``),
    ``"contains"`` (``b`` lies inside ``a``), or ``None`` when they are apart."""
    a, b = resolved(a).rstrip("/") or "/", resolved(b).rstrip("/") or "/"
    if a == b:
        return "same"
    sep = "/" if is_url(a) else os.sep
    if a.startswith(b.rstrip(sep) + sep):
        return "inside"
    if b.startswith(a.rstrip(sep) + sep):
        return "contains"
    return None


def store_location(store: Store) -> str | None:
    """Where a store the caller opened lives, when it says (local directories)."""
    root = getattr(store, "root", None)
    return os.path.abspath(root) if isinstance(store, LocalStore) and root is not None else None
