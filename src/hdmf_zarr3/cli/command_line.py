"""The ``hdmf-zarr3`` command: its parser (one sub-parser per ``<command>_command.py``) and :func:`main`, which
runs a command and reports its error in one line (see the :mod:`hdmf_zarr3.cli` door)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from .. import IncompleteFileError
from . import (
    check_dandi_command,
    convert_command,
    info_command,
    recover_command,
    validate_command,
    view_command,
)
from .arguments import incomplete_hint
from .output import escaped_warnings, say

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hdmf-zarr3",
        description="Convert NWB files between HDF5 and Zarr v3, and inspect NWB Zarr files.",
        formatter_class=argparse.RawDescriptionHelpFormatter,  # (--version's line is not wrapped at the terminal)
    )
    parser.add_argument("--debug", action="store_true", help="show the full traceback of an error")
    parser.add_argument(
        "--version",
        action="version",
        version=versions(),
        help="print the versions of hdmf-zarr3 and of the libraries it works with (for a bug report), and exit",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in (convert_command, info_command, validate_command, check_dandi_command, recover_command, view_command):
        module.add_parser(commands)
    return parser


#: The libraries whose versions ``--version`` prints beside ours.
LIBRARIES = ("zarr", "hdmf", "pynwb", "numcodecs", "numpy", "h5py")


def versions() -> str:
    """``hdmf-zarr3 <version>`` and, in parentheses, each library's installed version and Python's."""
    from importlib import metadata

    from .. import __version__

    def installed(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "not installed"

    found = ", ".join(f"{name} {installed(name)}" for name in LIBRARIES)
    return f"hdmf-zarr3 {__version__} ({found}, Python {sys.version.split()[0]})"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (0 success, 1 error, 2 usage error)."""
    try:
        status = _run(build_parser(), argv)
        sys.stdout.flush()  # a closed pipe shows here, not at exit where Python would print a traceback
        return status
    except BrokenPipeError:
        return _output_closed()


def _run(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> int:
    args = parser.parse_args(argv)
    try:
        with escaped_warnings():
            return int(args.run(args) or 0)
    except BrokenPipeError:
        raise
    except KeyboardInterrupt:
        print("hdmf-zarr3: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if args.debug:
            raise
        # the first of our lines (split at newlines only: a CR or U+2028 from the file is escaped, not a cut)
        message = str(exc).strip().split("\n")[0]
        if isinstance(exc, IncompleteFileError) and hasattr(args, "allow_incomplete"):
            message = incomplete_hint(message)
        say(f"hdmf-zarr3 {args.command}: {type(exc).__name__}: {message}", file=sys.stderr)
        return 1


def _output_closed() -> int:
    """Whoever read our output has gone: point stdout at devnull so the flush at exit cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout with no file descriptor (captured): nothing to flush to
        pass
    return 1
