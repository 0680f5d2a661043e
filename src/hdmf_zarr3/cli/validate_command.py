"""``hdmf-zarr3 validate PATH``: everything reading the file would fail on, storage checks, and schema validation.

The checks are :func:`hdmf_zarr3.validate`'s; this prints its problems, one line each naming the node,
then the verdict.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..inspection import Problem, validate
from .arguments import add_allow_incomplete, add_storage_options
from .output import say


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


def run(args: argparse.Namespace) -> int:
    report = validate(args.path, args.storage_options, args.allow_incomplete)
    for problem in report.problems:
        say(_line(problem))
    say(f"{args.path}: {'valid' if report.valid else f'{len(report.problems)} problem(s)'}")
    return 0 if report.valid else 1


def _line(problem: Problem) -> str:
    """The problem as printed: the way to go on said as the command line's option, not the function's."""
    return str(problem).replace("validate it with allow_incomplete=True", "run with --allow-incomplete")
