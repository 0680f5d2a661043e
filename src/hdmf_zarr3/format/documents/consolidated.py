"""Consolidated metadata: every node's ``zarr.json`` inline in the root's, so one read opens a file.

The root group document carries, as zarr-python 3 writes and reads it::

    "consolidated_metadata": {"kind": "inline", "must_understand": false,
                              "metadata": {"acquisition": {...}, "acquisition/ts/data": {...}, ...}}

Keys are node paths relative to the root, values the nodes' own documents. It is written when a
write, export or append finishes, as the last store operation, and a writer that is about to change
a file whose root carries it first rewrites the root without it: a file is either consolidated and
current, or not consolidated (read by listing the store). A compound array's copy spells its data type
as zarr-python 3.1 reads it (:mod:`.struct_spelling`); reading spells it back. Tools other than hdmf_zarr3 that change a
file must consolidate again (``zarr.consolidate_metadata``) or remove the block.
"""

from __future__ import annotations

from typing import Any

from ...errors import CorruptStoreError
from ..vocabulary import COMPOUND_COPY_FORMAT_VERSION, FORMAT_ATTR, check_node_path
from . import limits
from .struct_spelling import older_spelling

KEY = limits.CONSOLIDATED_KEY


def consolidate(documents: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The root document of ``documents`` (keyed by absolute path) with every other node inlined, compounds
    spelled as zarr-python 3.1 reads them (:mod:`.struct_spelling`); the root of our format then says
    version 2.0, which readers of 1.x refuse instead of failing on that spelling."""
    root = without_consolidated(documents["/"])
    members, respelled = {}, False
    for path, doc in sorted(documents.items()):
        if path != "/":
            bare = without_consolidated(doc)
            spelled = members[path.strip("/")] = older_spelling(bare)
            respelled = respelled or spelled is not bare
    attributes = root.get("attributes", {})
    if respelled and FORMAT_ATTR in attributes:
        root = {**root, "attributes": {**attributes, FORMAT_ATTR: COMPOUND_COPY_FORMAT_VERSION}}
    return {**root, KEY: {"kind": "inline", "must_understand": False, "metadata": members}}


def without_consolidated(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` without a consolidated-metadata block (ours, or zarr-python's empty ones on subgroups)."""
    return {k: v for k, v in doc.items() if k != KEY} if KEY in doc else doc


def expand(root: dict[str, Any], parse: Any) -> dict[str, dict[str, Any]] | None:
    """Every node document held by a consolidated ``root``, keyed by absolute path; ``None`` if it has none.

    ``parse(document, path, depth_checked)`` validates one member (as for a ``zarr.json`` read from the
    store); ``depth_checked`` is True when the whole block was found within the depth limits at once.
    """
    block = root.get(KEY)
    if block is None:
        return None
    if not isinstance(block, dict) or block.get("kind") != "inline" or not isinstance(block.get("metadata"), dict):
        raise CorruptStoreError(
            "consolidated_metadata must be an object with kind 'inline' and a 'metadata' object", "/"
        )
    out = {"/": without_consolidated(root)}
    depth_checked = limits.members_within_depth(block["metadata"])
    for key, member in block["metadata"].items():
        parts = key.split("/") if isinstance(key, str) else [""]
        if not all(parts) or any(p in (".", "..") for p in parts) or not isinstance(member, dict):
            raise CorruptStoreError(f"consolidated_metadata member {key!r} is not a node path and document", "/")
        path = "/" + key
        check_node_path(path)
        out[path] = without_consolidated(parse(member, path, depth_checked))
    return out
