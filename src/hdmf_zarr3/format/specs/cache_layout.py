"""Layout of the cached specifications.

The root attribute ``.specloc`` holds the path of the specifications group (``specifications``).
Each namespace version is a group ``/specifications/<namespace>/<version>``; inside it, the namespace
document is the scalar text array ``namespace`` and every schema source file is a scalar text array
named exactly as the namespace document's ``source`` entry names it. HDMF names a source it loaded from
a YAML file after the file without its extension (``nwb.ecephys.yaml`` -> ``nwb.ecephys``); a source
copied from another file's cache keeps the name it has there (``ndx-ophys-devices.extensions``). Each
value is the JSON text of that document.

When a file is converted or exported, the destination caches the source file's documents exactly as
they are (:func:`namespaces_to_add` says what else it caches).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from typing import Any

from ...errors import CorruptStoreError
from ..vocabulary import SPECLOC_ATTR

#: The raw cached specifications of a file: ``{namespace: {version: {document name: JSON text}}}``.
Cached = dict[str, dict[str, dict[str, str]]]

NAMESPACE_DOC = "namespace"
#: Version group names older writers used for namespaces without a version.
UNVERSIONED = ("unversioned", "None")


def specifications_group(documents: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The group the root's ``.specloc`` names (``None`` when the root has none), checked.

    It must be a path of a group below the root that holds only cached specifications: namespace
    groups, their version groups, each with its ``namespace`` document array, and document arrays. A
    reader leaves that group out of the file's tree, so a ``.specloc`` naming a group of data
    (``acquisition``) would hide it silently; that, a value that is no path (``5``, ``""``, ``"/"``,
    ``".."``) and a group that does not exist (``/etc``) are :class:`CorruptStoreError` naming ``/``."""
    value = documents.get("/", {}).get("attributes", {}).get(SPECLOC_ATTR)
    if value is None:
        return None
    parts = value.strip("/").split("/") if isinstance(value, str) else []
    if not parts or not all(parts) or any(p in (".", "..") for p in parts):
        raise CorruptStoreError(f"{SPECLOC_ATTR} must be the path of a group below the root, got {value!r}", "/")
    base = "/" + "/".join(parts)
    if documents.get(base, {}).get("node_type") != "group":
        raise CorruptStoreError(f"{SPECLOC_ATTR} {value!r} names no group of this file", "/")
    versions: dict[str, bool] = {}
    for path, doc in documents.items():
        if not path.startswith(base + "/"):
            continue
        rest = path[len(base) + 1 :].split("/")
        kind = doc.get("node_type")
        if (len(rest) < 3 and kind != "group") or len(rest) > 3 or (len(rest) == 3 and kind != "array"):
            raise CorruptStoreError(
                f"{SPECLOC_ATTR} {value!r} names a group that holds more than specifications ({path} is "
                f"{'an' if kind == 'array' else 'a'} {kind} where only "
                f"{'groups' if len(rest) < 3 else 'specification documents'} belong)",
                "/",
            )
        if len(rest) == 2:
            versions.setdefault(path, False)
        elif len(rest) == 3:
            versions[posixpath.dirname(path)] = versions.get(posixpath.dirname(path), False) or rest[2] == NAMESPACE_DOC
    for group, has_namespace in versions.items():
        if not has_namespace:
            raise CorruptStoreError(
                f"{SPECLOC_ATTR} {value!r}: {group} holds no {NAMESPACE_DOC!r} document (not a cached specification)",
                "/",
            )
    return base


def version_group(specloc: str, namespace: str, version: str) -> str:
    return "/" + posixpath.join(specloc.strip("/"), namespace, str(version))


def source_name(source: str) -> str:
    """Array name of a schema source file."""
    return posixpath.splitext(source)[0]


def latest_version(versions: Iterable[str]) -> str:
    """The version a reader loads: the largest name, preferring real versions to unversioned ones."""
    names = sorted(versions)
    real = [v for v in names if v not in UNVERSIONED]
    return (real or names)[-1]


def used_namespaces(documents: Mapping[str, Mapping[str, Any]]) -> set[str]:
    """The namespaces named by the ``namespace`` attributes of a file's node documents."""
    found = set()
    for doc in documents.values():
        value = doc.get("attributes", {}).get("namespace")
        if isinstance(value, str):
            found.add(value)
    return found


def namespaces_to_add(cached: Iterable[str], used: Iterable[str], includes: Mapping[str, Iterable[str]]) -> list[str]:
    """Namespaces a converted file caches from the type map besides the source's cached documents.

    Those the written nodes use (``used``) that the source does not cache under any version, with the
    namespaces they include (``includes``: each known namespace's included namespaces), so that the
    cache loads on its own. Namespaces the type map does not know (absent from ``includes``) are left
    out. Returned sorted, for a deterministic file.
    """
    have = set(cached)
    todo = [ns for ns in used if ns not in have and ns in includes]
    added: set[str] = set()
    while todo:
        ns = todo.pop()
        if ns in added or ns in have or ns not in includes:
            continue
        added.add(ns)
        todo.extend(includes[ns])
    return sorted(added)
