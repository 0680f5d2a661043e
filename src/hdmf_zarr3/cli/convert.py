"""``hdmf-zarr3 convert SRC DST``: NWB files HDF5 ⇄ Zarr v3, and older Zarr conventions to ours."""

from __future__ import annotations

import argparse
from typing import Any

from .arguments import add_storage_options


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "convert", help="convert an NWB file between HDF5 and Zarr v3",
        description="Convert the NWB file SRC to DST; the direction follows from the names: a path ending "
                    "in .zarr or .zarr.zip (or an existing directory) is Zarr, anything else HDF5. A Zarr "
                    "SRC may be written by hdmf_zarr3 or by hdmf-zarr (0.14, or <= 0.13 in Zarr v2). DST is "
                    "replaced if it exists.")
    parser.add_argument("src", help="the file to read (path or URL)")
    parser.add_argument("dst", help="the file to write (path or URL)")
    parser.add_argument("--convention", choices=["hdmf_zarr3", "hdmf-zarr"], default=None,
                        help="for a Zarr DST: this package's format (default) or hdmf-zarr 0.14's")
    add_storage_options(parser, "DST")
    parser.add_argument("--no-progress", action="store_true", help="do not show progress bars")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..conversion import convert

    kwargs: dict[str, Any] = {}
    if args.convention is not None:
        kwargs["convention"] = args.convention
    if args.storage_options is not None:
        kwargs["storage_options"] = args.storage_options
    convert(args.src, args.dst, progress=not args.no_progress, **kwargs)
    print(f"converted {args.src} -> {args.dst}")
    return 0
