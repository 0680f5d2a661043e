"""One file version per reader on object stores: never its metadata with another file's chunks.

Objects cannot be renamed on an object store, so mode ``w`` replaces a file in place: it deletes the old
objects and stores the new file's at the same keys. A reader that opened the old file would then read
the new file's chunks through the old metadata, without an error (a local directory is swapped whole
instead, and its readers get ``FileReplacedError``, see :mod:`.guarded`).

Every object ``hdmf_zarr3`` stores on an object store carries the user metadata :data:`GENERATION`
(``x-amz-meta-hdmf-zarr3-generation`` on S3): a random id drawn for each new file (``w``, ``w-``, ``x``)
and kept by appends. A reader remembers the generation of the root it opened and refuses an object of
another generation with :class:`~hdmf_zarr3.FileReplacedError`. It costs no request: the metadata comes
with every GET. Objects without it (files written before, other writers, tools that copy objects
without their metadata) are read as they are.
"""

from __future__ import annotations

import uuid

from ...errors import FileReplacedError

#: The user metadata key (S3 sends it as ``x-amz-meta-hdmf-zarr3-generation``; keys are lower case there).
GENERATION = "hdmf-zarr3-generation"
#: The key whose generation a reader keeps: the root document it opened.
ROOT_KEY = "zarr.json"


def new_generation() -> str:
    """A fresh generation id for a new file."""
    return uuid.uuid4().hex


def check_generation(found: str | None, expected: str | None, key: str, location: str) -> None:
    """Raise :class:`FileReplacedError` when the object ``key`` belongs to another file version than the
    root a reader opened (both known)."""
    if found is not None and expected is not None and found != expected:
        raise FileReplacedError(
            f"{key} was stored by a later write (mode 'w' replaced the file since this reader opened it); what "
            "this reader knows of the file no longer describes what is stored there: reopen it",
            location,
        )
