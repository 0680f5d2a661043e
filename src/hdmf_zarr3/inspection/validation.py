"""Validate an NWB Zarr file: everything reading it would fail on, storage checks, and schema validation.

The rule: whatever ``NWBZarrIO.read()``, or reading any dataset of the file, fails on (or silently
leaves out) is a :class:`Problem` naming the node. The checks that reading makes are the same functions
(:mod:`hdmf_zarr3.backend.read.integrity`, :mod:`hdmf_zarr3.format.documents.orphans`); the store is also
listed and every ``zarr.json`` read (:mod:`hdmf_zarr3.storage.safety.audit`), which reading skips when the
root's consolidated metadata is there. ``hdmf-zarr3 validate`` prints one problem per line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pynwb
from hdmf.build import GroupBuilder

from ..backend.datasets import ResolvingDataset, ZarrDataset
from ..backend.read import integrity
from ..backend.zarrio import NWBZarrIO
from ..errors import HdmfZarrError
from ..format.documents import completion
from ..storage.handles import open_store
from ..storage.safety import audit

#: What a problem is about: ``"storage"`` the store and its documents (the listing, an unfinished write,
#: a ``zarr.json`` differing from its consolidated copy, missing or out of the tree, a missing chunk, an
#: array declaring far more than is stored); ``"reading"`` what stops the file from being read (an error
#: opening or building it, a dangling link or reference, a cycle of links, a type no specification
#: defines); ``"dataset"`` an array whose data cannot be read (a chunk that does not decode, an element
#: of a reference dataset that does not resolve); ``"schema"`` what PyNWB's validator finds against the
#: specifications cached in the file (or that it could not run).
Kind = Literal["storage", "reading", "dataset", "schema"]

#: How the message of an unfinished write says to go on; the command line says it in its own words.
CHECK_ANYWAY = "validate it with allow_incomplete=True to check what is there"


@dataclass(frozen=True)
class Problem:
    """One problem :func:`validate` found in a file.

    Attributes
    ----------
    path : str
        The node the problem is about ("/" for the file as a whole; for a schema problem, the location
        PyNWB's validator gives, with a ``.name`` suffix when it is about an attribute).
    kind : {"storage", "reading", "dataset", "schema"}
        What the problem is about (see :data:`Kind`).
    message : str
        The problem in one line, naming the node, as ``hdmf-zarr3 validate`` prints it (like the
        message of an :class:`~hdmf_zarr3.HdmfZarrError`, which names its ``.path``).
    """

    path: str
    kind: Kind
    message: str

    def __str__(self) -> str:
        return self.message

    def to_dict(self) -> dict[str, str]:
        """The problem as JSON-ready data."""
        return {"path": self.path, "kind": self.kind, "message": self.message}


@dataclass(frozen=True)
class ValidationReport:
    """Every problem :func:`validate` found in one file, in the order they were found.

    Attributes
    ----------
    path : str
        The file, as given.
    problems : tuple of Problem
        Empty when the file is valid.
    """

    path: str
    problems: tuple[Problem, ...] = ()

    @property
    def valid(self) -> bool:
        """Whether no problem was found."""
        return not self.problems

    def __str__(self) -> str:
        """One line per problem, then the verdict: what ``hdmf-zarr3 validate`` prints (which names its
        ``--allow-incomplete`` where this names the argument ``allow_incomplete=True``)."""
        verdict = "valid" if self.valid else f"{len(self.problems)} problem(s)"
        return "\n".join([*(str(p) for p in self.problems), f"{self.path}: {verdict}"])

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        return {"path": self.path, "valid": self.valid, "problems": [p.to_dict() for p in self.problems]}


def validate(
    path: str | Path, storage_options: dict[str, Any] | None = None, allow_incomplete: bool = False
) -> ValidationReport:
    """Every problem found in the NWB Zarr file at ``path``.

    The file opens (complete, a known format version, metadata within limits); every node document
    agrees with the root's consolidated metadata and no node or chunk is left out of the tree; every
    link and reference (every element of reference datasets too) resolves inside the file and none
    makes a cycle; every neurodata type is defined by a loaded specification; HDMF builds every container
    (tables whose columns agree, no object id held twice, nothing it refuses); no array declares far
    more than the file stores; the first chunk of every array decodes; and PyNWB's validator finds
    nothing against the specifications cached in the file.

    Parameters
    ----------
    path : str or Path
        The file: a directory, a ``.zip``, an icechunk repository or a URL.
    storage_options : dict, optional
        Options of a remote store (as for :class:`~hdmf_zarr3.ZarrIO`).
    allow_incomplete : bool, default False
        Check what a file whose last write did not finish holds. Without it such a file gives one
        problem saying so, and nothing else is checked; with it that problem is followed by the others.

    Returns
    -------
    ValidationReport
        Its problems (each once, even when two checks see it); ``report.valid`` is True when there is none.
    """
    location = str(path)
    found, incomplete = _storage_problems(location, storage_options, allow_incomplete)
    if not incomplete or allow_incomplete:
        found += _reading_problems(location, storage_options, allow_incomplete)
    unique: dict[str, Problem] = {}  # a problem both the audit and the reader see: once, where first seen
    for problem in found:
        unique.setdefault(problem.message, problem)
    return ValidationReport(location, tuple(unique.values()))


def _storage_problems(
    location: str, storage_options: dict[str, Any] | None, allow_incomplete: bool
) -> tuple[list[Problem], bool]:
    """The audit's problems, and whether the file's last write did not finish."""
    found: list[Problem] = []
    handle = open_store(location, "r", storage_options, allow_incomplete=True)
    try:
        try:  # a store that cannot even be listed (a zarr.json that is no regular file) is one problem
            documents, mark = handle.documents(), handle.incomplete()
        except HdmfZarrError as exc:
            documents, mark = {}, None
            found.append(_from_error(exc, "storage", "/"))
        if mark is not None:
            hint = "" if allow_incomplete else f"; {CHECK_ANYWAY}"
            found.append(Problem("/", "storage", f"/: {completion.describe(mark)}{hint}"))
        try:
            found += [
                Problem(node, "storage", message) for node, message in audit.audit(handle.store, documents, location)
            ]
        except HdmfZarrError as exc:  # the guarded store refuses to list past an entry that is no regular file
            found.append(_from_error(exc, "storage", "/"))
    finally:
        handle.close()
    return found, mark is not None


def _reading_problems(location: str, storage_options: dict[str, Any] | None, allow_incomplete: bool) -> list[Problem]:
    found: list[Problem] = []
    try:
        with NWBZarrIO(location, mode="r", storage_options=storage_options, allow_incomplete=allow_incomplete) as io:
            root = io.read_builder()  # links and attribute references resolve, or a typed error names one
            cycle = integrity.find_cycle(root)
            found += [_from_error(cycle, "reading", "/")] if cycle is not None else []
            found += [_from_error(e, "reading", "/") for e in integrity.unknown_types(root, io.manager.type_map)]
            found += [_from_error(e, "reading", "/") for e in integrity.container_problems(root, io.manager.type_map)]
            found += _dataset_problems(root)
            if cycle is None:  # HDMF's validator follows links as its builder does
                found += _build_problems(io, found)
                found += _schema_problems(io)
    except HdmfZarrError as exc:  # the file cannot be read at all: this is the one thing to report
        found.append(_from_error(exc, "reading", "/"))
    return found


def _build_problems(io: NWBZarrIO, found: list[Problem]) -> list[Problem]:
    """What fails while HDMF builds the containers (``read()``'s typed error naming the node), unless a
    problem found before is about that node already (a chunk that does not decode: the same failure)."""
    if any(p.kind == "reading" for p in found) or "neurodata_type" not in io.read_builder().attributes:
        return []  # read() stops at that problem first; a tree of no container: nothing to build
    try:
        io.read()
    except HdmfZarrError as exc:
        return [] if any(p.path == exc.path for p in found) else [_from_error(exc, "reading", "/")]
    except Exception as exc:  # neither ours nor the content's (construct_errors maps that): said as it is
        return [Problem("/", "reading", f"/: the containers cannot be built: {type(exc).__name__}: {exc}")]
    return []


def _schema_problems(io: NWBZarrIO) -> list[Problem]:
    try:
        errors = pynwb.validate(io=io)
    except HdmfZarrError:
        raise
    except Exception as exc:  # the validator itself failed on this file
        return [Problem("/", "schema", f"schema validation could not run: {type(exc).__name__}: {exc}")]
    # hdmf's location is relative to the root ("" for the root itself)
    return [Problem("/" + str(e.location or "").strip("/"), "schema", f"schema: {e}") for e in errors]


def _dataset_problems(root: GroupBuilder) -> list[Problem]:
    """The first chunk of every array decodes; every element of a dataset of references resolves."""
    out = []
    for path, builder in integrity.walk(root):
        data = getattr(builder, "data", None)
        if not isinstance(data, ZarrDataset) or not data.shape or 0 in data.shape:
            continue
        try:
            if isinstance(data, ResolvingDataset):  # every element, a chunk of rows at a time
                step = max(1, data.chunks[0])
                for start in range(0, data.shape[0], step):
                    data[start : start + step]
            else:
                data[tuple(slice(0, 1) for _ in data.shape)]
        except HdmfZarrError as exc:
            out.append(Problem(exc.path or path, "dataset", str(exc) if exc.path else f"{path}: {exc}"))
        except Exception as exc:  # whatever decoding raises, the dataset cannot be read: named, not raised
            out.append(Problem(path, "dataset", f"{path}: cannot be read: {type(exc).__name__}: {exc}"))
    return out


def _from_error(exc: HdmfZarrError, kind: Kind, default: str) -> Problem:
    """An error as a problem: its message (which names its path), about its path."""
    return Problem(exc.path or default, kind, str(exc))
