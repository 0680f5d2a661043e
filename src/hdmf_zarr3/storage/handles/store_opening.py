"""The one place that turns what a user passes (a path, a Store) into an open zarr Store.

File modes mean what they mean for :class:`hdmf.backends.hdf5.HDF5IO` (and h5py):

=====  =========================================  ===================
mode   meaning                                     if it exists / not
=====  =========================================  ===================
r      read only                                   open / error
r-     read only, ignoring consolidated metadata   open / error
r+     read and write                              open / error
a      read and write                              open / create
w      create, replacing what is there            replace / create
w-, x  create                                      error / create
=====  =========================================  ===================
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hdmf.backends.errors import UnsupportedOperation
from zarr.abc.store import Store
from zarr.storage import LocalStore, ObjectStore

from ...errors import IncompleteFileError, ModeError, NotZarrError, StoreError
from ...format.vocabulary import VIRTUAL_SOURCES_ATTR
from ..remote import (
    read_root_and_top,
    read_root_bytes,
    refuse_other_objects,
    remote_store,
    translate_options,
)
from ..safety import (
    IN_STORE_KEY,
    GuardedLocalStore,
    GuardedZipStore,
    LocalReplacement,
    WriteLock,
    lock_place,
    locks,
    open_files,
    replace_in_place,
    working_directory,
)
from ..stores import DocumentCache, decoding, locations, parse_document, remove_tree, store_location, sync
from ..virtual import repo as virtual_repo
from ..zip import ZipOverlayStore, zipped
from . import local_paths
from .handle import CREATE_MODES, WRITE_MODES, HandleEnding, StoreHandle, writer_name
from .opening_decisions import GIVEN_STORE, LOCAL_FILE, Opening, decide, refuse_options

#: What the opening found: the store, where it is, whether it holds a file (its root's bytes when read) and,
#: for a URL, how the object store its write lock lies in is made.
_Found = tuple[Store, str | None, Any, Callable[[str], Store] | None]


def exists(store: Store) -> bool:
    """True if ``store`` holds a Zarr node at its root (format 3, or format 2 as older writers made)."""
    return bool(sync(store.exists("zarr.json"))) or _v2_present(store)


def _v2_present(store: Store) -> bool:
    from ..stores import ZARRAY, ZGROUP, ZMETADATA

    try:
        return any(sync(store.exists(key)) for key in (ZGROUP, ZMETADATA, ZARRAY))
    except Exception:  # stores that hold Zarr v3 only (icechunk) refuse v2 keys outright
        return False


def open_store(
    path: str | Path | Store | None,
    mode: str = "r",
    storage_options: dict[str, Any] | None = None,
    allow_incomplete: bool = False,
    external_roots: Sequence[str] | None = None,
) -> StoreHandle:
    """Open ``path`` in ``mode``: a zarr ``Store`` (or an obstore store, an fsspec mapper), a local path, a
    ``.zip`` file or a URL. URLs (``s3://``, ``gs://``, ``az://``, ``https://``) are opened with obstore,
    configured by ``storage_options`` in fsspec's or obstore's convention (see :mod:`.options`). A ``.zip``
    file is read in place and written through a working directory beside it that replaces the zip, whole,
    when the file is closed after a finished write. Mode ``w`` replaces an existing file only once the new
    one is finished (see :mod:`.replacing`). Writers take the file's write lock (see :mod:`.locks`);
    ``allow_incomplete`` lets a reader (mode ``r``) open a file whose last write did not finish. Mode ``r-``
    (hdmf-zarr's) reads as ``r`` but lists the store instead of trusting the consolidated metadata of the root.
    An icechunk repository (``convert(..., virtual=True)``; a local directory, or an ``s3://`` prefix
    reached with ``storage_options``) opens read-only, its virtual chunks read only from the directory
    holding it and ``external_roots`` (see :mod:`.virtual_repo`).

    Mode, lock and replacement are decided once per call (:func:`decide`), then :func:`open_decided` opens.
    """
    return open_decided(decide(path, mode, storage_options, allow_incomplete, external_roots))


def open_decided(opening: Opening) -> StoreHandle:
    """Open what ``opening`` (:func:`decide`'s answer) names: one of the three kinds of what is opened, then
    the handle (:func:`_handle`). An io that decided the opening itself (to name its file before opening it)
    hands the decision here, so nothing is decided twice."""
    decoding.install()  # zarr's reads of this store check blosc frames too (see decoding.install)
    path = opening.target
    found: _Found | StoreHandle
    if isinstance(path, Store):
        found = _given_store(path, opening)
    elif locations.is_remote(os.fspath(path)):
        found = _remote(os.fspath(path), opening)
    else:
        found = _local(os.fspath(path), opening)
    if isinstance(found, StoreHandle):  # a zip or a virtual repository, opened whole
        return found
    return _handle(path, *found, opening)


def _check_replaceable_path(location: str, opening: Opening) -> None:
    """Refuse a local path that cannot be the file asked for (an HDF5 file, a mistyped path) and, for a mode
    that creates, one this process is reading: each checked once, before anything is created or deleted.
    hdmf-zarr's ``force_overwrite`` (mode ``w``) deletes what is no Zarr file there instead of refusing it."""
    mode = opening.mode
    try:
        local_paths.check(location, mode)
    except NotZarrError:
        if not (opening.force_overwrite and mode == "w"):
            raise
        open_files.check_replaceable(location, None, mode)  # not a file this process is reading
        local_paths.clear_other_file(location)
        local_paths.check(location, mode)  # (where it stood: the directory above must exist)
        return
    if mode in CREATE_MODES:
        open_files.check_replaceable(location, None, mode)


def _given_store(store: Store, opening: Opening) -> _Found:
    """A Store passed in: where it is and whether it holds a file (its root's bytes when read)."""
    mode, location = opening.mode, store_location(store)
    refuse_options(opening.storage_options, location or repr(store), GIVEN_STORE)
    present = read_root_bytes(store, location or repr(store)) or _v2_present(store)
    if not present and mode in WRITE_MODES and isinstance(store, ObjectStore):
        refuse_other_objects(store, location or getattr(store, "location", None) or repr(store), IN_STORE_KEY)
    return store, location, present, None


def _remote(text: str, opening: Opening) -> _Found | StoreHandle:
    """A URL: its object store, where it is and whether it holds a file, and how its lock's object store is
    made (with the same options, translated once); a virtual repository, opened."""
    _check_remote(text)
    options = translate_options(text, opening.storage_options)
    store, location = remote_store(text, opening.mode, options), locations.absolute(text)
    root, top = read_root_and_top(store, location)  # whether the file exists, and its metadata
    if root is None and virtual_repo.holds_repository(top):  # (the listing made anyway shows it)
        return _open_repository(location, opening)
    present = root if root is not None else _v2_present(store)
    if not present and top and opening.mode == "r":  # (nothing to read: a conversion cut short, perhaps)
        virtual_repo.refuse_unfinished(location, opening.storage_options)
    if not present and opening.mode in WRITE_MODES:
        refuse_other_objects(store, location, IN_STORE_KEY, top)
    return store, location, present, lambda url: remote_store(url, "a", options)


def _local(text: str, opening: Opening) -> _Found | StoreHandle:
    """A local path: its guarded store, where it is and whether it holds a file; a zip or a virtual
    repository, opened. Whether it may be replaced is checked here, before anything is created."""
    mode = opening.mode
    location = locations.local_path(text)
    if virtual_repo.is_repository(location):
        return _open_repository(location, opening)
    refuse_options(opening.storage_options, location, LOCAL_FILE)
    _check_replaceable_path(location, opening)
    if location.endswith(".zip"):
        return _open_zip(location, opening)
    _check_local(location, mode)
    store = GuardedLocalStore(location, read_only=(mode == "r"))  # reads: see .guarded
    present = exists(store) if os.path.isdir(location) else False
    if not present and mode == "r" and os.path.isdir(location):  # (nothing to read: a conversion cut short?)
        virtual_repo.refuse_unfinished(location, None)
    return store, location, present, None


def _handle(
    path: str | Path | Store,
    store: Store,
    location: str | None,
    present: Any,
    object_store_at: Callable[[str], Store] | None,
    opening: Opening,
) -> StoreHandle:
    """The handle of a directory, an object store or a Store passed in: presence checked, the lock taken,
    a mode-``w`` replacement prepared."""
    mode, given = opening.mode, isinstance(path, Store)
    checked = not isinstance(path, Store) and not locations.is_remote(os.fspath(path))  # (by _local, earlier)
    _check_presence(mode, present, location or store)
    if getattr(store, "read_only", False) and mode != "r":
        raise ModeError(f"store is read-only; cannot open it in mode {mode!r}")
    if mode in CREATE_MODES and not checked:
        open_files.check_replaceable(location, store, mode)
    lock = _lock(path, store, location, mode, object_store_at)
    try:
        if lock is not None:
            # what was read before the lock may be stale (another writer committed meanwhile): an append
            # built on it would drop that writer's changes, so the root is read again now that we hold it
            present = _present(store, location, local=isinstance(store, LocalStore) and not given)
            _check_presence(mode, present, location or store)
        if lock is not None and location is not None and not locations.is_remote(location):
            zipped.remove_leftovers(os.path.realpath(location))  # of killed writers: none is alive now
            locks.remove_temporaries(lock.place, older_than=locks.STALE_TEMPORARY_SECONDS)
        ending = _ending(store, location, mode, present, swappable=isinstance(store, LocalStore) and not given)
        if ending.replacement is not None:
            store = ending.replacement.store()
    except BaseException:
        if lock is not None:
            lock.release()
        raise
    # (the root, when it was read to learn that the file exists, is kept)
    cache = (
        DocumentCache({})
        if mode in CREATE_MODES or (mode == "a" and not present)
        else DocumentCache(root_bytes=present if isinstance(present, bytes) else None)
    )
    return StoreHandle.opened(
        store,
        mode,
        location,
        ending=ending,
        cache=cache,
        owned=not given,
        lock=lock,
        allow_incomplete=opening.allow_incomplete,
        use_consolidated=opening.use_consolidated,
    )


def _ending(store: Store, location: str | None, mode: str, present: Any, swappable: bool) -> HandleEnding:
    """Mode ``w`` over a file that exists: a local directory's replacement, written beside it and moved into
    place on commit; in a store that cannot be swapped, the old file cleared at the first change."""
    if mode != "w" or not present:
        return HandleEnding()
    if swappable:  # the old file stays until the new one commits (a LocalStore opened from a path has a location)
        return HandleEnding(replacement=LocalReplacement(location))  # type: ignore[arg-type]
    return HandleEnding(replace_later=lambda: replace_in_place(store, location, writer_name()))


def _check_remote(url: str) -> None:
    """Refuse a URL no object store opens (:func:`.locations.check_url`), and a zip on one: a zip is read and
    changed through the local file system only (a prefix ending ``.zip`` would be written as loose objects,
    and a real zip object read as "no Zarr group found")."""
    locations.check_url(url)
    if locations.basename(url).lower().endswith(".zip"):
        raise StoreError(
            "a zip file on an object store or web server is not supported (only local zips are): download it "
            "first, or store the file unzipped, as a prefix of objects (e.g. .nwb.zarr)",
            url,
        )


def _check_presence(mode: str, present: Any, where: Any) -> None:
    if mode in ("r", "r+") and not present:
        raise UnsupportedOperation(f"Unable to open {where} in '{mode}' mode: no Zarr group found.")
    if mode in ("w-", "x") and present:
        raise UnsupportedOperation(f"Unable to open file {where} in '{mode}' mode. File already exists.")


def _present(store: Store, location: str | None, local: bool) -> bytes | bool:
    """Whether ``store`` holds a file: its root's bytes when read (object stores, Stores passed in), else a bool."""
    if local:
        return exists(store) if location is not None and os.path.isdir(location) else False
    return read_root_bytes(store, location or repr(store)) or _v2_present(store)


def _lock(
    path: str | Path | Store,
    store: Store | None,
    location: str | None,
    mode: str,
    object_store_at: Callable[[str], Store] | None,
) -> WriteLock | None:
    if mode not in WRITE_MODES:
        return None
    place = lock_place(path, object_store_at)
    return None if place is None else WriteLock.acquire(place, location or repr(store), writer_name())


def _check_local(location: str, mode: str) -> None:
    # a file where a directory belongs was refused already (local_paths.check)
    if mode in ("r", "r+") and not os.path.exists(location):
        raise UnsupportedOperation(f"Unable to open file {location} in '{mode}' mode. File does not exist.")


def _open_repository(location: str, opening: Opening) -> StoreHandle:
    """An icechunk repository (a local directory or an ``s3://`` prefix), read-only (branch ``main``);
    ``storage_options`` reach it on S3 and read its S3 sources."""
    mode, external_roots, storage_options = opening.mode, opening.external_roots, opening.storage_options
    if mode != "r":
        raise ModeError(
            f"an icechunk repository opens by its path or URL in mode 'r' only, not {mode!r}; to change it, open a "
            "writable session with icechunk and pass session.store",
            location,
        )
    store = virtual_repo.open_readonly(location, external_roots or (), storage_options)
    raw = read_root_bytes(store, location)
    if raw is None:
        virtual_repo.refuse_unfinished(location, storage_options)
        raise UnsupportedOperation(f"Unable to open {location} in 'r' mode: no Zarr group found.")
    record = parse_document(raw, "/").get("attributes", {}).get(VIRTUAL_SOURCES_ATTR)
    if record is not None:
        prefixes = virtual_repo.allowed_prefixes(location, external_roots or ())
        virtual_repo.check_sources(record, location, prefixes, storage_options)  # refused here, not read wrong
    return StoreHandle.opened(
        store,
        mode,
        location,
        allow_incomplete=opening.allow_incomplete,
        use_consolidated=opening.use_consolidated,
        cache=DocumentCache(root_bytes=raw),
    )


def _read_zip(location: str, real: str, opening: Opening) -> StoreHandle:
    """A zip opened to be read (``real``: its real path, beside which an unfinished update's record lies)."""
    if not opening.allow_incomplete and zipped.update_unfinished(real):  # readers take no lock: see .zipped
        raise IncompleteFileError(
            "the file is incomplete: a change being added to the zip did not finish (its writer was "
            f"killed, or is still running); run hdmf_zarr3.recover({location!r}) to go back to the zip "
            "as it was before, or open it with allow_incomplete=True to read what is there",
            location,
        )
    store = GuardedZipStore(location, mode="r")  # reads: see .guarded
    if not exists(store):
        raise UnsupportedOperation(f"Unable to open {location} in 'r' mode: no Zarr group found.")
    return StoreHandle.opened(
        store, "r", location, allow_incomplete=opening.allow_incomplete, use_consolidated=opening.use_consolidated
    )


def _open_zip(location: str, opening: Opening) -> StoreHandle:
    """A zip file: read in place; written in a working directory that replaces the zip on close.

    What lies beside the zip (its lock, working directory, half-packed copy, the record of an update) lies beside
    the zip itself, a symlink to it resolved: every spelling of one zip meets them, and the zip a symlink leads to
    is the one changed or replaced (never the symlink)."""
    mode, real = opening.mode, os.path.realpath(location)
    present = os.path.isfile(location)
    if mode in ("r", "r+") and not present:
        raise UnsupportedOperation(f"Unable to open file {location} in '{mode}' mode. File does not exist.")
    if mode in ("w-", "x") and present:
        raise UnsupportedOperation(f"Unable to open file {location} in '{mode}' mode. File already exists.")
    if mode == "r":
        return _read_zip(location, real, opening)
    lock = _lock(location, None, location, mode, None)
    try:  # (a plant refused beside the zip, a full disk: the lock is released with the error)
        zipped.remove_leftovers(real)  # of killed writers: no live one now that we hold the lock
        if lock is not None:
            locks.remove_temporaries(lock.place, older_than=locks.STALE_TEMPORARY_SECONDS)
        work = working_directory(real)  # named as zipped.leftovers expects
    except BaseException:
        if lock is not None:
            lock.release()
        raise
    ours = lock.ours if lock is not None else None
    if present and mode in ("r+", "a"):  # read in place; only the changes are added on close
        try:
            with zipfile.ZipFile(location) as archive:
                zipped.check_member_names(archive, work)
            overlay = ZipOverlayStore(location, work)
            if not exists(overlay):
                raise UnsupportedOperation(f"Unable to open {location} in {mode!r} mode: no Zarr group found.")
        except BaseException:
            remove_tree(work)
            if lock is not None:
                lock.release()
            raise
        changes = HandleEnding(
            on_close=lambda: zipped.update_zip(work, real, overlay.deleted, ours),
            on_discard=lambda: remove_tree(work),
            on_abandon=lambda: zipped.abandon_update(work, real, overlay.deleted, ours),
            on_undo=overlay.drop_changes,
        )
        return StoreHandle.opened(
            overlay, mode, location, ending=changes, lock=lock, use_consolidated=opening.use_consolidated
        )
    replacing = HandleEnding(
        on_close=lambda: zipped.replace_zip(work, real, ours),
        on_discard=lambda: remove_tree(work),
        on_abandon=lambda: zipped.abandon(work, real, ours),
    )
    return StoreHandle.opened(
        GuardedLocalStore(work),
        mode,
        location,
        ending=replacing,
        lock=lock,
        use_consolidated=opening.use_consolidated,
        cache=DocumentCache({} if mode in CREATE_MODES or not present else None),
    )
