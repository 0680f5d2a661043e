"""``hdmf-zarr3 validate PATH``: everything reading the file would fail on, storage checks, and schema validation.

The rule: whatever ``NWBZarrIO.read()``, or reading any dataset of the file, fails on (or silently
leaves out) is reported here, one line per problem naming the node. The checks that reading makes are
the same functions (:mod:`hdmf_zarr3.backend.read.integrity`, :mod:`hdmf_zarr3.format.documents.orphans`); the store is
also listed and every ``zarr.json`` read (:mod:`hdmf_zarr3.storage.safety.audit`), which reading skips when the
root's consolidated metadata is there.
"""

from __future__ import annotations

import argparse
from typing import Any

from .arguments import add_allow_incomplete, add_storage_options


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "validate",
        help="validate an NWB Zarr file (schema and storage format)",
        description="Check an NWB Zarr file: it opens (complete, known format version, metadata within limits), "
        "every node document agrees with the root's consolidated metadata and no node or chunk is "
        "left out of the tree, every link and reference (also every element of reference datasets) "
        "resolves inside the file, no link or reference makes a cycle, every neurodata type is "
        "defined by a loaded specification, no array declares far more than the file stores, the "
        "first chunk of every array decodes, and PyNWB's validator finds nothing against the "
        "specifications cached in the file. Prints one line per problem; exit status 0 if the file "
        "is valid, 1 if not.",
    )
    parser.add_argument("path", help="the file (path or URL)")
    add_storage_options(parser, "PATH")
    add_allow_incomplete(parser, "check what a file whose last write did not finish holds (it is still reported)")
    parser.set_defaults(run=run)


def problems(path: str, storage_options: dict[str, Any] | None = None, allow_incomplete: bool = False) -> list[str]:
    """Every problem found in the file, one line each (empty when it is valid)."""
    from ..errors import HdmfZarrError
    from ..format.documents import completion
    from ..storage.safety import audit
    from ..storage.stores import open_store

    found: list[str] = []
    handle = open_store(path, "r", storage_options, allow_incomplete=True)
    try:
        try:  # a store that cannot even be listed (a zarr.json that is no regular file) is one problem
            documents, mark = handle.documents(), handle.incomplete()
        except HdmfZarrError as exc:
            documents, mark = {}, None
            found.append(str(exc))
        if mark is not None:
            found.append(
                f"/: {completion.describe(mark)}"
                + ("" if allow_incomplete else "; run with --allow-incomplete to check what is there")
            )
        try:
            found += [message for _, message in audit.audit(handle.store, documents, handle.location)]
        except HdmfZarrError as exc:  # the guarded store refuses to list past an entry that is no regular file
            found.append(str(exc))
    finally:
        handle.close()
    if mark is None or allow_incomplete:
        found += _reading_problems(path, storage_options, allow_incomplete)
    return list(dict.fromkeys(found))  # a problem seen by both the audit and the reader once


def _reading_problems(path: str, storage_options: dict[str, Any] | None, allow_incomplete: bool) -> list[str]:
    import pynwb

    from ..backend.read import integrity
    from ..backend.zarrio import NWBZarrIO
    from ..errors import HdmfZarrError

    found: list[str] = []
    try:
        with NWBZarrIO(path, mode="r", storage_options=storage_options, allow_incomplete=allow_incomplete) as io:
            root = io.read_builder()  # links and attribute references resolve, or a typed error names one
            cycle = integrity.find_cycle(root)
            found += [str(cycle)] if cycle is not None else []
            found += [str(e) for e in integrity.unknown_types(root, io.manager.type_map)]
            found += _dataset_problems(root)
            if cycle is None:  # HDMF's validator follows links as its builder does
                try:
                    found += [f"schema: {e}" for e in pynwb.validate(io=io)]
                except HdmfZarrError:
                    raise
                except Exception as exc:  # the validator itself failed on this file
                    found.append(f"schema validation could not run: {type(exc).__name__}: {exc}")
    except HdmfZarrError as exc:  # the file cannot be read at all: this is the one thing to report
        found.append(str(exc))
    return found


def _dataset_problems(root: Any) -> list[str]:
    """The first chunk of every array decodes; every element of a dataset of references resolves."""
    from ..backend.datasets import ResolvingDataset, ZarrDataset
    from ..backend.read import integrity
    from ..errors import HdmfZarrError

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
            out.append(str(exc) if exc.path else f"{path}: {exc}")
        except Exception as exc:
            out.append(f"{path}: cannot be read: {type(exc).__name__}: {exc}")
    return out


def run(args: argparse.Namespace) -> int:
    found = problems(args.path, args.storage_options, args.allow_incomplete)
    for line in found:
        print(line)
    print(f"{args.path}: {'valid' if not found else f'{len(found)} problem(s)'}")
    return 1 if found else 0
