"""``hdmf-zarr3 info PATH``: the tree of an NWB Zarr file, with the storage of every array.

What is shown is :func:`hdmf_zarr3.info`'s :class:`~hdmf_zarr3.FileInfo`; this prints it as a tree, or as
its JSON (``--json``).
"""

from __future__ import annotations

import argparse
import json
import math
import posixpath
from typing import Any

from ..inspection import info
from .arguments import add_allow_incomplete, add_storage_options
from .output import say


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "info",
        help="show the groups and arrays of a Zarr file",
        description="Show the tree of an HDMF/NWB Zarr file: groups with their neurodata types, arrays with "
        "shape, HDMF dtype, chunks, shards, codecs, logical and stored size.",
    )
    parser.add_argument("path", help="the file (path or URL)")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of a tree")
    parser.add_argument("--specifications", action="store_true", help="include the cached specifications")
    add_storage_options(parser, "PATH")
    add_allow_incomplete(parser, "show what a file whose last write did not finish holds")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    found = info(args.path, args.storage_options, args.specifications, args.allow_incomplete).to_dict()
    if args.json:
        print(json.dumps(found, indent=1))
        return 0
    say(f"{found['path']}  ({found['convention']})")
    if found["incomplete"]:
        say(f"  ({found['incomplete']})")
    for node in found["nodes"]:
        say(_line(node))
    return 0


def _line(node: dict[str, Any]) -> str:
    path = node["path"]
    depth = 0 if path == "/" else path.count("/")
    name = "/" if path == "/" else posixpath.basename(path)
    text = "  " * depth + (name + "/" if node["kind"] == "group" and path != "/" else name)
    if "type" in node:
        text += f"  <{node['type']}>"
    if node["kind"] == "array":
        text += f"  {node['dtype']} {tuple(node['shape'])}"
        if node.get("chunks"):
            text += f"  chunks {tuple(node['chunks'])}"
        if node.get("shards"):
            text += f"  shards {tuple(node['shards'])}"
        if node.get("codecs"):
            text += f"  [{'+'.join(node['codecs'])}]"
        if node.get("virtual"):
            v = node["virtual"]
            text += f"  virtual: {v['chunks']} chunks in {v['location']}" + (
                f", {v['copied']} copied" if v["copied"] else ""
            )
        if node.get("logical_bytes") is not None:
            stored = node.get("stored_bytes")
            text += f"  {_size(node['logical_bytes'])}" + (f" -> {_size(stored)} stored" if stored is not None else "")
    return text


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    exponent = min(int(math.log(n, 1024)), 4)
    return f"{n / 1024**exponent:.1f} {('B', 'KiB', 'MiB', 'GiB', 'TiB')[exponent]}"
