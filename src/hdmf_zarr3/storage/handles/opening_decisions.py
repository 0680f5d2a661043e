"""What one call of :func:`~.store_opening.open_store` decides before anything is opened (:func:`decide`), and
the refusal of ``storage_options`` that nothing would use."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import ModeError, StoreError
from ..remote import ready_store
from .handle import MODES


@dataclass(frozen=True)
class Opening:
    """What one call of :func:`open_store` decided, once, before anything is opened: the mode (``r-`` read as
    ``r`` without the consolidated metadata), whether an incomplete file may be read, the roots of a virtual
    repository's chunks, the ``storage_options`` as given, whether hdmf-zarr's ``force_overwrite`` deletes what
    is no Zarr file at a local path opened in mode ``w``; ``target``: what is opened, the path or Store as
    given, a store of another library (obstore, an fsspec mapper) wrapped once as a zarr Store."""

    target: Any
    mode: str
    allow_incomplete: bool = False
    use_consolidated: bool = True
    external_roots: tuple[str, ...] = ()
    storage_options: dict[str, Any] | None = None
    force_overwrite: bool = False


def decide(
    path: Any,
    mode: str,
    storage_options: dict[str, Any] | None = None,
    allow_incomplete: bool = False,
    external_roots: Sequence[str] | None = None,
    force_overwrite: bool = False,
) -> Opening:
    """The :class:`Opening` of ``open_store(path, mode, ...)``, or the error its arguments earn."""
    use_consolidated = mode != "r-"
    mode = "r" if mode == "r-" else mode
    if mode not in MODES:
        raise ModeError(f"invalid mode {mode!r}; use one of {', '.join(MODES)} (or r-)")
    if path is None:
        raise ValueError("a path, a URL or a zarr Store is required")
    if allow_incomplete and mode != "r":
        raise ModeError(
            f"allow_incomplete reads an incomplete file and applies to mode 'r' only, not {mode!r}; "
            "to change an incomplete file, first recover it: hdmf_zarr3.recover(path)"
        )
    target = ready_store(path, mode)
    roots = tuple(external_roots or ())
    return Opening(target, mode, allow_incomplete, use_consolidated, roots, storage_options, force_overwrite)


#: Why ``storage_options`` go unused, by what they were given for.
LOCAL_FILE = "they configure object stores (s3://, gs://, az://, https://), not a local file"
GIVEN_STORE = "a Store passed in is used as it is (configure it when made)"


def refuse_options(options: Mapping[str, Any] | None, where: str, why: str) -> None:
    """Refuse ``storage_options`` that nothing would use (zarr-python refuses them too), naming the keys."""
    if options:
        keys = ", ".join(repr(key) for key in options)
        raise StoreError(f"storage_options {keys} would not be used: {why}", where)
