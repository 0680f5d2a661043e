"""``hdmf-zarr3 info PATH``: the tree of an NWB Zarr file, with the storage of every array."""

from __future__ import annotations

import argparse
import json
import math
import posixpath
from typing import Any

from .arguments import add_allow_incomplete, add_storage_options

#: Attributes that name a node's HDMF type (NWB and hdmf-common).
TYPE_ATTRS = ("neurodata_type", "data_type")


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


def describe_file(
    path: str,
    storage_options: dict[str, Any] | None = None,
    specifications: bool = False,
    allow_incomplete: bool = False,
) -> dict[str, Any]:
    """Everything ``info`` shows, as plain data: the file's convention, whether its last write did not
    finish (``incomplete``: what did not, or ``None``) and one entry per node."""
    from ..backend.zarrio import ZarrIO
    from ..format.documents import SPECLOC_ATTR, completion

    with ZarrIO(path, mode="r", storage_options=storage_options, allow_incomplete=allow_incomplete) as io:
        documents = io.documents
        specloc = documents.get("/", {}).get("attributes", {}).get(SPECLOC_ATTR)
        hidden = "/" + specloc.strip("/") if isinstance(specloc, str) and not specifications else None
        nodes = [
            _node(io, p, documents[p])
            for p in sorted(documents)
            if hidden is None or not (p == hidden or p.startswith(hidden + "/"))
        ]
        mark = io.store_handle.incomplete()
        return {
            "path": str(path),
            "convention": io.dialect,
            "incomplete": completion.describe(mark) if mark is not None else None,
            "nodes": nodes,
        }


def _node(io: Any, path: str, doc: dict[str, Any]) -> dict[str, Any]:
    attrs = doc.get("attributes", {})
    entry: dict[str, Any] = {"path": path, "kind": doc["node_type"]}
    for key in TYPE_ATTRS:
        if isinstance(attrs.get(key), str):
            entry["type"] = f"{attrs.get('namespace', '?')}:{attrs[key]}"
            break
    if doc["node_type"] == "array":
        entry.update(_array(io, path, doc))
    return entry


def _array(io: Any, path: str, doc: dict[str, Any]) -> dict[str, Any]:
    from ..backend.datasets import ZarrDataset
    from ..format.documents import VIRTUAL_ATTR
    from ..integrations import describe

    layout = io.array_layout(path)
    dataset = ZarrDataset(io.dataset_context, path, doc, layout)
    out: dict[str, Any] = {"shape": list(dataset.shape), "dtype": _dtype(layout.storage.zarr_dtype)}
    if layout.objects:  # hdmf-zarr <= 0.13 object arrays: no zarr array to ask
        return out
    details = describe(dataset)
    out["chunks"] = list(details["Chunk shape"])
    out["shards"] = list(details["Shard shape"]) if details["Shard shape"] else None
    out["codecs"] = details["Codecs"].split(", ") if details["Codecs"] else []
    virtual = doc.get("attributes", {}).get(VIRTUAL_ATTR)
    if isinstance(virtual, dict):  # chunks read in place from another file (convert --virtual)
        out["virtual"] = {k: virtual.get(k) for k in ("location", "chunks", "copied")}
    out["logical_bytes"] = int(dataset.nbytes)
    try:
        out["stored_bytes"] = int(dataset.dataset.nbytes_stored())
    except Exception:  # a store that cannot list its keys
        out["stored_bytes"] = None
    return out


def _dtype(zarr_dtype: Any) -> str:
    if isinstance(zarr_dtype, list):  # compound: its fields
        return "{" + ", ".join(f"{f.get('name')}: {_dtype(f.get('dtype'))}" for f in zarr_dtype) + "}"
    if isinstance(zarr_dtype, dict):
        return str(zarr_dtype.get("target_type") or zarr_dtype.get("name") or zarr_dtype)
    return str(zarr_dtype)


def run(args: argparse.Namespace) -> int:
    found = describe_file(args.path, args.storage_options, args.specifications, args.allow_incomplete)
    if args.json:
        print(json.dumps(found, indent=1))
        return 0
    print(f"{found['path']}  ({found['convention']})")
    if found["incomplete"]:
        print(f"  ({found['incomplete']})")
    for node in found["nodes"]:
        print(_line(node))
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
