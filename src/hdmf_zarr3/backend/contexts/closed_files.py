"""Datasets of closed files inside a container being written: linked to, never read by the writer.

A dataset read from a file that has been closed since raises :class:`~hdmf_zarr3.errors.ClosedFileError`
when its values are read. Writing (or exporting) a container that uses one needs no values: the
writer links to it by its file and path. HDMF's build, though, reads the first element of every
array it is handed (to tell a dataset of references from one of values). For the length of that
build only, a closed file's datasets are read through a read-only handle opened for it; when the
build ends the handles are closed and whatever those reads cached is dropped, so the datasets are as
closed as before and the writer, which comes next, cannot copy their values.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any


class _Build:
    """The read-only handles opened during one build, and the datasets read through them."""

    def __init__(self) -> None:
        self.handles: dict[int, tuple[Any, Any]] = {}  # id(io) -> (io, handle): the io kept alive
        self.datasets: list[Any] = []
        self.ended = False

    def end(self) -> None:
        if self.ended:
            return
        self.ended = True
        for dataset in self.datasets:
            dataset.forget_reads()
        for _, handle in self.handles.values():
            handle.close()
        self.handles.clear()
        self.datasets.clear()


_BUILD: ContextVar[_Build | None] = ContextVar("hdmf_zarr3_closed_reads", default=None)


@contextmanager
def during_build() -> Iterator[None]:
    """Let HDMF's build read datasets of closed files until :func:`build_ended` (or the block's end)."""
    if _BUILD.get() is not None:  # already inside one (a write calling another io's write)
        yield
        return
    build = _Build()
    token = _BUILD.set(build)
    try:
        yield
    finally:
        _BUILD.reset(token)
        build.end()


def build_ended() -> None:
    """The build is over (the writer starts): datasets of closed files are closed again."""
    build = _BUILD.get()
    if build is not None:
        build.end()


def handle_for(dataset: Any) -> Any:
    """A read-only handle on the closed file of ``dataset`` while a build is under way, else ``None``
    (also when the file cannot be opened any more: moved or deleted)."""
    build = _BUILD.get()
    if build is None or build.ended:
        return None
    io = dataset.io
    found = build.handles.get(id(io))
    if found is None:
        try:
            handle = io.reopen_for_reading()
        except Exception:  # whatever the store raises: the closed-file error stands
            return None
        found = build.handles[id(io)] = (io, handle)
    build.datasets.append(dataset)
    return found[1]
