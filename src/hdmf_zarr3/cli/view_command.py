"""``hdmf-zarr3 view PATH_OR_URL``: look at an NWB Zarr file in the browser (a local, read-only server)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .arguments import add_storage_options
from .output import say


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "view",
        help="look at an NWB Zarr file in the browser",
        description="Start a read-only web server on 127.0.0.1 showing the file: its tree by neurodata type with "
        "every array's storage, its tables, its time series plotted, its images. The URL printed carries a "
        "secret token (requests without it are refused); Ctrl-C stops the server.",
    )
    parser.add_argument("path", help="the file (path or URL: s3://, gs://, az://, https://)")
    add_storage_options(parser, "PATH")
    parser.add_argument("--port", type=int, default=0, help="the port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--no-browser", action="store_true", help="print the URL only, do not open a browser")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..view import serve

    def announce(url: str) -> None:
        say(f"hdmf-zarr3 view: serving {args.path} at")
        say(f"    {url}")
        say("(Ctrl-C to stop)", flush=True)

    try:
        serve(args.path, args.storage_options, port=args.port, open_browser=not args.no_browser, announce=announce)
    except KeyboardInterrupt:  # the way to stop it: not an error
        print("hdmf-zarr3 view: stopped", file=sys.stderr)
    return 0
