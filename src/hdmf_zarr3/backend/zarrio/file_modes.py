"""The mode a :class:`~hdmf_zarr3.ZarrIO` is opened in, and every decision the backend takes from it, made here
once: whether the file is created (nothing to read, no cached namespaces), read only (no write), or replaced
(the only mode an export or ``force_overwrite`` works in). Opening itself (locks, replacement) is decided
by :func:`~hdmf_zarr3.storage.handles.open_store`."""

from __future__ import annotations

from dataclasses import dataclass

from hdmf.backends.errors import UnsupportedOperation

from ...storage.handles import CREATE_MODES

#: Modes that only read (``r-``: hdmf-zarr's, reading by listing the store).
READ_ONLY_MODES = frozenset({"r", "r-"})


@dataclass(frozen=True)
class FileMode:
    """A mode as a :class:`~hdmf_zarr3.ZarrIO` was given it (``name``), and what follows from it."""

    name: str

    @property
    def creates(self) -> bool:
        """``w``, ``w-``, ``x``: the file is new (or replaced): nothing in it to read or load."""
        return self.name in CREATE_MODES

    @property
    def reads_only(self) -> bool:
        """``r``, ``r-``: nothing may be written."""
        return self.name in READ_ONLY_MODES

    @property
    def replaces(self) -> bool:
        """``w``: a new file replacing whatever is there once written (export and ``force_overwrite`` need it)."""
        return self.name == "w"

    def check_writable(self, source: str | None) -> None:
        """HDMF's ``UnsupportedOperation`` for a write in a read-only mode."""
        if self.reads_only:
            raise UnsupportedOperation(
                f"Cannot write to file {source} in mode {self.name!r}. Please use mode 'r+', 'w', 'w-', 'x', or 'a'"
            )

    def check_readable(self, source: str | None) -> None:
        """HDMF's ``UnsupportedOperation`` for a read of a file being created."""
        if self.creates:
            raise UnsupportedOperation(
                f"Cannot read from file {source} in mode '{self.name}'. Please use mode 'r', 'r+', or 'a'."
            )

    def check_exportable(self, source: str | None) -> None:
        """HDMF's ``UnsupportedOperation`` for an export in a mode other than ``w``."""
        if not self.replaces:
            raise UnsupportedOperation(f"Cannot export to file {source} in mode '{self.name}'. Please use mode 'w'.")
