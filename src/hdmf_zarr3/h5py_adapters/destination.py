"""An HDF5 file written by a conversion: written beside its destination, swapped in only when finished.

HDF5 truncates a file opened with ``w``: a conversion failing part-way (a full disk, an I/O error, Ctrl-C,
a value HDF5 cannot hold) used to leave neither the old file nor a new one. :func:`write_replacing` hands the
writer a new file in a private directory beside the destination, ``.<name>.<random>.partial/new[.nwb]`` in the
same directory (made fresh, mode 0700: h5py, which opens its file by name, never meets a name planted there), and
moves it over the destination with ``os.replace`` (atomic on one file system) only once it is written and closed;
on any failure it is removed and the destination is as it was, byte for byte (or, when there was none,
still absent).

:class:`Written` follows which node HDF5IO is writing, so that the error raised names it: h5py's errors
name neither the file nor the node, and HDF5IO wraps them in plain ``Exception``/``RuntimeError``.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import HdmfZarrError, StoreError, UnsupportedDataError
from ..storage.paths import private_directory, remove_private_directory, replace_side_file, side_stem
from .h5py_failures import is_h5py_failure

#: h5py's refusal of a text holding a NUL (variable-length strings are NUL-terminated C strings in HDF5).
_NUL_REFUSED = "embedded NULL"

#: HDF5IO's methods that write one node, and how to find that node among their arguments.
_WATCHED = {
    "write_group": "builder",
    "write_dataset": "builder",
    "write_link": "builder",
    "set_attributes": "obj",
}


class Written:
    """The node an HDF5 writer was writing when an error went through it (the innermost one)."""

    def __init__(self) -> None:
        self.failed_at: str | None = None

    def watch(self, io: Any) -> None:
        """Follow ``io``'s (an ``HDF5IO``'s) writes of groups, datasets, links and attributes.

        HDF5IO calls these through ``self``, recursively, so wrapping them on the instance sees every node.
        """
        for name, argument in _WATCHED.items():
            setattr(io, name, self._wrapped(getattr(io, name), argument))

    def _wrapped(self, method: Callable[..., Any], argument: str) -> Callable[..., Any]:
        position = 0 if argument == "obj" else 1  # (obj, attributes) / (parent, builder, ...)

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return method(*args, **kwargs)
            except BaseException:
                if self.failed_at is None:
                    target = kwargs.get(argument, args[position] if len(args) > position else None)
                    self.failed_at = node_path(target)
                raise

        return call


def node_path(target: Any) -> str:
    """The path in the file of a builder (``root/acquisition/x`` is ``/acquisition/x``) or an h5py object."""
    path = getattr(target, "path", None)
    if isinstance(path, str) and not hasattr(target, "attrs"):  # a builder: its path starts with the root's name
        return "/" + path.partition("/")[2]
    name = getattr(target, "name", None)
    return name if isinstance(name, str) else "/"


def write_replacing(
    dst: str, write: Callable[[str, Written], None], reading: Callable[[BaseException], Exception | None] | None = None
) -> None:
    """Call ``write(path, written)`` to write an HDF5 file for ``dst`` at ``path`` (watching its io with
    ``written``, see :class:`Written`) and closing it; then move it over ``dst``. If anything fails, the
    file at ``path`` is removed and ``dst`` is left as it was.

    ``reading(exc)`` says whether a failure is one of reading another file that ``write`` reads from (an HDF5
    source, whose reads interleave with the writes: :func:`.source.source_error`), giving its error, which is
    raised instead of one naming ``dst``.

    While ``write`` runs, the errors HDF5 raises freeing objects of that file (once per object when closing
    it failed for a full disk), which Python reports as ignored exceptions, are not reported again through
    ``sys.unraisablehook``: the error raised says what happened. (h5py also prints each traceback itself, and
    HDF5 keeps a file it could not close open: the interpreter may then crash when it exits, an HDF5 bug
    reproduced with h5py alone; see docs/conversion.md.)

    A symlink at ``dst`` keeps pointing where it did: its target is replaced. The new file gets the old
    one's permission bits.

    Raises
    ------
    StoreError
        The file could not be written or moved into place (a full disk, an I/O error, any failure h5py
        reports: :func:`.h5py_failures.is_h5py_failure`), naming ``dst`` and the node being written; or
        ``reading``'s error.
    UnsupportedDataError
        A value HDF5 cannot hold: a text with an embedded NUL (see :func:`nul_error`).
    KeyboardInterrupt
        Propagated, after the new file is removed.
    """
    if os.path.islink(dst) and not os.path.exists(dst):  # (it would create the file wherever the symlink points)
        raise StoreError(
            f"is a symlink to {os.readlink(dst)}, which does not exist; a file is never created through a symlink", dst
        )
    target = os.path.realpath(dst)
    name = os.path.basename(target)
    # a private directory (mode 0700, a fresh name) beside the destination holds the new file, so that h5py, which
    # opens its file by name, never meets a name planted there; named after a stem that fits, however long the name
    private = private_directory(target, f".{os.path.basename(side_stem(target))}.", suffix=".partial")
    # (ending as the destination does: PyNWB warns about an HDF5 file not named .nwb)
    work = os.path.join(private, "new.nwb" if name.endswith(".nwb") else "new")
    written = Written()
    hook = sys.unraisablehook
    sys.unraisablehook = _quiet(hook, work)
    try:
        _write_replacing(dst, target, work, written, write, reading)
    finally:
        sys.unraisablehook = hook
        remove_private_directory(private)


def _quiet(hook: Callable[[Any], None], work: str) -> Callable[[Any], None]:
    """``hook`` without the errors HDF5 raises freeing objects of the file ``work`` (once per object when
    the disk is full: h5py's ``File.close`` and the garbage collector report them as ignored exceptions);
    the error raised says what happened."""

    def quiet(info: Any) -> None:
        if work not in str(info.exc_value):
            hook(info)

    return quiet


def _write_replacing(
    dst: str,
    target: str,
    work: str,
    written: Written,
    write: Callable[[str, Written], None],
    reading: Callable[[BaseException], Exception | None] | None,
) -> None:
    try:
        write(work, written)
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            mode = None
        if mode is not None:
            os.chmod(work, mode)
        replace_side_file(work, target)  # (a symlink, FIFO or directory at the destination is refused, naming it)
    except BaseException as exc:
        _truncate(work)
        _remove(work)
        if not isinstance(exc, Exception):
            raise
        source = reading(exc) if reading is not None else None
        if source is not None:
            raise source from exc
        ours = translate(exc, dst, written.failed_at, existed=os.path.exists(target))
        if ours is exc:
            raise
        if ours in _chain(exc):  # ours already, wrapped by HDF5IO: raise it as it was
            raise ours from None
        raise ours from exc


def translate(exc: BaseException, dst: str, node: str | None, existed: bool) -> BaseException:
    """Our error for ``exc`` raised while writing the HDF5 file ``dst`` at ``node`` (``exc`` itself when
    neither it nor what caused it is a failure h5py reports (:func:`.h5py_failures.is_h5py_failure`: an ``OSError``,
    or a ``RuntimeError``, ``KeyError`` or ``ValueError`` of h5py's code), a NUL refused, or already ours)."""
    chain = _chain(exc)
    for cause in chain:
        if isinstance(cause, HdmfZarrError):
            return cause
    where = node or "/"
    kept = f"{dst} is as it was" if existed else f"no file was created at {dst}"
    if any(_NUL_REFUSED in str(cause) for cause in chain):
        return nul_error(dst, where, kept)
    for cause in chain:
        if is_h5py_failure(cause):
            detail = "; ".join(dict.fromkeys(str(c) for c in chain if str(c)))
            error = StoreError(f"writing the HDF5 file {dst} failed ({detail}); {kept}", where)
            error.errno = next((c.errno for c in chain if isinstance(c, OSError) and c.errno), None)
            return error
    return exc


def nul_error(dst: str, where: str, kept: str, what: str = "a text") -> UnsupportedDataError:
    """The refusal of ``what``, a text holding a NUL (at ``where``), in a conversion to the HDF5 file ``dst``.

    HDF5's variable-length strings are NUL-terminated C strings, and h5py refuses rather than cut them short;
    a fixed-length or opaque type could hold the bytes, but NWB readers expect text there, so it is refused.
    """
    return UnsupportedDataError(
        f"{what} holds a NUL character, which HDF5 cannot store (its strings end at the first NUL): "
        f"cannot convert to the HDF5 file {dst}; {kept}. Keep the file in Zarr, or remove the NULs",
        where,
    )


def refuse_nul_attributes(builder: Any, dst: str) -> None:
    """Refuse, before anything is written, an attribute of ``builder`` holding a text with a NUL (texts in
    memory: strings, bytes, lists and arrays of them)."""
    for key, value in builder.attributes.items():
        if _has_nul(value):
            where = node_path(builder)
            raise nul_error(dst, where, "nothing was written", f"the text of attribute {key!r}")


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, bytes):
        return b"\x00" in value
    if isinstance(value, (list, tuple)):
        return any(_has_nul(v) for v in value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "OSU":
        return any(_has_nul(v) for v in value.ravel().tolist())
    return False


def _chain(exc: BaseException) -> list[BaseException]:
    found: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in found:
        found.append(current)
        current = current.__cause__ or current.__context__
    return found


def _truncate(path: str) -> None:
    """Give a full disk its space back now: HDF5 may keep the file open (a file it could not close), and an
    unlinked file keeps its blocks while it is open. The file is deleted next, whatever it holds."""
    try:
        os.truncate(path, 0)
    except OSError:
        pass


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError:  # the error being raised says more than this one; the name says what it is
        pass
