"""Icechunk repositories whose large arrays read chunks in place from HDF5 files (virtual chunks).

A virtual chunk is a byte range of another file, recorded in the repository with the file's modification
time: icechunk refuses to return it once that file changed (:class:`~hdmf_zarr3.errors.SourceChangedError`
here), instead of returning wrong bytes. A repository records where its chunks may live (a *virtual chunk
container* per directory of sources), but a repository is data, and data can be crafted: reading one, we
authorize only the containers that are local directories the caller allows (the directory holding the
repository and the ``external_roots`` given), as external links are confined. A chunk elsewhere is never
fetched: icechunk refuses it, and we say which location was not allowed.

Repositories are local directories or ``s3://`` prefixes (the directory holding one on S3 is the prefix
above it); sources are local files, S3 objects or files on web servers (:mod:`.virtual_sources`,
:mod:`.http_sources`). A remote container is allowed by a root that is a prefix of it (``s3://bucket/dir/``,
``https://host/dir/``); an http(s) container whose URL has ``..`` segments, a query or credentials is never
allowed (:func:`.http_sources.unfit`). A repository is written in one transaction (a writable session
committed at the end of the conversion).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Sequence
from typing import Any

from ...errors import CorruptStoreError, IncompleteFileError, StoreError, UnsafeLinkError
from ...format.vocabulary import VIRTUAL_SOURCES_ATTR
from ..remote import http_sources, is_http, unfit
from ..stores import locations, nodes, remove_tree, remove_tree_settled, until_done
from . import source_files as virtual_sources
from .read_store import VirtualReadStore
from .source_files import Source, is_s3, path_of

#: Names an icechunk repository holds at its top (spec 1 and 2): the file ``repo`` and the directory (on
#: an object store, the common prefix) ``snapshots``.
_MARKERS = ("repo", "snapshots")

#: The repository metadata of a repository a conversion of ours created: one that holds it and no root
#: on ``main`` is a conversion that did not finish (:func:`unfinished`), which a new conversion replaces.
CONVERSION_MARK = {"hdmf_zarr3": "virtual conversion"}
#: The id icechunk gives the first snapshot of every repository; creating one writes that snapshot's
#: transaction log and the snapshot before the repository's own objects (checked against icechunk by
#: tests/hdf5/test_virtual_convert.py).
FIRST_SNAPSHOT = "1CECHNKREP0F1RSTCMT0"
#: What a creation cut short right after its first writes leaves: nothing anyone wrote.
CREATION_LEFTOVERS = frozenset({f"transactions/{FIRST_SNAPSHOT}", f"snapshots/{FIRST_SNAPSHOT}"})

#: Where a repository cannot live (what icechunk storage we build is for local directories and S3).
_PLACES = "a virtual repository is a local directory or an s3:// prefix"


def is_repository(location: str) -> bool:
    """Whether the local directory ``location`` is an icechunk repository."""
    return os.path.isdir(location) and all(os.path.exists(os.path.join(location, m)) for m in _MARKERS)


def holds_repository(top: Iterable[str]) -> bool:
    """Whether ``top``, the names at the top of an object store's prefix (its one listing), are those of
    an icechunk repository: how a URL is told from a Zarr store at no request of its own."""
    return set(_MARKERS) <= set(top)


def _storage(icechunk: Any, location: str, options: dict[str, Any] | None) -> Any:
    """icechunk's storage of the repository at ``location`` (``options``: an S3 repository's)."""
    if is_s3(location):
        return virtual_sources.repository_storage(location, options)
    if locations.is_url(location):
        raise StoreError(_PLACES, location)
    return icechunk.local_filesystem_storage(location)


def _prefix(directory: str | os.PathLike[str]) -> str:
    """The URL prefix of a virtual chunk container for a local directory. icechunk matches chunk URLs
    (percent-encoded) against container prefixes written as plain paths: a directory named with a space,
    ``#`` or ``%`` matches only so (measured with icechunk 2.3)."""
    return "file://" + os.path.realpath(directory).rstrip(os.sep) + "/"


def _within(url: str, prefixes: Sequence[str]) -> bool:
    """Whether ``url`` (``file://``, percent-encoded, ``s3://`` or ``http(s)://``) names a file under one
    of ``prefixes``."""
    if is_s3(url):
        return any(url.startswith(p) for p in prefixes)
    if is_http(url):
        return unfit(url) is None and any(url.startswith(p) for p in prefixes)
    path = path_of(url)
    if path is None:
        return False
    return any(p.startswith("file://") and path.startswith(p.removeprefix("file://")) for p in prefixes)


def _really_within(url: str, prefixes: Sequence[str]) -> bool:
    """Whether ``url`` is under ``prefixes`` (real paths) where it really is: a local path resolved
    (symlinks, ``..``); other URLs as they are."""
    path = path_of(url)
    if path is None:
        return True
    real = os.path.realpath(path) + os.sep
    return any(p.startswith("file://") and real.startswith(p.removeprefix("file://")) for p in prefixes)


def create(
    location: str | os.PathLike[str],
    sources: Sequence[Source],
    options: dict[str, Any] | None,
    repository_options: dict[str, Any] | None = None,
) -> Any:
    """A writable session of a new repository at ``location`` (a local directory or an ``s3://`` prefix,
    reached with ``repository_options``) that may hold virtual chunks of ``sources`` (``options``: the
    storage options of S3 sources); the caller writes through ``session.store`` and commits.

    Raises
    ------
    StoreError
        Something is at ``location`` already (a file, a directory, an object at or below the prefix: a
        repository is created, never replaced), ``location`` is another URL, or icechunk is missing.
    """
    icechunk = _icechunk()
    target = os.fspath(location)
    storage = _storage(icechunk, target, repository_options)
    taken = virtual_sources.holds_anything(target, repository_options) if is_s3(target) else os.path.exists(target)
    if taken:
        raise StoreError(
            "the destination exists; a virtual repository is created, never replaced (a conversion that did "
            "not finish leaves a repository without a commit there: remove it first)",
            target,
        )
    config = icechunk.RepositoryConfig.default()
    grants: dict[str, Any] = {}
    for prefix in sorted({container_prefix(s.url) for s in sources}):
        found, grants[prefix] = _container(icechunk, prefix, options)
        config.set_virtual_chunk_container(found)
    try:
        repo = icechunk.Repository.create(
            storage,
            config,
            authorize_virtual_chunk_access=icechunk.containers_credentials(grants),
        )
        repo.set_metadata(CONVERSION_MARK)  # (before any node: a conversion cut short from here is known as one)
    except BaseException:  # (nothing was there: what icechunk made of it is wholly ours)
        if is_s3(target):
            _remove(target, repository_options)
        else:
            remove_tree_settled(target)
        raise
    return repo.writable_session("main")


def storage_failure(exc: BaseException, location: str) -> BaseException:
    """Our :class:`~hdmf_zarr3.errors.StoreError` naming ``location`` for an error of icechunk (a full disk,
    an I/O error, a refused request: icechunk's own exception types, not ``OSError``); ``exc`` for others."""
    icechunk = _icechunk()
    if not isinstance(exc, icechunk.IcechunkError):
        return exc
    text = str(exc).strip()
    error = StoreError(f"icechunk failed: {text.splitlines()[0][:300] if text else type(exc).__name__}", location)
    code = re.search(r"\(os error (\d+)\)", text)
    error.errno = int(code.group(1)) if code else None  # (ENOSPC stays ENOSPC for code that checks it)
    return error


def unfinished(location: str | os.PathLike[str], options: dict[str, Any] | None = None) -> bool:
    """Whether ``location`` holds a repository a conversion of ours created and never committed into (it
    was cut short, or killed): marked with :data:`CONVERSION_MARK` and without a root on ``main``; or, where
    no repository is, only what icechunk's creation of one writes first (:data:`CREATION_LEFTOVERS`: the
    endpoint failed right after, and so did the removal). Replacing either loses nothing; an empty repository
    made by anyone else is not unfinished (it is left alone)."""
    icechunk = _icechunk()
    target = os.fspath(location)
    try:
        storage = _storage(icechunk, target, options)
        if not icechunk.Repository.exists(storage):
            keys = virtual_sources.keys_below(target, options, 4) if is_s3(target) else _local_keys(target, 4)
            return keys is not None and bool(keys) and set(keys) <= CREATION_LEFTOVERS
        repo = icechunk.Repository.open(storage)
        if nodes.read_root(repo.readonly_session("main").store) is not None:
            return False
        return (repo.get_metadata() or {}).get("hdmf_zarr3") == CONVERSION_MARK["hdmf_zarr3"]
    except (StoreError, ValueError, OSError, RuntimeError, icechunk.IcechunkError):
        return False  # (not a repository we can tell anything of: left alone, and refused as any other)


def refuse_unfinished(location: str, options: dict[str, Any] | None) -> None:
    """An IncompleteFileError if ``location`` is :func:`unfinished` (a reader found no root there)."""
    if unfinished(location, options):
        raise IncompleteFileError(
            "a virtual conversion into this repository did not finish (nothing was committed); convert the HDF5 "
            "file again: the conversion replaces it",
            location,
        )


def _local_keys(directory: str, most: int) -> list[str] | None:
    """The files below ``directory`` (relative, ``/``-separated), or ``None`` when there are more than ``most``
    files, or more than ``most`` directories (a tree of many empty directories is not walked to its end)."""
    found: list[str] = []
    for walked, (top, _, files) in enumerate(os.walk(directory)):
        found += [os.path.relpath(os.path.join(top, name), directory).replace(os.sep, "/") for name in files]
        if len(found) > most or walked > most:
            return None
    return found


def remove_unfinished(location: str | os.PathLike[str], options: dict[str, Any] | None = None) -> bool:
    """Remove the repository at ``location`` if it is :func:`unfinished` (the caller holds the destination's
    write lock, so no conversion is writing into it); returns whether it did. A Ctrl-C meanwhile is raised once
    the removal has run to its end."""
    target = os.fspath(location)
    if not unfinished(target, options):
        return False
    _remove(target, options)
    return True


def _remove(target: str, options: dict[str, Any] | None) -> None:
    """Delete the repository at ``target``, to the end even if a Ctrl-C comes meanwhile (raised after)."""
    if is_s3(target):
        until_done(lambda: virtual_sources.delete_below(target, options))
    else:
        remove_tree(target)


def container_prefix(url: str) -> str:
    """The prefix of the container holding the chunks of the file at ``url``: its directory (a plain
    path for a local file, see :func:`_prefix`)."""
    if url.startswith("file://"):
        return _prefix(os.path.dirname(path_of(url) or url))
    return url.rsplit("/", 1)[0] + "/"


def _container(icechunk: Any, prefix: str, options: dict[str, Any] | None) -> tuple[Any, Any]:
    if prefix.startswith("file://"):
        store = icechunk.local_filesystem_store(prefix.removeprefix("file://"))
        return icechunk.VirtualChunkContainer(prefix, store), icechunk.credentials.LocalFileSystemAccess
    if is_s3(prefix):
        return virtual_sources.container(prefix, options)
    if is_http(prefix):  # kept without the options' headers and settings (see http_sources)
        return http_sources.container(prefix, options, settings=False)
    raise StoreError("virtual chunks live in local files, on S3 or on web servers only", prefix)


def open_readonly(
    location: str | os.PathLike[str],
    allowed_roots: Iterable[str | os.PathLike[str]] = (),
    options: dict[str, Any] | None = None,
) -> Any:
    """The read-only store of the repository at ``location`` (branch ``main``; a local directory or an
    ``s3://`` prefix), authorized to read virtual chunks only from the directory holding it and
    ``allowed_roots`` (local directories or ``s3://`` prefixes, and what is below them; ``options``: the
    storage options an S3 repository and its S3 sources are read with)."""
    icechunk = _icechunk()
    target = os.fspath(location)
    storage = _storage(icechunk, target, options)
    config = icechunk.Repository.fetch_config(storage)
    roots = allowed_prefixes(target, allowed_roots)
    recorded = [c.url_prefix for c in (config.virtual_chunk_containers or {}).values()] if config else []
    grants = {p: _container(icechunk, p, options)[1] for p in recorded if _granted(p, roots)}
    web = [p for p in grants if is_http(p)]
    for prefix in web:  # the reader's headers and client settings, not the repository's
        config.set_virtual_chunk_container(http_sources.container(prefix, options)[0])
    repo = icechunk.Repository.open(
        storage,
        config=config if web else None,
        authorize_virtual_chunk_access=icechunk.containers_credentials(grants),
    )
    session = repo.readonly_session("main")
    local = [p for p in grants if p.startswith("file://")]
    if local:  # before icechunk reads a byte
        confine_locations(session.all_virtual_chunk_locations(), local, roots, target)
    return VirtualReadStore(session.store)


def confine_locations(urls: Iterable[str], granted: Sequence[str], roots: Sequence[str], where: str) -> None:
    """Refuse a repository whose virtual chunks in local files icechunk would read (those ``urls`` under a
    ``granted`` container) resolve, symlinks and ``..`` included, outside the allowed ``roots`` (real paths,
    :func:`allowed_prefixes`), or name something other than a regular file (a FIFO would block the read).

    The containers are matched as strings, as icechunk matches them: a path inside an allowed directory
    that is, or passes through, a symlink to another directory would otherwise read any file there.

    Raises
    ------
    UnsafeLinkError
        Naming the repository (``where``), the chunk location and where it resolves to (icechunk does not say
        which array holds a location without reading every manifest again).
    """
    allowed = [r.removeprefix("file://") for r in roots if r.startswith("file://")]
    for url in sorted(set(urls)):
        path = path_of(url)
        if path is None or not _within(url, granted):
            continue  # not a local file, or refused by icechunk itself when read (no container allows it)
        real = os.path.realpath(path)
        if not _really_within(url, roots):
            raise UnsafeLinkError(
                f"virtual chunks in {url} resolve to {real}, outside the allowed directories "
                f"{[a.rstrip(os.sep) for a in allowed]}; to read them, open the repository with "
                "external_roots=[...] naming that directory",
                where,
            )
        if os.path.exists(real) and not stat.S_ISREG(os.stat(real).st_mode):
            raise UnsafeLinkError(f"virtual chunks in {url}: {real} is not a regular file", where)


def _granted(prefix: str, roots: Sequence[str]) -> bool:
    """Whether a container a repository records is under an allowed root (an http(s) one with ``..``
    segments never is: it could name a place outside the root)."""
    if is_http(prefix) and unfit(prefix) is not None:
        return False
    return any(prefix.startswith(r) for r in roots)


def allowed_prefixes(
    location: str | os.PathLike[str], allowed_roots: Iterable[str | os.PathLike[str]] = ()
) -> list[str]:
    """The URL prefixes virtual chunks of the repository at ``location`` may be read from: the directory
    holding it (for ``s3://bucket/a/repo``, ``s3://bucket/a/``) and ``allowed_roots``."""
    roots = [os.fspath(r) for r in allowed_roots]
    target = os.fspath(location)
    if is_s3(target):
        here = locations.parent(locations.absolute(target)) + "/"
    else:
        here = _prefix(os.path.dirname(os.path.realpath(target)))
    return [here] + [r.rstrip("/") + "/" if is_s3(r) or is_http(r) else _prefix(r) for r in roots]


def set_refs(store: Any, array_path: str, refs: Iterable[tuple[Sequence[int], int, int]], source: Source) -> None:
    """Record ``refs`` (chunk grid index, byte offset, length) of the array at ``array_path`` as byte
    ranges of ``source``, with what shows that it changed (its modification time or ETag)."""
    icechunk = _icechunk()
    if not hasattr(store, "set_virtual_refs"):
        raise StoreError("virtual chunks are kept in icechunk repositories only", array_path)
    checksum = source.checksum()
    specs = [
        icechunk.VirtualChunkSpec(
            index=list(cell), location=source.url, offset=int(offset), length=int(length), **checksum
        )
        for cell, offset, length in refs
    ]
    if not specs:
        return
    # (icechunk's check of the containers when refs are set disagrees with its matching when they are read,
    # for names that need quoting: the URLs are made under the repository's containers (create), and every
    # read is matched against the containers the reader authorized)
    failed = store.set_virtual_refs(array_path.strip("/"), specs, validate_containers=False)
    if failed:
        raise StoreError(f"icechunk refused {len(failed)} virtual chunk(s) of {source.url}", array_path)


def record_sources(store: Any, sources: Iterable[Source]) -> None:
    """Add the record of ``sources`` to the root document in ``store`` (before the commit), checked when
    the repository is opened (:func:`check_sources`)."""
    root = nodes.read_root(store)
    if root is None:
        raise StoreError("no root to record the sources in", "/")
    root.setdefault("attributes", {})[VIRTUAL_SOURCES_ATTR] = [s.record() for s in sources]
    nodes.put_documents(store, {"/": root})


def check_sources(record: Any, where: str, prefixes: Sequence[str], options: dict[str, Any] | None = None) -> None:
    """Refuse a repository whose recorded sources changed (size, modification time or ETag) or are gone.

    Only sources under ``prefixes`` (:func:`allowed_prefixes`) are looked at: a crafted record must not
    make us probe arbitrary files or URLs, and chunks elsewhere are never read anyway."""
    if not isinstance(record, list):
        raise CorruptStoreError(f"{VIRTUAL_SOURCES_ATTR} must be a list", where)
    for entry in record:
        if not isinstance(entry, dict) or not isinstance(entry.get("location"), str):
            raise CorruptStoreError(f"{VIRTUAL_SOURCES_ATTR}: an entry without a location", where)
        if _within(entry["location"], prefixes) and _really_within(entry["location"], prefixes):
            virtual_sources.check(entry, options, where)


def _icechunk() -> Any:
    try:
        import icechunk
    except ImportError as exc:  # pragma: no cover - the extra is installed in the test environment
        raise StoreError("virtual repositories need icechunk: pip install 'hdmf-zarr3[icechunk]'", None) from exc
    return icechunk
