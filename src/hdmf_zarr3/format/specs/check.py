"""Checks of cached specifications before HDMF sees them: a file's schema is hostile input too.

HDMF trusts the specifications it loads: groups nested hundreds deep overflow its recursion, a type that
inherits from itself (or from a type inheriting from it) loops or makes containers vanish, unknown
parents, namespaces including themselves and fields of the wrong JSON type raise ``ValueError``,
``AttributeError`` or ``TypeError`` from deep inside it. The parsed JSON of every cached document is
checked here first, against the HDMF specification language: the type of every field, the nesting depth,
that every parent type is defined, that inheritance and namespace inclusion have no cycles. Every failure
is :class:`SpecificationError` naming the namespace, the document and the type.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ...errors import SpecificationError

#: Groups and datasets nested in one type's specification (NWB's deepest is about 5).
MAX_SPEC_DEPTH = 32
_TEXT_FIELDS = (
    "name",
    "default_name",
    "doc",
    "neurodata_type_def",
    "neurodata_type_inc",
    "data_type_def",
    "data_type_inc",
    "target_type",
    "reftype",
)
_LIST_KEYS = ("groups", "datasets", "attributes", "links")
_KINDS = {"groups": "group", "datasets": "dataset", "attributes": "attribute", "links": "link"}
_QUANTITIES = frozenset({"*", "+", "?", "zero_or_many", "one_or_many", "zero_or_one"})


def _fail(message: str, namespace: str, where: str, path: str) -> SpecificationError:
    return SpecificationError(f"cached specification of namespace {namespace!r}, {where}: {message}", path)


def _type_name(spec: Mapping[str, Any], key: str) -> str | None:
    value = spec.get(f"neurodata_type_{key}", spec.get(f"data_type_{key}"))
    return value if isinstance(value, str) else None


def check_namespace_document(doc: Any, namespace: str, path: str) -> list[dict[str, Any]]:
    """The namespaces of a ``namespace`` document, each checked (name, schema entries)."""
    where = "document 'namespace'"
    if not isinstance(doc, dict) or not isinstance(doc.get("namespaces"), list) or not doc["namespaces"]:
        raise _fail("must be an object with a non-empty 'namespaces' list", namespace, where, path)
    for entry in doc["namespaces"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise _fail("each namespace must be an object with a 'name'", namespace, where, path)
        schema = entry.get("schema")
        if not isinstance(schema, list):
            raise _fail(f"namespace {entry['name']!r} must have a 'schema' list", namespace, where, path)
        for item in schema:
            if not isinstance(item, dict) or not (
                isinstance(item.get("source"), str) or isinstance(item.get("namespace"), str)
            ):
                raise _fail(f"schema entry {str(item)[:80]} names no source nor namespace", namespace, where, path)
            for key in ("neurodata_types", "data_types"):
                if key in item and not (isinstance(item[key], list) and all(isinstance(t, str) for t in item[key])):
                    raise _fail(f"{key} of a schema entry must be a list of names", namespace, where, path)
    return doc["namespaces"]


def check_source_document(
    doc: Any, namespace: str, name: str, path: str
) -> tuple[dict[str, str | None], list[tuple[str, str]]]:
    """Types and depth of every specification in a schema source; ``{type defined: its parent}`` and the
    types it uses (included, linked to, referenced) with where."""
    where = f"document {name!r}"
    if not isinstance(doc, dict):
        raise _fail("must be a JSON object", namespace, where, path)
    types: dict[str, str | None] = {}
    uses: list[tuple[str, str]] = []
    stack: list[tuple[str, Any, int, str]] = [(k, s, 1, where) for k in _LIST_KEYS for s in _listed(doc, k, where)]
    for key in _LIST_KEYS:
        if key in doc and not isinstance(doc[key], list):
            raise _fail(f"{key!r} must be a list", namespace, where, path)
    while stack:
        key, spec, depth, parent = stack.pop()
        here = f"{parent} > {_KINDS[key]} {_label(spec)}"
        if depth > MAX_SPEC_DEPTH:
            raise _fail(f"specifications nest deeper than {MAX_SPEC_DEPTH} levels", namespace, here, path)
        _check_spec(key, spec, namespace, here, path)
        defined = _type_name(spec, "def")
        if defined is not None:
            if defined in types:
                raise _fail(f"type {defined!r} is defined twice", namespace, here, path)
            types[defined] = _type_name(spec, "inc")
        else:
            used = _type_name(spec, "inc") or spec.get("target_type")
            uses += [(used, here)] if isinstance(used, str) else []
        dtype = spec.get("dtype")
        for field in dtype if isinstance(dtype, list) else [{"dtype": dtype}]:
            if isinstance(field.get("dtype"), dict):
                uses.append((field["dtype"]["target_type"], here))
        for sub in _LIST_KEYS:
            if sub in spec:
                stack.extend((sub, s, depth + 1, here) for s in spec[sub])
    return types, uses


def _listed(doc: Mapping[str, Any], key: str, where: str) -> list[Any]:
    value = doc.get(key, [])
    return value if isinstance(value, list) else []


def _label(spec: Any) -> str:
    if not isinstance(spec, dict):
        return "?"
    name = _type_name(spec, "def") or spec.get("name") or _type_name(spec, "inc") or spec.get("target_type")
    return repr(name) if isinstance(name, str) else "?"


def _check_spec(key: str, spec: Any, namespace: str, where: str, path: str) -> None:
    if not isinstance(spec, dict):
        raise _fail(f"must be an object, got {type(spec).__name__}", namespace, where, path)
    for field in _TEXT_FIELDS:
        if field in spec and not isinstance(spec[field], str):
            raise _fail(f"{field!r} must be text, got {type(spec[field]).__name__}", namespace, where, path)
    allowed = {"groups": ("groups", "datasets", "attributes", "links"), "datasets": ("attributes",)}.get(key, ())
    for sub in _LIST_KEYS:
        if sub in spec and (sub not in allowed or not isinstance(spec[sub], list)):
            raise _fail(f"{sub!r} is not a list this {_KINDS[key]} may have", namespace, where, path)
    quantity = spec.get("quantity")
    if quantity is not None and not (
        (type(quantity) is int and quantity >= 0) or (isinstance(quantity, str) and quantity in _QUANTITIES)
    ):
        raise _fail(
            f"quantity {str(quantity)[:40]} is not a count nor one of {sorted(_QUANTITIES)}", namespace, where, path
        )
    for field in ("linkable", "required"):
        if field in spec and not isinstance(spec[field], bool):
            raise _fail(f"{field!r} must be true or false", namespace, where, path)
    for field in ("shape", "dims"):
        if field in spec and spec[field] is not None and not isinstance(spec[field], list):
            raise _fail(f"{field!r} must be a list", namespace, where, path)
    if key == "links" and not isinstance(spec.get("target_type"), str):
        raise _fail("a link must have a 'target_type'", namespace, where, path)
    if key == "attributes" and not isinstance(spec.get("name"), str):
        raise _fail("an attribute must have a 'name'", namespace, where, path)
    dtype = spec.get("dtype")
    if dtype is not None:
        _check_dtype(dtype, namespace, where, path)


def _check_dtype(dtype: Any, namespace: str, where: str, path: str) -> None:
    if isinstance(dtype, str):
        return
    if isinstance(dtype, dict):
        if not isinstance(dtype.get("target_type"), str) or not isinstance(dtype.get("reftype"), str):
            raise _fail("a reference dtype needs a 'target_type' and a 'reftype'", namespace, where, path)
        return
    if isinstance(dtype, list) and dtype:
        for field in dtype:
            if not isinstance(field, dict) or not isinstance(field.get("name"), str) or "dtype" not in field:
                raise _fail("a compound dtype is a list of fields with a name and a dtype", namespace, where, path)
            if isinstance(field["dtype"], list):
                raise _fail("compound dtypes do not nest", namespace, where, path)
            _check_dtype(field["dtype"], namespace, where, path)
        return
    raise _fail(f"dtype {str(dtype)[:60]} is not a name, a reference or a compound", namespace, where, path)


def check_types(
    types: Mapping[str, tuple[str, str | None]],
    uses: Iterable[tuple[str, str, str]],
    known: Iterable[str],
    path: str,
) -> None:
    """Every parent of ``types`` (``{type: (namespace, parent)}``) and every type used (``(namespace, type,
    where)``: included, linked to, referenced) is defined, here or in ``known`` (the types the reader
    already has), and no type inherits from itself, directly or around a cycle."""
    known = set(known)
    for namespace, used, where in uses:
        if used not in types and used not in known:
            raise _fail(f"type {used!r} is not defined", namespace, where, path)
    for name, (namespace, parent) in types.items():
        if parent is not None and parent not in types and parent not in known:
            raise _fail(f"parent type {parent!r} is not defined", namespace, f"type {name!r}", path)
        seen = [name]
        while parent is not None and parent in types:
            if parent in seen:
                loop = " -> ".join([*seen[seen.index(parent) :], parent])
                raise _fail(f"inherits from itself ({loop})", namespace, f"type {name!r}", path)
            seen.append(parent)
            parent = types[parent][1]


def check_includes(includes: Mapping[str, list[str]], path: str) -> None:
    """No namespace includes itself, directly or around a cycle of namespaces cached in the file."""
    for start in includes:
        stack = [(start, [start])]
        while stack:
            name, trail = stack.pop()
            for included in includes.get(name, []):
                if included == start:
                    loop = " -> ".join([*trail, start])
                    raise _fail(f"includes itself ({loop})", start, "document 'namespace'", path)
                if included not in trail:
                    stack.append((included, [*trail, included]))
