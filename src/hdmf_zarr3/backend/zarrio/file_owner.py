"""Opening a file: which dialect an opened file is read in (and whether it may be changed in place), and
:class:`FileOwner`, the one owner of a :class:`~hdmf_zarr3.ZarrIO`'s open store."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hdmf.backends.errors import UnsupportedOperation

from ...errors import DialectError, IncompleteFileError, ModeError
from ...format import dialects
from ...format.dialects import Dialect, NativeDialect
from ...format.documents import completion
from ...storage.handles import Opening, StoreHandle, open_decided, open_store
from ...storage.safety import limit_reads
from ...storage.stores import WorkPools, locations
from .file_modes import FileMode

if TYPE_CHECKING:
    from ..datasets import RowTally


def dialect_of(handle: StoreHandle) -> Dialect:
    """The dialect of an open file; a new (or empty) file is written in ours. Foreign dialects are
    read-only: changing one in place would mix conventions."""
    documents = handle.documents()
    # no storage object is read beyond what its array allows; a missing chunk of an array that stores every
    # chunk is damage, unless the file is incomplete (a writer killed before it stored them)
    limit_reads(handle.store, documents, promised=handle.incomplete() is None)
    if FileMode(handle.mode).creates or not documents:
        return NativeDialect(documents)
    handle.check_complete()
    name = locations.basename(handle.location) if handle.location else None
    try:
        dialect = dialects.detect(documents, name, location=handle.location)
    except DialectError as exc:
        mark = handle.incomplete()
        if mark is None:
            raise
        raise IncompleteFileError(f"{completion.describe(mark)} before any HDMF node was stored", "/") from exc
    if handle.writable and not dialect.writable:
        raise ModeError(
            f"this file was written by {dialect.name}, which hdmf_zarr3 reads but does not change in "
            f"place; open it with mode 'r', or convert it first: hdmf_zarr3.convert(src, dst)",
            "/",
        )
    return dialect


class FileOwner:
    """The file a :class:`~hdmf_zarr3.ZarrIO` works on, and the one owner of opening and closing it: where
    it is, how it is opened, its open store, its dialect and the thread pools.

    Parameters
    ----------
    opening : Opening
        How the file is opened, decided once (:func:`~hdmf_zarr3.storage.handles.decide`) from what
        :class:`~hdmf_zarr3.ZarrIO` was given: where it lives, its storage options, ``allow_incomplete``,
        ``external_roots``.
    mode : str
        The mode as given (``r-`` included).
    source : str or None
        How HDMF names the file (its absolute path or URL; a store's name).
    convention
        As given to :class:`~hdmf_zarr3.ZarrIO`.
    """

    def __init__(
        self,
        opening: Opening,
        mode: str,
        source: str | None,
        convention: dialects.Convention,
    ) -> None:
        self.opening = opening
        self.mode = mode
        self.file_mode = FileMode(mode)  # what the mode decides, once
        self.source = source
        self.convention = convention
        self.handle: StoreHandle | None = None
        self.dialect: Dialect | None = None  # kept once closed (a closed file's root object id)
        self.work_pools: WorkPools | None = None  # started on first use, shut down by close()

    @property
    def path(self) -> Any:
        """Where the file lives, as the io was given it (a store of another library made ready)."""
        return self.opening.target

    @property
    def storage_options(self) -> dict[str, Any] | None:
        return self.opening.storage_options

    @property
    def allow_incomplete(self) -> bool:
        return self.opening.allow_incomplete

    def open(self) -> StoreHandle | None:
        """Open the store and detect its dialect, once; the handle if it was opened now, ``None`` if it was
        open already."""
        if self.handle is not None:
            return None
        handle = open_decided(self.opening)
        self.handle = handle
        try:
            self.dialect = dialect_of(handle)
            if handle.documents() and not self.names_dimensions and not self.file_mode.creates:
                raise ModeError(f"convention {self.convention.name!r} applies to new files only (modes w, w-, x)")
        except BaseException:
            self.handle = None
            handle.close()  # releases the write lock
            raise
        return handle

    @property
    def names_dimensions(self) -> bool:
        """Whether the file is written in our convention, which names every array's dimensions
        (``format/documents/dimension_names.py``); hdmf-zarr's names them as it does."""
        return self.convention.name == dialects.Convention.name

    def close(self, finish: Callable[[StoreHandle], None]) -> None:
        """Shut the pools down, call ``finish`` with the open handle (to store and commit what is held) and
        close the handle, releasing the write lock even if ``finish`` failed."""
        pools, self.work_pools = self.work_pools, None
        if pools is not None:
            pools.close(wait=True)  # every write given to them is stored before the commit
        handle = self.handle
        if handle is None:
            return
        try:
            try:
                finish(handle)
            finally:
                self.handle = None
        finally:
            handle.close()

    def require_open(self) -> StoreHandle:
        """The open store; hdmf's ``UnsupportedOperation`` once the file is closed."""
        if self.handle is None:
            raise UnsupportedOperation(f"Cannot access closed Zarr file '{self.source}'")
        return self.handle

    def open_dialect(self) -> Dialect:
        """The dialect of the open file (:meth:`open` sets it with the handle)."""
        self.require_open()
        if self.dialect is None:
            raise UnsupportedOperation(f"Zarr file '{self.source}' is not open")
        return self.dialect

    def read_dialect(self) -> Dialect:
        """The dialect the file was opened in, also once it is closed."""
        if self.dialect is None:  # (never once the file was opened: kept after close)
            self.require_open()
            raise UnsupportedOperation(f"Zarr file '{self.source}' was never opened")
        return self.dialect

    @property
    def documents(self) -> dict[str, dict[str, Any]]:
        """The node documents of the open file, by node path."""
        return self.open_dialect().documents

    @property
    def pools(self) -> WorkPools:
        """The thread pools the file is encoded, decoded and read on (shut down by :meth:`close`)."""
        if self.handle is None:
            raise UnsupportedOperation(f"Cannot use the thread pools of closed Zarr file '{self.source}'")
        if self.work_pools is None:
            self.work_pools = WorkPools()
        return self.work_pools

    def directory(self) -> str | None:
        """The local directory of the open file (``None``: closed, or not in a directory)."""
        return self.handle.directory if self.handle is not None else None

    def reopen_for_reading(self) -> StoreHandle:
        """A new read-only handle on the file's location with the same store options (the caller closes it)."""
        return open_store(self.path, "r", self.storage_options, allow_incomplete=self.allow_incomplete)


def abandon_unclosed(handle: StoreHandle, held: RowTally, source: str | None) -> None:
    """What becomes of a writer never closed (see :func:`~hdmf_zarr3.storage.safety.locks.guard`)."""
    if held.datasets:  # collected: no write or close can store them any more
        warnings.warn(
            f"{source}: the file was never closed; rows appended to {held.datasets} dataset(s) since the last "
            "write() are not stored (close files, or use `with`)",
            RuntimeWarning,
            stacklevel=1,
        )
    handle.abandon()
