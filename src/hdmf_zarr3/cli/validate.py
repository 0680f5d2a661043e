"""``hdmf-zarr3 validate PATH``: schema validation against the cached specifications, and format checks."""

from __future__ import annotations

import argparse
from typing import Any

from .arguments import add_storage_options


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "validate", help="validate an NWB Zarr file (schema and storage format)",
        description="Check an NWB Zarr file: it opens (complete, known format version, metadata within "
                    "limits), every link and reference resolves, the first chunk of every array decodes, "
                    "and PyNWB's validator finds nothing against the specifications cached in the file. "
                    "Exit status 0 if the file is valid, 1 if not.")
    parser.add_argument("path", help="the file (path or URL)")
    add_storage_options(parser, "PATH")
    parser.set_defaults(run=run)


def problems(path: str, storage_options: dict[str, Any] | None = None) -> list[str]:
    """Every problem found in the file, one line each (empty when it is valid)."""
    import pynwb

    from ..errors import HdmfZarrError
    from ..nwb import NWBZarrIO

    found: list[str] = []
    with NWBZarrIO(path, mode="r", storage_options=storage_options) as io:
        root = io.read_builder()  # links and references resolve, or a typed error says which does not
        found += _array_problems(io, root)
        try:
            errors = pynwb.validate(io=io)
        except HdmfZarrError:
            raise
        except Exception as exc:  # the validator itself failed on this file
            found.append(f"schema validation could not run: {type(exc).__name__}: {exc}")
            errors = []
        found += [f"schema: {e}" for e in errors]
    return found


def _array_problems(io: Any, root: Any) -> list[str]:
    from ..datasets import ZarrDataset

    out = []
    stack = [root]
    while stack:
        group = stack.pop()
        stack.extend(group.groups.values())
        for dataset in group.datasets.values():
            data = dataset.data
            if isinstance(data, ZarrDataset) and data.shape and 0 not in data.shape:
                try:
                    data[tuple(slice(0, 1) for _ in data.shape)]
                except Exception as exc:
                    out.append(f"{data.path}: cannot be read: {type(exc).__name__}: {exc}")
    return out


def run(args: argparse.Namespace) -> int:
    found = problems(args.path, args.storage_options)
    for line in found:
        print(line)
    print(f"{args.path}: {'valid' if not found else f'{len(found)} problem(s)'}")
    return 1 if found else 0
