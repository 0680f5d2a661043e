"""Faults at the k-th write-side (or, with ``calls=READ_CALLS``, read-side) h5py call (issue #27): the h5py
high-level API HDF5IO writes (reads) through is patched so that its k-th call raises a given exception instead
of running.

    with H5Faults(fail_at=3, fault=lambda: OSError(errno.ENOSPC, "No space left on device")) as faults:
        convert(src, dst)
    faults.calls  # how many write-side calls were made (all of them when fail_at is None)

``where`` counts only the calls about some files (:func:`in_file`, :func:`in_directory`): those of the source,
or of the destination, of an HDF5 → HDF5 conversion, where both files are open at once.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import h5py
import pytest

#: (class, method): every call HDF5IO makes to create or change a file: file creation, group and dataset
#: creation, writes into datasets, growth, attributes, links, flush and close.
WRITE_CALLS: tuple[tuple[Any, str], ...] = (
    (h5py.File, "__init__"),
    (h5py.File, "flush"),
    (h5py.File, "close"),
    (h5py.Group, "create_group"),
    (h5py.Group, "create_dataset"),
    (h5py.Group, "__setitem__"),
    (h5py.Dataset, "__setitem__"),
    (h5py.Dataset, "resize"),
    (h5py.AttributeManager, "__setitem__"),
    (h5py.AttributeManager, "create"),
)

#: (class, method): the calls a conversion from an HDF5 file makes to read it: opening and closing the file,
#: looking up groups, datasets and attributes, reading from datasets.
READ_CALLS: tuple[tuple[Any, str], ...] = (
    (h5py.File, "__init__"),
    (h5py.File, "close"),
    (h5py.Group, "__getitem__"),
    (h5py.Dataset, "__getitem__"),
    (h5py.Dataset, "read_direct"),
    (h5py.AttributeManager, "__getitem__"),
)

#: The three faults of the issue: Ctrl-C, a full disk, an I/O error.
FAULTS: dict[str, Callable[[], BaseException]] = {
    "interrupt": KeyboardInterrupt,
    "ENOSPC": lambda: OSError(errno.ENOSPC, "No space left on device"),
    "EIO": lambda: OSError(errno.EIO, "Input/output error"),
}


#: Says whether a call is counted, from the real path of the file it is about.
Where = Callable[[str], bool]


def in_file(path: str | os.PathLike[str]) -> Where:
    """The calls about the file ``path`` (symlinks resolved)."""
    real = os.path.realpath(path)
    return lambda filename: filename == real


def in_directory(path: str | os.PathLike[str]) -> Where:
    """The calls about the files in the directory ``path`` (an HDF5 destination and its working copy beside it, in
    a private directory ``.<name>.<random>.partial/``)."""
    real = os.path.realpath(path)

    def holds(filename: str) -> bool:
        parent = os.path.dirname(filename)
        return parent == real or (os.path.dirname(parent) == real and parent.endswith(".partial"))

    return holds


class H5Faults:
    """Counts write-side h5py calls (``calls``; of every file unless ``where`` says which: a conversion from Zarr
    opens no other HDF5 file) and makes call number ``fail_at`` (1-based) raise ``fault()``; ``failed`` says
    which call it was."""

    def __init__(
        self,
        fail_at: int | None = None,
        fault: Callable[[], BaseException] = KeyboardInterrupt,
        calls: tuple[tuple[Any, str], ...] = WRITE_CALLS,
        where: Where | None = None,
    ):
        self.fail_at = fail_at
        self.patched = calls
        self.fault = fault
        self.where = where
        self.calls = 0
        self.failed: str | None = None
        self._patch = pytest.MonkeyPatch()

    def __enter__(self) -> H5Faults:
        if self.where is not None:  # (an attribute manager names no file: remember its owner's)
            self._patch.setattr(h5py.AttributeManager, "__init__", _remembering(h5py.AttributeManager.__init__))
        for cls, name in self.patched:
            self._patch.setattr(cls, name, self._counted(getattr(cls, name), f"{cls.__name__}.{name}"))
        return self

    def __exit__(self, *exc: Any) -> None:
        self._patch.undo()

    def _counted(self, method: Callable[..., Any], label: str) -> Callable[..., Any]:
        faults = self

        def call(obj: Any, *args: Any, **kwargs: Any) -> Any:
            if faults.where is not None and not faults.where(_filename(obj, args, kwargs, label)):
                return method(obj, *args, **kwargs)
            faults.calls += 1
            if faults.calls == faults.fail_at:
                faults.failed = label
                raise faults.fault()
            return method(obj, *args, **kwargs)

        return call


def _remembering(init: Callable[..., None]) -> Callable[..., None]:
    def remembering(manager: Any, parent: Any) -> None:
        init(manager, parent)
        manager.h5_faults_file = _filename(parent, (), {}, "")

    return remembering


def _filename(obj: Any, args: tuple[Any, ...], kwargs: dict[str, Any], label: str) -> str:
    """The real path of the file the call ``label`` on ``obj`` is about ("" when unknown)."""
    if isinstance(obj, h5py.AttributeManager):
        return str(getattr(obj, "h5_faults_file", ""))
    if label == "File.__init__":  # (not open yet: its name is the argument)
        name = args[0] if args else kwargs.get("name")
        return os.path.realpath(name) if isinstance(name, (str, os.PathLike)) else ""
    try:
        return os.path.realpath(obj.file.filename)
    except Exception:  # noqa: BLE001 -- a closed object: no file known
        return ""


@contextlib.contextmanager
def small_tmpfs(where: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` (``mount -t tmpfs -o size=...``) mounted at ``where`` for the block, unmounted after;
    the test is skipped, saying why, when it cannot be mounted (not root, no mount permission)."""
    if os.geteuid() != 0:
        pytest.skip("a real full disk needs root to mount a small tmpfs")
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)
