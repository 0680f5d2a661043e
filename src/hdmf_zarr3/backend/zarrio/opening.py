"""Which dialect an opened file is read in (and whether it may be changed in place)."""

from __future__ import annotations

from ...errors import DialectError, IncompleteFileError, ModeError
from ...format import dialects
from ...format.dialects import Dialect, NativeDialect
from ...format.documents import completion
from ...storage.safety import limit_reads
from ...storage.stores import CREATE_MODES, StoreHandle, locations


def dialect_of(handle: StoreHandle) -> Dialect:
    """The dialect of an open file; a new (or empty) file is written in ours. Foreign dialects are
    read-only: changing one in place would mix conventions."""
    documents = handle.documents()
    # no storage object is read beyond what its array allows; a missing chunk of an array that stores every
    # chunk is damage, unless the file is incomplete (a writer killed before it stored them)
    limit_reads(handle.store, documents, promised=handle.incomplete() is None)
    if handle.mode in CREATE_MODES or not documents:
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
