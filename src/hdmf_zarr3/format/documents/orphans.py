"""Nodes without a document: a store's nodes below a node whose ``zarr.json`` is missing.

Zarr v3 has no implicit groups, so such nodes are not part of the tree: reading walks the tree from its
root and never meets them, and ``hdmf-zarr3 validate`` reports them. Pure: documents in, errors out;
used by the reader (:mod:`hdmf_zarr3.backend.read.reader`) and by the store audit
(:mod:`hdmf_zarr3.storage.safety.audit`).
"""

from __future__ import annotations

import posixpath
from typing import Any

from ...errors import CorruptStoreError


def orphans(documents: dict[str, Any], ignore: set[str] | None = None) -> list[CorruptStoreError]:
    """One error per missing node document that nodes below it depend on (pure: documents in, errors out).

    Zarr v3 has no implicit groups: a node whose parent has no ``zarr.json`` is not part of the tree,
    and a reader that walks the tree from its root never meets it.
    """
    below: dict[str, list[str]] = {}  # topmost node without a document -> the nodes below it
    for path in documents:
        if path == "/" or any(path == i or path.startswith(i + "/") for i in ignore or ()):
            continue
        top, ancestor = None, posixpath.dirname(path)
        while True:
            if ancestor not in documents:
                top = ancestor
            if ancestor == "/":
                break
            ancestor = posixpath.dirname(ancestor)
        if top is not None:
            below.setdefault(top, []).append(path)
    return [
        CorruptStoreError(
            f"no zarr.json (missing, or not a regular file), yet nodes below it exist: "
            f"{', '.join(sorted(nodes)[:5])}{' ...' if len(nodes) > 5 else ''}; they are not read",
            path,
        )
        for path, nodes in sorted(below.items())
    ]
