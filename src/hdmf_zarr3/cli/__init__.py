"""The ``hdmf-zarr3`` command line: move NWB files between HDF5 and Zarr, and look inside them.

Each sub-command lives in its own module and adds its parser with ``add_parser(subparsers)``; the
parsed arguments carry the function that runs it. Errors are reported in one line (the error type
and its message, which names the file and the node), with the traceback only under ``--debug``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..errors import IncompleteFileError
from . import check_dandi, convert, info, recover, validate
from .arguments import incomplete_hint


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hdmf-zarr3",
        description="Convert NWB files between HDF5 and Zarr v3, and inspect NWB Zarr files.")
    parser.add_argument("--debug", action="store_true", help="show the full traceback of an error")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in (convert, info, validate, check_dandi, recover):
        module.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (0 success, 1 error, 2 usage error)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        print("hdmf-zarr3: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if args.debug:
            raise
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        if isinstance(exc, IncompleteFileError) and hasattr(args, "allow_incomplete"):
            message = incomplete_hint(message)
        print(f"hdmf-zarr3 {args.command}: {type(exc).__name__}: {message}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
