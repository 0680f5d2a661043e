"""What ``hdmf-zarr3 validate`` checks in a store beyond what reading needs.

Reading opens a file with one request, the root's consolidated metadata, and trusts it: that copy is
what makes a remote file open in one round trip, and zarr-python trusts it the same way. A tool that
changes a node afterwards (``zarr.open_array(...).append(...)``) rewrites the node's own ``zarr.json``
but not the copy, which then hides the change. Zarr v3 makes the node's own document the authority,
so this module lists the whole store and reads every document to find what the copy, or a missing
document, hides:

- a ``zarr.json`` that differs from its consolidated copy, is missing, or is not in the copy;
- a missing ``zarr.json`` (or one that is not a regular file) above other nodes, or above stored chunks;
- an array that declares far more than the file stores (a 1.8 TiB shape in a 10 KB file): most of its
  chunks are missing, or what is stored is smaller than any codec compresses real data to;
- a chunk missing from an array that stores every chunk (:mod:`..format.layout.stored_chunks`).

Each problem is one ``(node path, message)``.
"""

from __future__ import annotations

import bisect
import copy
import json
import math
import os
import posixpath
from typing import Any

from zarr.abc.store import Store
from zarr.buffer import default_buffer_prototype

from ...errors import HdmfZarrError
from ...format.documents import MetadataBudget, consolidated, data_type_itemsize, orphans
from ...format.layout import all_chunks_stored, grid, missing_chunks
from ...format.vocabulary import normalize
from ..stores import (
    INTERRUPTED_WRITE,
    ZARR_JSON,
    array_metadata_as_zarr_writes_it,
    bounded,
    check_document,
    list_objects,
    object_sizes,
    parse_document,
    reserved_key,
    sync,
)

#: Arrays declaring at least this many bytes are compared with what is stored.
LARGE_BYTES = 2**30
#: No codec compresses real data this much (zstd on zeros stays under 2**15): a larger ratio means the
#: data is not there.
MAX_RATIO = 2**16
#: Stored objects of a large array whose sizes are summed (one request each on object stores).
SIZED_OBJECTS = 64
Problem = tuple[str, str]


def audit(store: Store, effective: dict[str, dict[str, Any]], location: str | None = None) -> list[Problem]:
    """Every storage problem of a Zarr v3 ``store`` whose documents, as reading sees them, are ``effective``."""
    keys = list_objects(store)
    if ZARR_JSON not in keys:  # a Zarr v2 store (hdmf-zarr <= 0.13): none of this applies
        return []
    found: list[Problem] = []
    own = _documents(
        store, [k for k in keys if k == ZARR_JSON or k.endswith("/" + ZARR_JSON)], found, location or repr(store)
    )
    copy = _consolidated(own.get("/"), found)
    if copy is not None:
        found += _compare(own, copy)
    found += [(e.path or "/", str(e)) for e in orphans.orphans(effective)]
    found += _stray(keys, {**own, **(copy or {})})
    found += _large(store, keys, effective)
    found += _missing(keys, effective)
    if location is not None and os.path.isdir(location):
        irregular = _irregular(location)
        found = [(p, m) for p, m in found if p not in irregular] + sorted(irregular.items())
    return found


def stale_copies(store: Store, location: str | None = None) -> list[Problem]:
    """The nodes whose own ``zarr.json`` differs from the root's consolidated copy, is missing, or is not in it
    (``[]`` when the root holds no copy): what reading trusted instead of the node's own document. Lists the
    store and reads every document; a reader asks only once what it read from the copy has failed."""
    keys = list_objects(store)
    found: list[Problem] = []
    documents = [k for k in keys if (k == ZARR_JSON or k.endswith("/" + ZARR_JSON)) and not reserved_key(k)]
    own = _documents(store, documents, found, location or repr(store))
    copy = _consolidated(own.get("/"), found)
    return [] if copy is None else _compare(own, copy)


def _documents(store: Store, keys: list[str], found: list[Problem], where: str) -> dict[str, dict[str, Any]]:
    """Every node's own document, parsed as it arrives and charged to a metadata budget of the file
    (``where``) as reading charges them: past it, one problem and no more requests."""
    proto = default_buffer_prototype()
    budget = MetadataBudget(where)

    async def parse(key: str) -> tuple[str, dict[str, Any] | HdmfZarrError | None]:
        path = normalize(key[: -len(ZARR_JSON)])
        try:
            budget.check(path)
            buf = await store.get(key, prototype=proto)
            return path, parse_document(buf.to_bytes(), path, budget) if buf is not None else None
        except HdmfZarrError as exc:
            return path, exc

    out = {}
    jobs = [lambda k=k: parse(k) for k in keys]  # named: mypy types no lambda passed in
    for path, doc in sync(bounded(jobs)):
        if isinstance(doc, HdmfZarrError):
            if (doc.path or path, str(doc)) not in found:  # (the budget's refusal: once)
                found.append((doc.path or path, str(doc)))
        elif doc is not None:
            out[path] = doc
    return out


def _consolidated(root: dict[str, Any] | None, found: list[Problem]) -> dict[str, dict[str, Any]] | None:
    if root is None:
        return None
    try:
        return consolidated.expand(root, check_document)
    except HdmfZarrError as exc:
        found.append(("/", str(exc)))
        return None


def _compare(own: dict[str, dict[str, Any]], copy: dict[str, dict[str, Any]]) -> list[Problem]:
    """Node documents against the root's consolidated copy (the one reading uses)."""
    found = []
    for path in sorted((set(own) | set(copy)) - {"/"}):
        mine, theirs = own.get(path), copy.get(path)
        if mine is None:
            found.append(
                (
                    path,
                    f"{path}: no zarr.json (missing, or not a regular file); only the root's "
                    "consolidated metadata describes this node, so tools that open it by its own "
                    "document do not find it",
                )
            )
        elif theirs is None:
            found.append(
                (
                    path,
                    f"{path}: not in the root's consolidated metadata, which reading uses: this node "
                    "is not read (zarr.consolidate_metadata rewrites the copy)",
                )
            )
        elif _normal(consolidated.without_consolidated(mine)) != _normal(theirs):
            found.append(
                (
                    path,
                    f"{path}: zarr.json differs from its copy in the root's consolidated metadata "
                    f"({_difference(mine, theirs)}); reading uses the copy, so the change is not seen "
                    "(zarr.consolidate_metadata rewrites the copy)",
                )
            )
    return found


def _normal(doc: dict[str, Any]) -> Any:
    """An array document as zarr reads it (defaults filled in, as ``zarr.consolidate_metadata`` writes its copy),
    so that two spellings of the same metadata compare equal; anything zarr refuses, as it is."""
    if doc.get("node_type") != "array":
        return doc
    try:
        return json.loads(json.dumps(array_metadata_as_zarr_writes_it(copy.deepcopy(doc)), default=str))
    except Exception:  # whatever zarr refuses is compared verbatim
        return doc


def _difference(mine: dict[str, Any], theirs: dict[str, Any]) -> str:
    if mine.get("shape") != theirs.get("shape"):
        return f"shape {mine.get('shape')} in zarr.json, {theirs.get('shape')} in the copy"
    keys = sorted(k for k in set(mine) | set(theirs) if k != consolidated.KEY and mine.get(k) != theirs.get(k))
    if keys == ["attributes"]:
        a, b = mine.get("attributes", {}), theirs.get("attributes", {})
        return "attributes " + ", ".join(sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k)))
    return ", ".join(keys)


def _stray(keys: list[str], documents: dict[str, dict[str, Any]]) -> list[Problem]:
    """Stored objects that belong to no array: the array's ``zarr.json`` is missing (its data is lost)."""
    counts: dict[str, int] = {}
    for key in keys:
        if key == ZARR_JSON or key.endswith("/" + ZARR_JSON) or INTERRUPTED_WRITE.search(key) or reserved_key(key):
            continue
        path = "/" + key
        node = posixpath.dirname(path)
        while node not in documents and node != "/":
            path, node = node, posixpath.dirname(node)
        if documents.get(node, {}).get("node_type") != "array":
            counts[path] = counts.get(path, 0) + 1
    return [
        (path, f"{path}: {n} stored object(s) but no zarr.json (missing, or not a regular file): this data is not read")
        for path, n in sorted(counts.items())
    ]


def _large(store: Store, keys: list[str], documents: dict[str, dict[str, Any]]) -> list[Problem]:
    """Arrays that declare far more than the store holds for them."""
    found = []
    for path, doc in sorted(documents.items()):
        if doc.get("node_type") != "array" or doc.get("zarr_format") != 3:
            continue
        declared = math.prod(doc["shape"]) * data_type_itemsize(doc["data_type"])
        if declared < LARGE_BYTES:
            continue
        prefix = path.strip("/") + "/"
        start, stop = _under(keys, path)
        stored = [k for k in keys[start:stop] if k != prefix + ZARR_JSON and not INTERRUPTED_WRITE.search(k)]
        expected = math.prod(grid(doc))
        size = sum(object_sizes(store, stored)) if len(stored) <= SIZED_OBJECTS else None
        if len(stored) * 2 < expected or (size is not None and size * MAX_RATIO < declared):
            held = f"{len(stored)} of its {expected} chunk objects" + (f" ({_human(size)})" if size is not None else "")
            found.append(
                (
                    path,
                    f"{path}: declares {_human(declared)} (shape {doc['shape']}) but the file holds "
                    f"{held}: what is missing reads as the fill value, and reading it whole needs "
                    f"{_human(declared)} of memory",
                )
            )
    return found


def _missing(keys: list[str], documents: dict[str, dict[str, Any]]) -> list[Problem]:
    """Chunks of arrays that store every chunk (:mod:`..format.layout.stored_chunks`) which the store does not hold."""
    found = []
    for path, doc in sorted(documents.items()):
        if not all_chunks_stored(doc):
            continue
        start, stop = _under(keys, path)
        prefix = len(path.strip("/")) + 1
        count, first = missing_chunks(doc, (k[prefix:] for k in keys[start:stop]))
        if count:
            named = ", ".join(first) + (", ..." if count > len(first) else "")
            found.append((path, f"{path}: {count} chunk(s) missing ({named}); every chunk of this array was stored"))
    return found


def _under(keys: list[str], path: str) -> tuple[int, int]:
    """The range of the sorted ``keys`` below the node ``path``."""
    prefix = path.strip("/") + "/"
    start = bisect.bisect_left(keys, prefix)
    return start, bisect.bisect_left(keys, prefix[:-1] + chr(ord("/") + 1), start)


def _irregular(location: str) -> dict[str, str]:
    """Nodes whose ``zarr.json`` is a directory, a dangling link or another non-regular file (local stores)."""
    found = {}
    for directory, dirs, files in os.walk(location):
        if ZARR_JSON in dirs or (ZARR_JSON in files and not os.path.isfile(os.path.join(directory, ZARR_JSON))):
            relative = os.path.relpath(directory, location)
            path = normalize("" if relative == "." else relative.replace(os.sep, "/"))
            kind = "a directory" if ZARR_JSON in dirs else "not a regular file"
            found[path] = f"{path}: zarr.json is {kind}, so the node and everything below it are not read"
    return found


def _human(n: int) -> str:
    exponent = min(int(math.log(max(n, 1), 1024)), 4)
    return f"{n / 1024**exponent:.1f} {('B', 'KiB', 'MiB', 'GiB', 'TiB')[exponent]}"
