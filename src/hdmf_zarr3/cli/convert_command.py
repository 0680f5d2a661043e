"""``hdmf-zarr3 convert SRC DST``: NWB files HDF5 ⇄ Zarr v3, and older Zarr conventions to ours."""

from __future__ import annotations

import argparse
import os
from typing import Any

from .arguments import add_storage_options
from .output import say


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "convert",
        help="convert an NWB file between HDF5 and Zarr v3",
        description="Convert the NWB file SRC to DST; the direction follows from the names: a path ending "
        "in .zarr or .zarr.zip (or an existing directory) is Zarr, anything else HDF5. A Zarr "
        "SRC may be written by hdmf_zarr3 or by hdmf-zarr (0.14, or <= 0.13 in Zarr v2). DST is "
        "replaced if it exists.",
    )
    parser.add_argument("src", help="the file to read (path or URL)")
    parser.add_argument("dst", help="the file to write (path or URL)")
    parser.add_argument(
        "--convention",
        choices=["hdmf_zarr3", "hdmf-zarr"],
        default=None,
        help="for a Zarr DST: this package's format (default) or hdmf-zarr 0.14's",
    )
    _add_layout_options(parser)
    parser.add_argument(
        "--virtual",
        action="store_true",
        help="SRC is an HDF5 file (a path, or an s3:// or http(s):// URL with --src-storage-options), DST a new "
        "icechunk repository (a local directory, or an s3:// prefix with --storage-options; never "
        "replacing anything there): large numeric datasets read their chunks in place from SRC (nothing "
        "copied); prints what became of each dataset",
    )
    add_storage_options(parser, "DST")
    add_storage_options(parser, "SRC", flag="--src-storage-options")
    parser.add_argument("--no-progress", action="store_true", help="do not show progress bars")
    parser.set_defaults(run=run)


def _add_layout_options(parser: Any) -> None:
    """The options choosing a Zarr DST's layout: chunks, shards, codec and the chunk key separator."""
    layout = parser.add_argument_group(
        "layout of a Zarr DST",
        "Arrays keep their chunks, shards and compression unless told otherwise. Each "
        "option takes a value for every array, or /PATH=VALUE for one dataset; repeat it for several.",
    )
    layout.add_argument(
        "--chunks",
        action="append",
        metavar="[/PATH=]SHAPE|auto",
        help="chunk shape, e.g. 30000,64 ('auto': the default layout's)",
    )
    layout.add_argument(
        "--shards",
        action="append",
        metavar="[/PATH=]SHAPE|auto|none",
        help="shard shape, whole multiples of the chunks ('auto': shard large arrays; 'none': one object per chunk)",
    )
    layout.add_argument(
        "--codec",
        action="append",
        metavar="[/PATH=]CODEC",
        help="compressor: zstd[:LEVEL], gzip[:LEVEL], blosc[-lz4|-lz4hc|-zstd|-zlib][:LEVEL], "
        "none, a JSON codec document, or auto (the data type's default); "
        "--chunks auto --shards auto --codec auto repacks into the default layout",
    )
    layout.add_argument(
        "--chunk-key-separator",
        choices=["/", "."],
        default=None,
        help="'.' keeps chunk keys one level under their array, '/' nests one level per axis "
        "(default: '/' unless that is deeper than DANDI's 7 levels, then '.')",
    )


def run(args: argparse.Namespace) -> int:
    from ..hdf5 import convert

    kwargs: dict[str, Any] = {}
    if args.convention is not None:
        kwargs["convention"] = args.convention
    if args.storage_options is not None:
        kwargs["storage_options"] = args.storage_options
    if args.src_storage_options is not None:
        kwargs["src_storage_options"] = args.src_storage_options
    if args.chunk_key_separator is not None:
        kwargs["chunk_key_separator"] = args.chunk_key_separator
    for name in ("chunks", "shards", "codec"):
        if getattr(args, name):
            kwargs[name] = dict(parse_rule(text) for text in getattr(args, name))
    if args.virtual:
        kwargs["virtual"] = True
        _quiet_icechunk(args.debug)
    report = convert(args.src, args.dst, progress=not args.no_progress, **kwargs)
    for path, what in (report or {}).items():
        say(f"{path}: {what}")
    say(f"converted {args.src} -> {args.dst}" + (" (virtual)" if args.virtual else ""))
    return 0


def parse_rule(text: str) -> tuple[str, str]:
    """``"/path=VALUE"`` → ``("/path", "VALUE")``; a bare ``"VALUE"`` applies to every array.

    The value stays text: ``convert()`` parses it (:mod:`hdmf_zarr3.format.layout.relayout_text`), as it does the
    same strings given from Python.
    """
    from ..hdf5 import EVERY

    if text.startswith("/") and "=" in text:
        path, _, value = text.partition("=")
        return path.rstrip("/") or "/", value
    return EVERY, text


def _quiet_icechunk(debug: bool) -> None:
    """icechunk warns on every local repository that local storage is unsafe for concurrent commits (a
    conversion commits once): its warnings are kept for --debug or an ICECHUNK_LOG the user set."""
    if debug or "ICECHUNK_LOG" in os.environ:
        return
    import icechunk

    icechunk.set_logs_filter("error")
