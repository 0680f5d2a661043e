"""dandi-cli 0.81's validation of a Zarr asset (``ZarrAsset.get_validation_errors``), rule for rule.

dandi-cli walks the directory and reports, each as an ERROR that makes ``dandi upload`` (default
``--validation require``) refuse the asset:

- ``zarr.invalid_zarr_json``: a ``zarr.json`` that is not a JSON object with a string ``node_type``;
- ``zarr.tensorstore_cannot_open``: an array TensorStore's ``zarr3`` driver cannot open (dandi-cli opens
  every array of a Zarr v3 asset with it; the walk does not go below an array). The decision is
  :func:`hdmf_zarr3.format.layout.tensorstore_rules.refusal`;
- ``zarr.cannot_open`` (neither ``zarr.json`` nor ``.zgroup``/``.zarray`` at the top, or a consolidated
  Zarr v2 group with an array whose data type dandi-cli's zarr-python 3.1.5 has none for: hdmf-zarr 0.13's
  pickled object arrays) and ``dandi_zarr.empty_group`` (a Zarr v2 group without members);
- ``dandi_zarr.tree_depth_exceeded``: a file 8 or more path components below the asset's top
  (``MAX_ZARR_DEPTH = 7`` directories); ``.git``, ``.dandi``, ``.datalad``, ``.gitattributes`` and
  ``.gitmodules`` are not part of the asset.

``dandi upload`` also stops at an object larger than 5 GiB (one S3 PUT each; multipart is not supported
for Zarr chunks): reported here as ``hdmf_zarr3.object_too_large`` (dandi-cli has no id, the upload fails).
"""

from __future__ import annotations

import json
import math
import posixpath
from collections.abc import Iterator
from typing import Any

from zarr.abc.store import Store

from ..errors import CorruptStoreError, HdmfZarrError, MetadataLimitError
from ..format.documents import data_type_itemsize, load_json
from ..format.layout import tensorstore_rules
from ..format.vocabulary import ArrayView
from ..storage.stores import get_keys, list_objects, object_sizes
from .findings import ERROR, TENSORSTORE_ISSUE, UPLOAD_ANYWAY, WARNING, DandiFinding

MAX_ZARR_DEPTH = 7  # dandi.consts.MAX_ZARR_DEPTH
MAX_OBJECT_BYTES = 5 * 2**30  # dandi.consts.S3_MAX_SINGLE_PART_UPLOAD
EXCLUDED = frozenset({".dandi", ".datalad", ".git", ".gitattributes", ".gitmodules"})  # dandi.utils
ZARR_JSON = "zarr.json"
DEPTH_WAY = "rewrite the file with '.' as chunk-key separator: hdmf-zarr3 convert SRC DST --chunk-key-separator ."


def zarr_findings(store: Store, local: bool) -> list[DandiFinding]:
    """What dandi-cli's Zarr validation and upload refuse in ``store`` (sizes are checked when ``local``)."""
    keys = [k for k in list_objects(store) if not EXCLUDED & set(k.split("/"))]
    if ZARR_JSON in keys:
        found = _v3(store, keys)
    elif ".zgroup" in keys or ".zarray" in keys:
        found = _v2(store, keys)
    else:
        found = [DandiFinding(ERROR, "zarr.cannot_open", "/", "Zarr format cannot be determined (no zarr.json)")]
    found += _depth(keys)
    if local:
        sizes, names = dict(zip(keys, object_sizes(store, keys))), set(keys)
        found += [
            DandiFinding(
                ERROR,
                "hdmf_zarr3.object_too_large",
                _owner(key, names),
                f"the object {key} is {size / 2**30:.2f} GiB: dandi upload sends each object in one PUT of "
                "at most 5 GiB and stops",
                "write smaller chunks or shards",
            )
            for key, size in sizes.items()
            if size > MAX_OBJECT_BYTES
        ]
    return found


def _node(key: str) -> str:
    return "/" + posixpath.dirname(key) if "/" in key else "/"


def _v3(store: Store, keys: list[str]) -> list[DandiFinding]:
    documents = [k for k in keys if k == ZARR_JSON or k.endswith("/" + ZARR_JSON)]
    documents.sort(key=lambda k: (k.count("/"), k))  # parents before children, as a walk meets them
    found: list[DandiFinding] = []
    arrays: set[str] = set()
    for key, raw in _fetched(store, documents):
        node = _node(key)
        if any(node == a or node.startswith(a.rstrip("/") + "/") for a in arrays):
            continue  # dandi-cli's walk does not go below an array
        try:
            doc = _parse(raw, node)
        except MetadataLimitError as exc:  # dandi-cli would read it; this package's reader refuses it
            found.append(DandiFinding(ERROR, "hdmf_zarr3.zarr_json_too_large", node, str(exc)))
            continue
        if doc is None:
            found.append(
                DandiFinding(
                    ERROR,
                    "zarr.invalid_zarr_json",
                    node,
                    "Invalid zarr.json file (not a JSON object with a string node_type)",
                    UPLOAD_ANYWAY,
                )
            )
            continue
        if doc["node_type"] != "array":
            continue
        arrays.add(node)
        reason = tensorstore_rules.refusal(doc)
        if reason is not None:
            found.append(
                DandiFinding(
                    ERROR,
                    "zarr.tensorstore_cannot_open",
                    node,
                    f"TensorStore's zarr3 driver, which dandi-cli opens every Zarr v3 array with, cannot open it: "
                    f"{reason}{_compound_readers(doc)}",
                    f"{UPLOAD_ANYWAY}; {TENSORSTORE_ISSUE}" if "data type" in reason else UPLOAD_ANYWAY,
                )
            )
        else:
            found += _nominal_size(node, doc)
    return found


def _compound_readers(doc: dict[str, Any]) -> str:
    """For a compound array, which zarr-python versions read it (issue #42: measured with 3.0.10, 3.1.5 and
    3.4.2 by tests/integrations/test_older_zarr_python.py)."""
    data_type = doc.get("data_type")
    if not isinstance(data_type, dict) or data_type.get("name") != "struct":
        return ""
    return (
        " (zarr-python reads this compound from 3.1 on, dandi-cli's 3.1.5 included; zarr-python 3.0 has no "
        "compound type: it opens the file only with use_consolidated=False, and not this array)"
    )


#: Node documents fetched at once: each is parsed and let go before the next batch, so what the check holds
#: is one batch of documents (each within the limits of one), however many nodes the file has.
FETCH_BATCH = 64


def _fetched(store: Store, keys: list[str]) -> Iterator[tuple[str, bytes | None]]:
    """``(key, raw)`` of every key, fetched concurrently a batch at a time."""
    for start in range(0, len(keys), FETCH_BATCH):
        batch = keys[start : start + FETCH_BATCH]
        yield from zip(batch, get_keys(store, batch))


def _parse(raw: bytes | None, node: str) -> dict[str, Any] | None:
    """The document as dandi-cli's model accepts it (a JSON object whose node_type is a string), or None.
    One beyond the limits of a node document raises :class:`MetadataLimitError` (it is not parsed)."""
    try:
        doc = load_json(raw, "zarr.json", node) if raw is not None else None
    except MetadataLimitError:
        raise
    except CorruptStoreError:  # not JSON, not UTF-8, or nested too deeply to parse
        return None
    return doc if isinstance(doc, dict) and isinstance(doc.get("node_type"), str) else None


def _nominal_size(node: str, doc: dict[str, Any]) -> list[DandiFinding]:
    """A chunk or shard that may come out larger than one upload takes (it depends on compression)."""
    try:
        nominal = math.prod(ArrayView.from_document(doc).chunk_grid) * data_type_itemsize(doc["data_type"])
    except HdmfZarrError:  # a document TensorStore opens but we do not read (its chunk size is not ours to judge)
        return []
    if nominal <= MAX_OBJECT_BYTES:
        return []
    return [
        DandiFinding(
            WARNING,
            "hdmf_zarr3.object_may_be_too_large",
            node,
            f"each chunk or shard holds {nominal / 2**30:.1f} GiB uncompressed; dandi upload stops at an object "
            "over 5 GiB",
            "use smaller shards",
        )
    ]


def _v2(store: Store, keys: list[str]) -> list[DandiFinding]:
    """Zarr v2 (hdmf-zarr <= 0.13): dandi-cli opens it with zarr-python and refuses an empty group."""
    if ".zgroup" not in keys:
        return []
    raw = get_keys(store, [".zgroup"])[0]
    try:
        load_json(raw or b"", ".zgroup", "/")
    except CorruptStoreError as exc:  # (a .zgroup beyond the limits of a document too: it is not parsed)
        return [DandiFinding(ERROR, "zarr.cannot_open", "/", f"Error opening file (.zgroup is not JSON: {exc})")]
    if ".zmetadata" in keys:  # zarr-python 3.1.5 opens a consolidated group by parsing every array's metadata
        refused = _v2_unparsed(get_keys(store, [".zmetadata"])[0])
        if refused is not None:
            return [
                DandiFinding(
                    ERROR,
                    "zarr.cannot_open",
                    "/",
                    f"Error opening file: zarr-python 3.1.5 (dandi-cli's) has no data type for {refused}",
                    UPLOAD_ANYWAY,
                )
            ]
    members = {k.split("/")[0] for k in keys if k.count("/") == 1 and k.endswith(("/.zgroup", "/.zarray"))}
    if members:
        return []
    return [DandiFinding(ERROR, "dandi_zarr.empty_group", "/", "Zarr group is empty.")]


def _v2_unparsed(raw: bytes | None) -> str | None:
    """The first array of consolidated v2 metadata whose data type zarr-python 3.1.5 cannot parse: an object
    (``|O``) data type, alone or in a record, unless its object codec is ``vlen-utf8`` or ``vlen-bytes``
    (checked against zarr 3.1.5; other v2 data types it parses are not enumerated here)."""
    doc = _parse_json(raw)
    metadata = doc.get("metadata") if isinstance(doc, dict) else None
    for key, meta in sorted(metadata.items()) if isinstance(metadata, dict) else []:
        if not key.endswith(".zarray") or not isinstance(meta, dict):
            continue
        dtype, filters = meta.get("dtype"), meta.get("filters") or []
        codec = filters[0].get("id") if filters and isinstance(filters[0], dict) else None
        if "|O" in json.dumps(dtype) and (not isinstance(dtype, str) or codec not in ("vlen-utf8", "vlen-bytes")):
            return f"/{key.removesuffix('/.zarray')} (dtype {dtype!r}, object codec {codec!r})"
    return None


def _parse_json(raw: bytes | None) -> Any:
    try:
        return load_json(raw, ".zmetadata", "/") if raw is not None else None
    except CorruptStoreError:  # (a .zmetadata beyond the limits of a document too: read() refuses it)
        return None


def _depth(keys: list[str]) -> list[DandiFinding]:
    """One finding per node holding a file 8 or more components deep (dandi-cli reports the asset once)."""
    deepest: dict[str, str] = {}
    names = set(keys)
    for key in keys:
        if key.count("/") + 1 >= MAX_ZARR_DEPTH + 1:
            node = _owner(key, names)
            if node not in deepest or key.count("/") > deepest[node].count("/"):
                deepest[node] = key
    return [
        DandiFinding(
            ERROR,
            "dandi_zarr.tree_depth_exceeded",
            node,
            f"Zarr directory tree more than {MAX_ZARR_DEPTH} directories deep: {key} is "
            f"{key.count('/') + 1} levels deep",
            DEPTH_WAY,
        )
        for node, key in sorted(deepest.items())
    ]


def _owner(key: str, names: set[str]) -> str:
    """The nearest node above ``key`` that has a document (its array, for a chunk)."""
    parts = key.split("/")[:-1]
    while parts:
        prefix = "/".join(parts)
        if prefix + "/" + ZARR_JSON in names or prefix + "/.zarray" in names or prefix + "/.zgroup" in names:
            return "/" + prefix
        parts.pop()
    return "/"
