"""Where a file lives: a local path or a URL, and paths of other files relative to it.

Links and references name the file they point into relative to the directory of the file that holds
them (``"../raw.nwb.zarr"``), so a pair of files can move together between disks and buckets. These
helpers do that arithmetic for local paths (``os.path``) and for URLs (POSIX paths below the
scheme and bucket), and never fall back on the process's working directory for a URL.
"""

from __future__ import annotations

import os
import posixpath
import re
from typing import Any
from urllib.parse import unquote, urlsplit

from zarr.abc.store import Store
from zarr.storage import LocalStore

from ...errors import StoreError

#: Schemes opened through obstore; ``file://`` URLs are local paths.
REMOTE_SCHEMES = frozenset({"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "azure", "http", "https"})
#: A URL's scheme, read without splitting the rest (which :func:`check_url` checks).
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]+)://")
#: No URL holds these as written (RFC 3986: percent-encoded if meant); obstore's parser panics on some.
_NOT_IN_URLS = re.compile(r"[\x00-\x20\x7f<>\\^`{|}\"]")


def is_url(location: str) -> bool:
    """True for ``scheme://...`` locations (``file://`` included), False for local paths."""
    return _SCHEME.match(location) is not None  # (two letters at least: one is a Windows drive)


def is_remote(location: str) -> bool:
    found = _SCHEME.match(location)
    return found is not None and found.group(1).lower() in REMOTE_SCHEMES


def url_problem(url: str, schemes: frozenset[str] | None = REMOTE_SCHEMES) -> str | None:
    """Why no store opens ``url``, or ``None``: a space, a control character or a character URLs never hold as
    written, one urllib cannot split (an unclosed IPv6 bracket), a port out of range, no host, a scheme not in
    ``schemes`` (any, if ``None``). obstore's Rust parser panics on some of these, printing its backtrace."""
    found = _NOT_IN_URLS.search(url)
    if found is not None:
        return f"holds {found.group()!r}, which a URL holds only percent-encoded"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (parsed on access: a port out of range raises)
    except ValueError as exc:
        return f"is not a valid URL ({exc})"
    scheme = parts.scheme.lower()
    if schemes is not None and scheme not in schemes:
        return f"is not a URL of {', '.join(sorted(s + '://' for s in schemes))}"
    if not parts.hostname and scheme != "file":
        return "names no host"
    return None


def check_url(url: str, what: str = "the URL", schemes: frozenset[str] | None = REMOTE_SCHEMES) -> None:
    """Refuse a URL no store opens (:func:`url_problem`), before obstore sees it: ``StoreError`` naming it."""
    problem = url_problem(url, schemes)
    if problem is not None:
        printable = url[:300].encode("unicode_escape").decode("ascii")
        raise StoreError(f"{what} {url[:300]!r} {problem}", printable)


def local_path(location: str) -> str:
    """The absolute local path of a local location (a path, or a ``file://`` URL: percent-decoded, as a
    ``file:`` URL spells ``u%20r%20l`` for ``u r l``)."""
    if is_url(location):
        parts = urlsplit(location)
        if parts.scheme.lower() != "file":
            raise ValueError(f"{location!r} is not a local path")
        path = unquote(parts.path, errors="surrogateescape")  # (bytes not UTF-8: as os.fsdecode spells them)
        if "\x00" in path:
            raise StoreError("a NUL cannot be part of a file's path", location)
        return os.path.abspath(path)
    return os.path.abspath(os.path.expanduser(location))


def absolute(location: str) -> str:
    """A canonical form: absolute local path, or URL with a normalized path and no trailing slash (a URL no store
    opens is ``StoreError``, see :func:`url_problem`)."""
    if is_url(location):
        check_url(location, schemes=None)
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


#: obstore's kinds of store -> the URL scheme and the config key naming the bucket (container)
BUCKETS = {"S3Store": ("s3", "bucket"), "GCSStore": ("gs", "bucket"), "AzureStore": ("az", "container_name")}


def object_store_url(backend: Any) -> str | None:
    """The URL of an obstore S3/GCS/Azure store (``s3://bucket/prefix``), ``None`` for other stores."""
    kind = BUCKETS.get(type(backend).__name__)
    if kind is None or type(backend).__module__.split(".")[0] != "obstore":
        return None
    bucket = backend.config.get(kind[1])
    prefix = (backend.prefix or "").strip("/")
    return None if not bucket else f"{kind[0]}://{bucket}" + (f"/{prefix}" if prefix else "")
