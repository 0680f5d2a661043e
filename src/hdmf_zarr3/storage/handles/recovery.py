"""``recover``: put a file whose last append was interrupted back as it was before that append."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any

from hdmf.backends.errors import UnsupportedOperation
from zarr.abc.store import Store

from ...errors import CorruptStoreError, IncompleteFileError, StoreError
from ...format.documents import completion
from ..paths import RootDirectory
from ..safety import journal, store_failures
from ..stores import INTERRUPTED_WRITE, locations, read_root
from ..zip import zipped
from . import lock_breaking
from .handle import StoreHandle
from .store_opening import open_store


def recover(path: str | Path | Store, storage_options: dict[str, Any] | None = None, break_lock: bool = False) -> str:
    """Undo the unfinished append of a file, byte for byte, from the journal it left in the store.

    A file whose append was killed (SIGKILL, power off, a crash) reads as incomplete
    (:class:`~hdmf_zarr3.IncompleteFileError`) and cannot be changed until it is recovered. Recovery
    takes the file's write lock, deletes what the append added, puts back every chunk and document
    it overwrote and finally the root, then deletes the journal. It can itself be interrupted and
    run again. A complete file is left as it is (a stale journal beside it is deleted).

    Parameters
    ----------
    path : str, Path or zarr Store
        The file (a directory, a ``.zip``, a URL or a Store).
    storage_options : dict, optional
        Options of the object store a URL opens.
    break_lock : bool
        First remove the write lock the killed writer left behind. Only do this when no writer is
        running on the file (the lock error says whether the holder's process is gone).

    Returns
    -------
    str
        What was done, in one sentence.

    Raises
    ------
    IncompleteFileError
        The interrupted operation was the first write of a new file (or a replacement in a store that
        cannot swap files): there is no earlier complete state to go back to.
    FileLockedError
        A writer holds the lock (pass ``break_lock=True`` if it is known to be dead).
    StoreError
        No file is there (``errno`` ``ENOENT``), or the place cannot be reached.
    """
    if break_lock:
        lock_breaking.break_lock(path, storage_options)
    local = os.fspath(path) if isinstance(path, (str, Path)) and not locations.is_remote(os.fspath(path)) else ""
    # (the record lies beside the zip itself, however it is spelled: a symlink to it, file://, x/../)
    real = os.path.realpath(locations.local_path(local)) if local.endswith(".zip") else ""
    zip_cut = bool(real) and zipped.update_unfinished(real)  # opening it cuts it back (.zipped)
    given = os.fspath(path) if not isinstance(path, Store) else "/"
    try:
        handle = open_store(path, "r+", storage_options)
    except UnsupportedOperation as exc:  # (HDMF's, as an io opening in mode r+ says it)
        missing = StoreError("no file there to recover (nothing, or no Zarr group, at this path)", local or given)
        missing.errno = errno.ENOENT
        raise missing from exc
    where = handle.location or given
    try:
        return _recover_open(handle, where, zip_cut)
    except OSError as exc:  # a full disk, an I/O error: the journal stays, and a later run finishes the job
        error = store_failures.typed(exc, where, "recovery did not finish; run it again (the journal is kept)")
        if error is exc:
            raise
        raise error from exc
    finally:
        handle.close()


def _recover_open(handle: StoreHandle, where: str, zip_cut: bool) -> str:
    """Recover the file open in ``handle`` (mode ``r+``): what was done, in one sentence (``zip_cut``: opening it
    cut a zip back to what it was before a change that did not finish)."""
    root = read_root(handle.store)
    if root is None:
        raise CorruptStoreError("no Zarr v3 root (zarr.json) to recover", where)
    mark = completion.incomplete(root)
    _remove_interrupted_writes(handle.store)
    if mark is None:
        if journal.exists(handle.store):
            journal.discard(handle.store)
            handle.committed = True  # a zip is packed again without the stale journal
            return f"{where}: the file is complete; removed the journal of an append that had finished"
        if zip_cut:
            return f"{where}: cut the zip back to what it was before a change that did not finish"
        return f"{where}: the file is complete; nothing to recover"
    if not journal.undo(handle.store):
        raise IncompleteFileError(
            f"{completion.describe(mark)}. It was the first write of this file (or a replacement that could "
            "not keep the old file), so there is no earlier complete state to go back to: write the file "
            "again, or read what is there with allow_incomplete=True",
            where,
        )
    handle.committed = True
    started = mark.get("started")
    return (
        f"{where}: restored the file as it was before the append"
        f"{f' started at {started}' if isinstance(started, str) else ''}"
    )


def _remove_interrupted_writes(store: Store) -> None:
    """Delete the temporary files of writes a killed writer left half done inside a local store (they
    never became keys). The walk never enters a symlink (:class:`..paths.RootDirectory`)."""
    from zarr.storage import LocalStore

    if not isinstance(store, LocalStore):
        return
    with RootDirectory(os.fspath(store.root)) as tree:
        pending = [""]
        while pending:
            directory = pending.pop()
            for name in tree.list_directory(directory):
                key = f"{directory}/{name}" if directory else name
                found = tree.entry(key)
                if found is not None and stat.S_ISDIR(found.st_mode):
                    pending.append(key)
                elif found is not None and INTERRUPTED_WRITE.search(name):
                    tree.remove(key)
