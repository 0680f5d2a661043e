"""What HDMF's containers require of a tree, checked from the node documents before HDMF builds them.

HDMF builds a container per typed node and checks its arguments only then: a ``DynamicTable`` whose ``id``
or columns disagree in length, whose ``colnames`` name a column it lacks or whose ``VectorIndex`` indexes
no column of it fails deep inside the build as HDMF's ``ConstructError``; two nodes with one ``object_id``
are built, and the file's ``objects`` then fails with a ``TypeError`` (HDMF keeps containers by object id).
Each rule here finds its case in the builder tree, from what the node documents say (shapes, attributes;
no chunk is read), as a :class:`~hdmf_zarr3.errors.CorruptStoreError` naming the node, so that
:meth:`ZarrIO.read <hdmf_zarr3.ZarrIO.read>` refuses the file before HDMF starts and ``validate`` reports
the same lines.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hdmf.build import Builder, DatasetBuilder, GroupBuilder, ReferenceBuilder, TypeMap

from ...errors import CorruptStoreError

TABLE, COLUMN, INDEX, ENUM = "DynamicTable", "VectorData", "VectorIndex", "EnumData"  # hdmf-common's types


def problems(nodes: list[tuple[str, Builder]], type_map: TypeMap) -> list[CorruptStoreError]:
    """Every node HDMF could not build a container from, or would keep twice (see the module's description),
    of a tree's ``nodes`` (each group and dataset with its path)."""
    hierarchy = _Hierarchies(type_map)
    found = duplicate_object_ids(nodes)
    for path, builder in nodes:
        if isinstance(builder, GroupBuilder) and TABLE in hierarchy.of(builder):
            found += table_problems(path, builder, hierarchy)
    return found


def duplicate_object_ids(nodes: list[tuple[str, Builder]]) -> list[CorruptStoreError]:
    """One error per node whose ``object_id`` a node before it (in path order) already has."""
    first: dict[str, str] = {}
    found = []
    for path, builder in sorted(nodes, key=lambda item: item[0]):
        object_id = builder.attributes.get("object_id")
        if not isinstance(object_id, str):
            continue
        if object_id in first:
            found.append(
                CorruptStoreError(
                    f"object_id {object_id!r} is also the object_id of {first[object_id]}; "
                    "HDMF keeps containers by object id and cannot hold both",
                    path,
                )
            )
        else:
            first[object_id] = path
    return found


class _Hierarchies:
    """The neurodata types each node's type extends (itself first), by its namespace's specification."""

    def __init__(self, type_map: TypeMap) -> None:
        self.catalog = type_map.namespace_catalog
        self.known: dict[tuple[str | None, str | None], tuple[str, ...]] = {}

    def of(self, builder: Builder) -> tuple[str, ...]:
        key = (_text(builder.attributes.get("namespace")), _text(builder.attributes.get("neurodata_type")))
        if key not in self.known:
            try:
                self.known[key] = tuple(self.catalog.get_hierarchy(*key)) if None not in key else ()
            except (KeyError, ValueError, TypeError):  # no such type: unknown_types names it
                self.known[key] = ()
        return self.known[key]


def _text(value: Any) -> str | None:
    """An attribute's text (bytes decoded, as HDMF does); ``None`` for anything else (a list, a number)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value) if isinstance(value, str) else None


def rows(builder: DatasetBuilder) -> int | None:
    """How many rows the document says a dataset has (``None`` for a scalar or a value of no length)."""
    data = builder.data
    shape = getattr(data, "shape", None)
    if shape is not None:
        return int(shape[0]) if len(shape) else None
    return len(data) if isinstance(data, (list, tuple)) else None


def _target_name(value: Any) -> str | None:
    """The name of the node an attribute's reference points to."""
    if isinstance(value, ReferenceBuilder):
        value = value.builder
    return value.name if isinstance(value, Builder) else None


def _listed(value: Any) -> bool:
    return isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.ndim == 1)


def _datasets(table: GroupBuilder) -> dict[str, DatasetBuilder]:
    """A table's datasets by name, a link to a dataset counted as that dataset (a shallow copy's columns are
    links into the file it was copied from, and HDMF builds them as columns)."""
    found = dict(table.datasets)
    for name, link in table.links.items():
        if isinstance(link.builder, DatasetBuilder):
            found.setdefault(name, link.builder)
    return found


def table_problems(path: str, table: GroupBuilder, hierarchy: _Hierarchies) -> list[CorruptStoreError]:
    """What HDMF's ``DynamicTable`` refuses of its columns: an index whose target is not one of them, columns
    (an indexed column counted by its index) of different lengths, an ``id`` of another length, a name in
    ``colnames`` that is no column."""
    datasets = _datasets(table)
    columns = {name: d for name, d in datasets.items() if name != "id" and COLUMN in hierarchy.of(d)}
    counted = dict(columns)  # an indexed column counts by its index, the elements of an enum by the enum
    found = []
    for name, column in columns.items():
        kinds = hierarchy.of(column)
        if INDEX in kinds:
            target = _target_name(column.attributes.get("target"))
            if target not in columns:
                found.append(CorruptStoreError(f"index {name!r} indexes {target!r}, which is no column of it", path))
            counted.pop(target or "", None)
        elif ENUM in kinds:
            counted.pop(_target_name(column.attributes.get("elements")) or "", None)
    lengths = {name: n for name, n in ((name, rows(c)) for name, c in counted.items()) if n is not None}
    if len(set(lengths.values())) > 1:
        listed = ", ".join(f"{name} {n}" for name, n in sorted(lengths.items()))
        found.append(CorruptStoreError(f"the columns of this table differ in length (rows: {listed})", path))
    ids = datasets.get("id")
    id_rows = rows(ids) if ids is not None else None
    length = next(iter(lengths.values()), None)
    if id_rows and length is not None and len(set(lengths.values())) == 1 and id_rows != length:
        found.append(CorruptStoreError(f"its id has {id_rows} rows, its columns {length}", path))
    plain = {name for name, column in columns.items() if INDEX not in hierarchy.of(column)}
    colnames = table.attributes.get("colnames")
    names = [colnames] if isinstance(colnames, (str, bytes)) else list(colnames) if _listed(colnames) else []
    missing = [text for text in (_text(n) if isinstance(n, bytes) else str(n) for n in names) if text not in plain]
    if missing:
        found.append(CorruptStoreError(f"colnames names {', '.join(map(repr, missing))}, no column of it", path))
    return found
