"""``hdmf-zarr3 recover PATH``: undo an append that was interrupted, from the journal it left."""

from __future__ import annotations

import argparse
from typing import Any

from .arguments import add_storage_options
from .output import say


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "recover",
        help="undo an interrupted append (the file reads as incomplete)",
        description="Put a file whose last append was interrupted (killed, crashed, power cut) back as it was "
        "before that append, byte for byte, from the journal the append kept in the file. A complete "
        "file is left as it is. Exit status 1 when there is nothing to go back to (the interrupted "
        "write created the file).",
    )
    parser.add_argument("path", help="the file (path or URL)")
    parser.add_argument(
        "--break-lock",
        action="store_true",
        help="first remove the write lock the interrupted writer left (only if it is not running)",
    )
    add_storage_options(parser, "PATH")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..storage.handles import recover

    say(recover(args.path, storage_options=args.storage_options, break_lock=args.break_lock))
    return 0
