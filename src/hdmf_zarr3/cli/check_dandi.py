"""``hdmf-zarr3 check-dandi PATH``: what DANDI will refuse or fail to read in a Zarr NWB file, before upload.

The rules, as the DANDI archive and its client apply them to Zarr assets:

- the asset is a Zarr *directory* whose name ends in ``.nwb.zarr`` (zip files are not Zarr assets);
- no key is more than 7 levels deep (dandi-cli's ``MAX_ZARR_DEPTH``): with the ``/`` chunk-key
  separator a 2-D array in ``processing/<module>/<interface>/<series>/data`` already needs 8, with
  ``.`` every chunk key is one level below its array (hdmf_zarr3 writes ``.`` by default wherever
  ``/`` would be too deep; older files: ``convert --chunk-key-separator .``);
- every object is uploaded with one PUT, so no chunk or shard may exceed 5 GiB;
- arrays are also opened with TensorStore's ``zarr3`` driver, which reads numeric and boolean data
  types with the ``bytes``, ``transpose``, ``gzip``, ``blosc``, ``zstd``, ``crc32c`` and
  ``sharding_indexed`` codecs; other arrays (strings, compounds, numcodecs codecs) are reported as
  warnings: hdmf_zarr3 and zarr-python read them, TensorStore may not.
"""

from __future__ import annotations

import argparse
import math
import posixpath
from dataclasses import dataclass
from typing import Any

from ..format.array_view import SHARDING_CODEC, ArrayView
from ..format.dtypes import FIXED_SIZE_TYPES
from ..format.layout_policy import MAX_KEY_DEPTH, nested_key_depth
from .arguments import add_storage_options

MAX_DEPTH = MAX_KEY_DEPTH
MAX_OBJECT_BYTES = 5 * 2**30
TENSORSTORE_CODECS = frozenset({"bytes", "transpose", "gzip", "blosc", "zstd", "crc32c", SHARDING_CODEC})
TENSORSTORE_TYPES = FIXED_SIZE_TYPES  # (tensorstore reads every core data type of a fixed size)


@dataclass
class Finding:
    level: str  # "error": DANDI refuses the upload; "warning": DANDI's readers may fail on it
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.level}: {self.path}: {self.message}"


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "check-dandi",
        help="check a Zarr NWB file against DANDI's upload rules",
        description=__doc__.split("\n\n", 1)[1].replace("``", "'"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("path", help="the file (path or URL)")
    add_storage_options(parser)
    parser.set_defaults(run=run)


def check(path: str, storage_options: dict[str, Any] | None = None) -> list[Finding]:
    """Every finding for the file at ``path`` (errors first)."""
    from ..backend.io import ZarrIO
    from ..storage import locations

    found: list[Finding] = []
    name = locations.basename(str(path))
    if name.endswith(".zip"):
        found.append(
            Finding(
                "error",
                name,
                "DANDI takes Zarr directories, not zip files: unpack it "
                "(hdmf-zarr3 convert FILE.nwb.zarr.zip FILE.nwb.zarr)",
            )
        )
    elif not name.endswith(".nwb.zarr"):
        found.append(Finding("error", name, "an NWB Zarr asset must be named *.nwb.zarr"))
    with ZarrIO(path, mode="r", storage_options=storage_options) as io:
        for node, doc in sorted(io.documents.items()):
            if doc.get("node_type") == "array":
                found += _array_findings(io, node, doc)
            elif _depth(node) + 1 > MAX_DEPTH:
                found.append(
                    Finding("error", node, f"its zarr.json is {_depth(node) + 1} levels deep; DANDI allows {MAX_DEPTH}")
                )
    errors = sorted((f for f in found if f.level == "error"), key=lambda f: f.path)
    return errors + _grouped([f for f in found if f.level != "error"])


def _grouped(warnings: list[Finding]) -> list[Finding]:
    """One warning per message, naming how many arrays it applies to and a few of them."""
    by_message: dict[str, list[str]] = {}
    for finding in warnings:
        by_message.setdefault(finding.message, []).append(finding.path)
    out = []
    for message, paths in sorted(by_message.items()):
        paths.sort()
        where = (
            paths[0]
            if len(paths) == 1
            else f"{len(paths)} arrays ({', '.join(paths[:3])}{', ...' if len(paths) > 3 else ''})"
        )
        out.append(Finding("warning", where, message))
    return out


def _depth(node: str) -> int:
    return 0 if node == "/" else node.strip("/").count("/") + 1


def _array_findings(io: Any, node: str, doc: dict[str, Any]) -> list[Finding]:
    from ..format.limits import data_type_itemsize

    out = []
    ndim = len(doc.get("shape", []))
    v2 = doc.get("zarr_format") == 2
    separator = (
        (doc.get("dimension_separator") or ".")
        if v2
        else doc.get("chunk_key_encoding", {}).get("configuration", {}).get("separator", "/")
    )
    if separator != "/":
        key_depth = _depth(node) + 1
    elif v2:  # v2 keys are i/j (a 0-d array's key is one level)
        key_depth = _depth(node) + max(ndim, 1)
    else:  # v3 keys are c/i/j
        key_depth = nested_key_depth(node, ndim)
    if key_depth > MAX_DEPTH:
        out.append(
            Finding(
                "error",
                node,
                f"chunk keys are {key_depth} levels deep (chunk-key separator "
                f"{separator!r}); DANDI allows {MAX_DEPTH}: rewrite the file with "
                "'.' as separator (hdmf-zarr3 convert SRC DST --chunk-key-separator .)",
            )
        )
    if not v2:
        grid = ArrayView.from_document(doc).chunk_grid
        nominal = math.prod(grid) * data_type_itemsize(doc.get("data_type", "uint8"))
        if nominal > MAX_OBJECT_BYTES:
            out.append(
                Finding(
                    "error",
                    node,
                    f"each chunk or shard holds {nominal / 2**30:.1f} GiB uncompressed; "
                    "DANDI uploads objects of at most 5 GiB: use smaller shards",
                )
            )
        data_type = doc.get("data_type")
        name = (
            data_type if isinstance(data_type, str) else data_type.get("name") if isinstance(data_type, dict) else None
        )
        codecs = _codec_names(doc.get("codecs", []))
        if name not in TENSORSTORE_TYPES:
            out.append(Finding("warning", node, f"data type {name!r}: TensorStore's zarr3 driver may not open it"))
        elif not codecs <= TENSORSTORE_CODECS:
            out.append(
                Finding(
                    "warning",
                    node,
                    f"codecs {sorted(codecs - TENSORSTORE_CODECS)}: TensorStore's zarr3 driver may not open it",
                )
            )
    else:
        out.append(Finding("warning", node, "Zarr v2 array (hdmf-zarr <= 0.13): convert the file to Zarr v3"))
    return out


def _codec_names(codecs: list[Any]) -> set[str]:
    names = set()
    for codec in codecs:
        if isinstance(codec, dict):
            names.add(str(codec.get("name")))
            config = codec.get("configuration") or {}
            for key in ("codecs", "index_codecs"):
                names |= _codec_names(config.get(key, []) if isinstance(config, dict) else [])
    return names


def run(args: argparse.Namespace) -> int:
    found = check(args.path, args.storage_options)
    errors = sum(f.level == "error" for f in found)
    for finding in found:
        print(finding)
    verdict = "ready for DANDI" if not errors else f"{errors} error(s): DANDI will refuse it"
    print(f"{posixpath.basename(str(args.path).rstrip('/'))}: {verdict} ({len(found) - errors} warning(s))")
    return 1 if errors else 0
