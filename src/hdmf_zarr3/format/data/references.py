"""Object references and links, stored as JSON records.

A *reference record* names its target by the file it lives in and its path in that file::

    {"source": ".", "path": "/general/extracellular_ephys/electrodes",
     "object_id": "f6685427-...", "source_object_id": "6224bb89-..."}

- ``source`` is ``"."`` for the same file, otherwise the location of another file relative to the
  directory holding this one (POSIX separators).
- ``path`` is the absolute path of the target inside ``source``.
- ``object_id`` is the target's HDMF object id and ``source_object_id`` the object id of the root of
  ``source``; both are ``null`` when the target has none. Readers resolve by ``path`` and may use the
  ids to check that the target is the one meant.

A *region reference* is a reference record to an array plus the key ``region``, the selection::

    {"source": ".", "path": "/target", ..., "region": {"slices": [[2, 5, 1], [1, 3, 1]]}}

with exactly one of ``{"slices": [[start, stop, step], ...]}`` (one per dimension, ``stop``
exclusive), ``{"blocks": [[[start, ...], [stop, ...]], ...]}`` (boxes, ``stop`` exclusive),
``{"points": [[i, j, ...], ...]}`` or ``{"all": true}``. Reading the region gives the slices as a
shaped array, and the elements of blocks (in order, each box row-major) or points as a 1-D array.

A *link record* is a reference record plus the link's ``name``; a group lists its links in the
reserved attribute ``zarr_link``. In a dataset of references each element is one record serialized as
compact JSON in a ``string`` array; an empty string is a null reference.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ...errors import CorruptStoreError
from ..documents import limits
from ..vocabulary import SAME_FILE, normalize

_REF_KEYS = ("source", "path", "object_id", "source_object_id")
#: Characters no location of a file holds: NUL, which no operating system takes in a path (Python raises
#: ``ValueError: embedded null byte``), and the other C0 controls and DEL, which no file name written on
#: purpose holds and which would garble every message and listing naming the file.
_CONTROL = re.compile("[\x00-\x1f\x7f]")


def text_problem(text: str, what: str, controls: bool = True) -> str | None:
    """Why ``text`` (``what``: "source", "path", ...) cannot name a file or node, or ``None`` if it can: a NUL,
    with ``controls`` any control character, or a lone surrogate (no UTF-8 spells it)."""
    found = _CONTROL.search(text) if controls else re.search("\x00", text)
    if found is not None:
        return f"{what} {text[:200]!r} holds the control character {found.group()!r}"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return f"{what} {text[:200]!r} is not valid Unicode (a lone surrogate)"
    return None


@dataclass(frozen=True)
class Reference:
    """Where a reference or link points (``region``: the selection of a region reference)."""

    source: str
    path: str
    object_id: str | None = None
    source_object_id: str | None = None
    region: dict[str, Any] | None = None

    @property
    def is_internal(self) -> bool:
        return self.source == SAME_FILE

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "source": self.source,
            "path": self.path,
            "object_id": self.object_id,
            "source_object_id": self.source_object_id,
        }
        if self.region is not None:
            out["region"] = self.region
        return out

    @classmethod
    def from_json(cls, obj: Any, where: str) -> Reference:
        """Parse a record; ``where`` names the node holding it, for error messages."""
        if not isinstance(obj, dict):
            raise CorruptStoreError(f"reference record must be an object, got {obj!r}", where)
        source, path = obj.get("source"), obj.get("path")
        if not isinstance(source, str) or not source:
            raise CorruptStoreError(f"reference record has no valid 'source': {obj!r}", where)
        if not isinstance(path, str) or not path:
            raise CorruptStoreError(f"reference record has no valid 'path': {obj!r}", where)
        # checked where the text enters: a NUL reaching the file system is a raw ValueError
        problem = text_problem(source, "reference record 'source'") or text_problem(
            path, "reference record 'path'", controls=False
        )
        if problem is not None:
            raise CorruptStoreError(problem, where)
        ids = [obj.get("object_id"), obj.get("source_object_id")]
        if any(i is not None and not isinstance(i, str) for i in ids):
            raise CorruptStoreError(f"reference record ids must be strings or null: {obj!r}", where)
        region = obj.get("region")
        if region is not None:
            check_region(region, where)
        return cls(source, normalize(path), ids[0], ids[1], region)


def _ints(value: Any, n: int | None = None) -> bool:
    return (
        isinstance(value, list)
        and (n is None or len(value) == n)
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    )


def check_region(region: Any, where: str) -> None:
    """Validate a region selection (see the module docstring)."""
    ok = isinstance(region, dict) and len(region) == 1
    if ok and "slices" in region:
        ok = isinstance(region["slices"], list) and all(_ints(s, 3) and s[2] > 0 for s in region["slices"])
    elif ok and "blocks" in region:
        ok = isinstance(region["blocks"], list) and all(
            isinstance(b, list) and len(b) == 2 and _ints(b[0]) and _ints(b[1], len(b[0])) for b in region["blocks"]
        )
    elif ok and "points" in region:
        ok = isinstance(region["points"], list) and all(_ints(p) for p in region["points"])
    elif ok:
        ok = region == {"all": True}
    if not ok:
        raise CorruptStoreError(f"invalid region selection {str(region)[:80]}", where)


def read_region(array: Any, region: dict[str, Any]) -> Any:
    """The values a region selects from ``array`` (anything with numpy-style indexing)."""
    import numpy as np

    if "all" in region:
        return array[...]
    if "slices" in region:
        return array[tuple(slice(a, b, c) for a, b, c in region["slices"])]
    if "points" in region:
        return np.array([array[tuple(p)] for p in region["points"]])
    parts = [np.asarray(array[tuple(slice(a, b) for a, b in zip(lo, hi))]).ravel() for lo, hi in region["blocks"]]
    return np.concatenate(parts) if parts else np.array([])


@dataclass(frozen=True)
class Link:
    """A named soft or external link held by a group."""

    name: str
    target: Reference

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, **self.target.to_json()}

    @classmethod
    def from_json(cls, obj: Any, where: str) -> Link:
        if not isinstance(obj, dict) or not isinstance(obj.get("name"), str) or not obj["name"]:
            raise CorruptStoreError(f"link record needs a non-empty 'name': {obj!r}", where)
        problem = text_problem(obj["name"], "link name", controls=False)
        if problem is not None:
            raise CorruptStoreError(problem, where)
        return cls(obj["name"], Reference.from_json(obj, where))


def encode_links(links: list[Link]) -> list[dict[str, Any]]:
    return [link.to_json() for link in links]


def decode_links(value: Any, where: str) -> list[Link]:
    if not isinstance(value, list):
        raise CorruptStoreError(f"zarr_link must be a list of link records, got {type(value).__name__}", where)
    return [Link.from_json(item, where) for item in value]


def encode_element(ref: Reference | None) -> str:
    """One element of a reference dataset: compact JSON, or ``""`` for a null reference."""
    if ref is None:
        return ""
    return json.dumps(ref.to_json(), separators=(",", ":"))


def decode_element(text: str, where: str) -> Reference | None:
    if text == "":
        return None
    if not isinstance(text, (str, bytes)):
        raise CorruptStoreError(f"reference element is not text: {str(text)[:80]!r}", where)
    obj = limits.load_json(text, "reference element", where, limits.MAX_ELEMENT_BYTES, limits.MAX_ELEMENT_VALUES)
    return Reference.from_json(obj, where)
