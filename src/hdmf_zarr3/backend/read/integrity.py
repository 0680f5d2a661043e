"""What a file's tree must satisfy before HDMF builds containers from it, shared by reading and ``validate``.

HDMF's ``BuildManager.construct`` follows links and references as it builds, and keeps no record of
what it is still building: a link or reference that leads back to a node being built (an ancestor, the
node itself, or a node that links back) recurses until Python gives up with ``RecursionError``. A node
whose ``neurodata_type`` no loaded specification defines is dropped without a word, and one whose
namespace is not loaded ends in a ``KeyError``. These checks find each case in the builder tree first,
so that :meth:`ZarrIO.read <hdmf_zarr3.ZarrIO.read>` raises a typed error naming the node, and
``hdmf-zarr3 validate`` reports the same lines. Nothing here touches a store.
"""

from __future__ import annotations

import posixpath
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
from hdmf.build import Builder, DatasetBuilder, GroupBuilder, ReferenceBuilder, TypeMap

from ...errors import CorruptStoreError, IncompleteFileError, IncompleteFileWarning, UnknownTypeError
from ...format.documents import completion
from ...format.vocabulary import names as node_names
from . import container_rules


def check_tree(root: GroupBuilder, type_map: TypeMap, partial: bool, source: str | None) -> None:
    """Refuse, before HDMF builds containers, what it would recurse on forever (a link or reference cycle),
    fail on or silently drop (a type or namespace no loaded specification defines; what
    :mod:`.container_rules` finds: tables whose parts disagree, object ids held twice). In a ``partial``
    file (its write did not finish, read with ``allow_incomplete``), nodes of unknown types (their
    extension's cached specification may not have been written yet) are left out with a warning."""
    cycle = find_cycle(root)
    if cycle is not None:
        raise cycle
    unknown = unknown_types(root, type_map)
    if unknown and partial:
        warnings.warn(
            f"{source}: the file is incomplete; left out: {'; '.join(map(str, unknown))}",
            IncompleteFileWarning,
            stacklevel=3,
        )
        prune(root, [e.path for e in unknown if e.path is not None])  # each names its node
    elif unknown:
        raise unknown[0]
    if not partial:  # (a write that did not finish may have grown one column and not the next)
        refused = container_problems(root, type_map)
        if refused:
            raise refused[0]


def container_problems(root: GroupBuilder, type_map: TypeMap) -> list[CorruptStoreError]:
    """What HDMF's containers would refuse of the tree (see :mod:`.container_rules`), one error per node."""
    return container_rules.problems(list(walk(root)), type_map)


def unbuildable(
    root: GroupBuilder, type_map: TypeMap, mark: dict[str, Any] | None, exc: Exception
) -> IncompleteFileError:
    """The error for a partial file HDMF could not build containers from: what it lacks, and why it failed."""
    missing = missing_required(root, type_map)
    cause = " ".join(str(exc).split())
    return IncompleteFileError(
        f"{completion.describe(mark or {})}, and what is there does not make a container"
        + (f": missing {', '.join(missing)}" if missing else "")
        + f" ({type(exc).__name__}: {cause[:300]}{'...' if len(cause) > 300 else ''}); "
        "read_builder() gives what is there",
        "/",
    )


def walk(root: GroupBuilder) -> Iterator[tuple[str, Builder]]:
    """Every group and dataset of a tree with its absolute path (links not followed), parents first."""
    stack: list[tuple[str, Builder]] = [("/", root)]
    while stack:
        path, builder = stack.pop()
        yield path, builder
        if isinstance(builder, GroupBuilder):
            stack.extend(
                (node_names.join(path, name), sub)
                for name, sub in reversed([*builder.groups.items(), *builder.datasets.items()])
            )


# --- cycles ------------------------------------------------------------------------------------------
def _targets(value: Any) -> Iterator[Builder]:
    """The builders an attribute value or a scalar dataset's value refers to."""
    if isinstance(value, ReferenceBuilder):
        value = value.builder
    if isinstance(value, Builder):
        yield value
    elif isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.dtype == object):
        for item in value.ravel().tolist() if isinstance(value, np.ndarray) else value:
            yield from _targets(item)


_REFERRING = (Builder, ReferenceBuilder, list, tuple, np.ndarray)  # attribute values that may hold references


def _edges(builder: Builder, path: str) -> Iterator[tuple[Builder, str | None]]:
    """What building ``builder`` builds too: its members (label ``None``), and what its links, attribute
    references and (for a scalar dataset) its reference value point to (labelled with where they are)."""
    if isinstance(builder, GroupBuilder):
        for sub in [*builder.groups.values(), *builder.datasets.values()]:
            yield sub, None
        for name, link in builder.links.items():
            yield link.builder, f"link {node_names.join(path, name)}"
    for key, value in builder.attributes.items():
        if isinstance(value, _REFERRING):
            for target in _targets(value):
                yield target, f"reference {path}@{key}"
    if isinstance(builder, DatasetBuilder):
        for target in _targets(builder.data):
            yield target, f"reference {path}"


def find_cycle(root: GroupBuilder) -> CorruptStoreError | None:
    """The error for a link or reference that leads back to a node being built (``None`` if there is none).

    A depth-first walk over members, links and references (iterative: a deep tree cannot overflow the
    stack); a back edge closes a cycle, which holds at least one link or reference, the one named.
    """
    paths = {id(b): p for p, b in walk(root)}

    def name(builder: Builder) -> str:
        return paths.get(id(builder)) or f"{builder.source}:{builder.name}"

    on_path: dict[int, int] = {id(root): 0}  # builder -> its index in ``trail``
    done: set[int] = set()
    trail: list[tuple[Builder, str | None]] = [(root, None)]
    stack = [_edges(root, "/")]
    while stack:
        step = next(stack[-1], None)
        if step is None:
            builder, _ = trail.pop()
            del on_path[id(builder)]
            done.add(id(builder))
            stack.pop()
            continue
        target, label = step
        if id(target) in on_path:
            loop = trail[on_path[id(target)] + 1 :] + [(target, label)]
            pointed, where = next((b, lbl) for b, lbl in loop if lbl is not None)
            route = " -> ".join([name(target)] + [name(b) for b, _ in loop])
            kind, at = where.split(" ", 1)
            return CorruptStoreError(
                f"{kind} to {name(pointed)!r} leads back to where it is ({route}); building it would never end", at
            )
        if id(target) not in done:
            on_path[id(target)] = len(trail)
            trail.append((target, label))
            stack.append(_edges(target, name(target)))
    return None


# --- types -------------------------------------------------------------------------------------------
def unknown_types(root: GroupBuilder, type_map: TypeMap) -> list[UnknownTypeError]:
    """One error per node whose type or namespace no loaded specification defines."""
    catalog = type_map.namespace_catalog
    loaded = set(catalog.namespaces)
    keys = {GroupBuilder: catalog.group_spec_cls.type_key(), DatasetBuilder: catalog.dataset_spec_cls.type_key()}
    found: list[UnknownTypeError] = []
    known: set[tuple[str, str]] = set()
    for path, builder in walk(root):  # what TypeMap.get_builder_dt/ns read, without docval's cost per node
        data_type = builder.attributes.get(keys[GroupBuilder if isinstance(builder, GroupBuilder) else DatasetBuilder])
        if data_type is None:
            continue
        data_type = data_type.decode("utf-8") if isinstance(data_type, bytes) else data_type
        namespace = builder.attributes.get("namespace")
        if not isinstance(namespace, str) or not isinstance(data_type, str):
            found.append(UnknownTypeError(f"type {data_type!r} of namespace {namespace!r} is not a name", path))
            continue
        if namespace not in loaded:
            found.append(
                UnknownTypeError(
                    f"namespace {namespace!r} (of type {data_type!r}) is not loaded: its specification is neither "
                    f"cached in the file nor loaded by the caller (loaded: {', '.join(sorted(loaded)) or 'none'})",
                    path,
                )
            )
            continue
        if (namespace, data_type) in known:
            continue
        try:
            catalog.get_spec(namespace, data_type)
            known.add((namespace, data_type))
        except (KeyError, ValueError):
            version = catalog.get_namespace(namespace).version
            found.append(
                UnknownTypeError(
                    f"type {data_type!r} is not defined in namespace {namespace!r} "
                    f"(version {version}); HDMF would leave this node out",
                    path,
                )
            )
    return found


def prune(root: GroupBuilder, paths: list[str]) -> None:
    """Remove the nodes at ``paths`` (and what is below them) from the tree."""
    by_path = dict(walk(root))
    for path in paths:
        parent = by_path.get(posixpath.dirname(path))
        name = posixpath.basename(path)
        if isinstance(parent, GroupBuilder):
            for members in (parent.groups, parent.datasets):
                if name in members:
                    del members[name]
                    parent.obj_type.pop(name, None)


# --- what a container needs ------------------------------------------------------------------------
def missing_required(root: GroupBuilder, type_map: TypeMap, limit: int = 10) -> list[str]:
    """Paths (``node@attribute`` for attributes) the specifications require but the tree lacks: what a
    file whose write did not finish may be missing, named when HDMF cannot build a container without it."""
    catalog = type_map.namespace_catalog
    found: list[str] = []
    todo: list[tuple[str, Builder, Any]] = []
    for path, builder in walk(root):
        data_type, namespace = type_map.get_builder_dt(builder), type_map.get_builder_ns(builder)
        try:
            todo.append((path, builder, catalog.get_spec(namespace, data_type)))
        except (KeyError, ValueError, TypeError):
            continue
    while todo and len(found) < limit:
        path, builder, spec = todo.pop()
        for attribute in spec.attributes:
            if attribute.required and attribute.value is None and attribute.name not in builder.attributes:
                found.append(f"{path}@{attribute.name}")
        if not isinstance(builder, GroupBuilder):
            continue
        for sub in [*spec.groups, *spec.datasets, *spec.links]:
            if sub.name is None or not sub.required:
                continue
            present = builder.groups.get(sub.name) or builder.datasets.get(sub.name) or builder.links.get(sub.name)
            if present is None:
                found.append(node_names.join(path, sub.name))
            elif (
                getattr(sub, "data_type_def", None) is None
                and getattr(sub, "data_type_inc", None) is None
                and isinstance(present, Builder)
            ):
                todo.append((node_names.join(path, sub.name), present, sub))  # an untyped member: its own requirements
    return sorted(found)[:limit]
