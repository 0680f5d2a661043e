"""Every path the package touches while a block runs, traced with audit hooks (PEP 578).

``with tracing() as trace: run()`` records each file system operation as ``(operation, absolute path)``:
opened (``open``, with whether it could write), created (``mkdir``, ``mkstemp``, ``mkdtemp``), renamed and
linked (both names), deleted (``remove``, ``rmdir``, ``rmtree``), truncated, and the operations
:mod:`hdmf_zarr3.storage.paths` announces itself (``hdmf_zarr3.paths.touch``: its calls name a directory
descriptor and a bare name, which the stdlib events do not resolve). A name relative to a directory
descriptor is resolved through ``/proc/self/fd``.

An audit hook cannot be removed: one hook is installed for the process on first use, and records only
while a :func:`tracing` block is open (in any thread: zarr writes on its I/O threads).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

from session_machinery import in_session_machinery

#: The audit event ``hdmf_zarr3.storage.paths`` raises (its ``AUDIT_EVENT``; spelled out so that the trace also
#: runs against a version of the package without that room).
AUDIT_EVENT = "hdmf_zarr3.paths.touch"

#: stdlib audit event -> (operation, indices of the path arguments, index of their dir_fd or None)
_EVENTS: dict[str, tuple[str, tuple[int, ...], tuple[int | None, ...]]] = {
    "open": ("open", (0,), (None,)),
    "os.rename": ("rename", (0, 1), (2, 3)),  # os.rename and os.replace
    "os.link": ("link", (0, 1), (2, 3)),
    "os.symlink": ("symlink", (1,), (2,)),
    "os.remove": ("remove", (0,), (1,)),  # os.remove and os.unlink
    "os.rmdir": ("rmdir", (0,), (1,)),
    "os.mkdir": ("mkdir", (0,), (2,)),
    "os.truncate": ("truncate", (0,), (None,)),
    "shutil.rmtree": ("rmtree", (0,), (1,)),
    "shutil.copyfile": ("copy", (0, 1), (None, None)),
    "shutil.move": ("move", (0, 1), (None, None)),
    "tempfile.mkstemp": ("mkstemp", (0,), (None,)),
    "tempfile.mkdtemp": ("mkdtemp", (0,), (None,)),
}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


@dataclass
class PathTrace:
    """What one :func:`tracing` block touched: ``(operation, absolute path)`` in order."""

    events: list[tuple[str, str]] = field(default_factory=list)

    def paths(self, *operations: str) -> list[str]:
        """The distinct paths touched (by one of ``operations``, if given), in the order first touched."""
        seen: dict[str, None] = {}
        for operation, path in self.events:
            if not operations or operation in operations:
                seen.setdefault(path, None)
        return list(seen)

    def below(self, directory: str | os.PathLike[str], *operations: str) -> list[str]:
        """The distinct paths touched inside ``directory`` (and ``directory`` itself), relative to it."""
        base = os.path.abspath(directory)
        out = []
        for path in self.paths(*operations):
            if path == base or path.startswith(base + os.sep):
                out.append(os.path.relpath(path, base))
        return out


_active: list[PathTrace] = []
_guard = threading.Lock()
_installed = [False]


def _resolved(path: object, dir_fd: object) -> str | None:
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, (str, os.PathLike)):
        return None  # (a descriptor: os.fdopen, ftruncate)
    text = os.fspath(path)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if os.path.isabs(text):
        return os.path.normpath(text)
    if isinstance(dir_fd, int) and dir_fd >= 0:
        try:
            return os.path.normpath(os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), text))
        except OSError:
            return None
    return os.path.abspath(text)


def _hook(event: str, args: tuple[object, ...]) -> None:
    if not _active or in_session_machinery():
        return
    if event == AUDIT_EVENT:
        records = [(f"paths.{args[0]}", os.path.abspath(os.fspath(args[1])))]  # type: ignore[arg-type]
    elif event in _EVENTS:
        operation, where, fds = _EVENTS[event]
        if event == "open":
            flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
            mode = args[1] if isinstance(args[1], str) else ""
            writes = bool(flags & _WRITE_FLAGS) or any(c in mode for c in "wax+")
            operation = "open-write" if writes else "open-read"
        records = []
        for index, fd_index in zip(where, fds):
            dir_fd = args[fd_index] if fd_index is not None and fd_index < len(args) else None
            path = _resolved(args[index], dir_fd) if index < len(args) else None
            if path is not None:
                records.append((operation, path))
    else:
        return
    with _guard:
        for trace in _active:
            trace.events.extend(records)


@contextlib.contextmanager
def tracing() -> Iterator[PathTrace]:
    """Record every path touched while the block runs (see the module's description)."""
    with _guard:
        if not _installed[0]:
            sys.addaudithook(_hook)
            _installed[0] = True
    trace = PathTrace()
    with _guard:
        _active.append(trace)
    try:
        yield trace
    finally:
        with _guard:
            _active.remove(trace)
