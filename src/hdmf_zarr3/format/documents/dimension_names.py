"""The ``dimension_names`` of a group's arrays: every axis named, no name with two lengths in one group.

Zarr v3 ``dimension_names`` are what xarray (and other labelled-array tools) read as dimensions.
xarray opens one group as one dataset and refuses a group in which an array has no names, or in
which one name has two lengths (``conflicting sizes for dimension``). HDMF's specifications name
dimensions per type, not per group: every column of a ``DynamicTable`` has ``dim0``, though a ragged
column's data is longer than the table. The rule (docs/storage.md, "Dimension names"), for the
arrays that are direct members of one group:

1. each axis has a *candidate*: the name it was given (the specification's ``dims``, a
   ``ZarrDataIO(dimension_names=...)``, or the name stored before) or, when it has none,
   ``<array name>.dim<axis>``;
2. each candidate keeps one length: the length most of the group's axes with that candidate have
   (on a tie, the smallest). An axis keeps its candidate if it has that length and its array has
   not given the candidate to an earlier axis; so a name every axis agrees on is always kept, and
   the columns of a table keep theirs beside a longer ragged column;
3. any other axis is named ``<array name>.<candidate>``, followed by ``~2``, ``~3``... if that
   name is some candidate of the group or already given, so that it is used by that axis alone.

A 0-d array has ``[]``. Applied to names it gave, the rule gives them again, unchanged, as long as
the lengths stay; when an append changes a length, the names of the group are worked out again and
a name once made unique stays unique. Pure code: :func:`group_names` for one group,
:func:`renamed_documents` for the array documents of a file.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

#: What a group's arrays are given to :func:`group_names` as: array name -> (shape, names or None).
ArrayDims = Mapping[str, tuple[Sequence[int], Sequence[str | None] | None]]


def unnamed(array: str, axis: int) -> str:
    """The candidate name of axis ``axis`` of ``array`` when nothing names it."""
    return f"{array}.dim{axis}"


def _candidates(array: str, ndim: int, names: Any) -> list[str]:
    # (names read from a file may be anything: only a list or tuple of the array's rank is taken)
    given = list(names) if isinstance(names, (list, tuple)) and len(names) == ndim else [None] * ndim
    return [name if isinstance(name, str) and name else unnamed(array, axis) for axis, name in enumerate(given)]


def group_names(arrays: ArrayDims) -> dict[str, list[str]]:
    """The ``dimension_names`` of every array of one group (see the module docstring for the rule).

    Parameters
    ----------
    arrays : mapping
        Array name (its node name in the group) to ``(shape, names)``; ``names`` is the list of
        names it was given (an entry may be ``None``), or ``None`` for none at all. Names whose count
        is not the array's rank are ignored.

    Returns
    -------
    dict
        Array name to its names, one per axis.
    """
    candidates = {array: _candidates(array, len(shape), names) for array, (shape, names) in arrays.items()}
    counts: dict[str, Counter[int]] = {}
    for array, (shape, _) in arrays.items():
        for name, length in zip(candidates[array], shape):
            counts.setdefault(name, Counter())[int(length)] += 1
    # the length a name keeps: the one most of its axes have (a table's length, not its ragged data's)
    kept = {name: min(c.items(), key=lambda item: (-item[1], item[0]))[0] for name, c in counts.items()}
    taken = set(counts)  # a unique name is none of the candidates, so it meets no kept name
    out: dict[str, list[str]] = {}
    for array in sorted(arrays):
        names: list[str] = []
        for name, length in zip(candidates[array], arrays[array][0]):
            if int(length) == kept[name] and name not in names:
                names.append(name)
                continue
            base = unique = f"{array}.{name}"
            count = 1
            while unique in taken:
                count += 1
                unique = f"{base}~{count}"
            taken.add(unique)
            names.append(unique)
        out[array] = names
    return out


def renamed_documents(documents: Mapping[str, dict[str, Any]], groups: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The array documents of ``groups`` whose ``dimension_names`` the rule changes, changed.

    Parameters
    ----------
    documents : mapping
        Every node document of a file (or at least every member of ``groups``), keyed by absolute path.
    groups : iterable of str
        Absolute paths of the groups whose arrays are named; the others are left as they are.

    Returns
    -------
    dict
        Path to new document (a copy with its new names) for each array whose names change.
    """
    wanted = set(groups)
    members: dict[str, dict[str, dict[str, Any]]] = {}
    for path, doc in documents.items():
        parent = posixpath.dirname(path)
        if path != "/" and parent in wanted and _is_v3_array(doc):
            members.setdefault(parent, {})[posixpath.basename(path)] = doc
    out = {}
    for parent, arrays in members.items():
        names = group_names({name: (doc["shape"], doc.get("dimension_names")) for name, doc in arrays.items()})
        for name, doc in arrays.items():
            if list(doc.get("dimension_names") or ()) != names[name] or doc.get("dimension_names") is None:
                out[posixpath.join(parent, name)] = {**doc, "dimension_names": names[name]}
    return out


def _is_v3_array(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and doc.get("zarr_format") == 3
        and doc.get("node_type") == "array"
        and isinstance(doc.get("shape"), (list, tuple))  # (zarr's own to_dict() gives tuples)
        and all(isinstance(n, int) for n in doc["shape"])
    )
