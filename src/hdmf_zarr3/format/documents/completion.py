"""Whether a file is complete: the marker a writer leaves in the root while it changes the file.

A file is complete when its root group carries no ``hdmf_zarr3_incomplete`` attribute. A writer
stores the root with that attribute before it changes anything else (the first store operation of a
write, an append, or a ``w``-mode replacement) and removes it with the last one, when it writes the
root with every node inlined (consolidated metadata) after the data and the specification cache.
A writer that crashes or is killed in between leaves the marker behind, so the file reads as
incomplete instead of as valid data with holes (fill values where chunks were never written).

The marker is a small object::

    "hdmf_zarr3_incomplete": {"operation": "append", "started": "2026-11-22T10:00:00Z",
                              "writer": "hdmf_zarr3 0.1.0"}

Writing a root document replaces it whole (one ``zarr.json``, written atomically by local and object
stores), so the marker and the consolidated metadata are never half-present.
"""

from __future__ import annotations

import datetime
from typing import Any

from ..vocabulary import INCOMPLETE_ATTR

OPERATIONS = ("write", "append")


def marker(operation: str, writer: str, now: datetime.datetime | None = None) -> dict[str, str]:
    """The marker of a write (``operation`` ``"write"``: a new or replaced file) or an append."""
    if operation not in OPERATIONS:
        raise ValueError(f"operation must be one of {OPERATIONS}, got {operation!r}")
    now = now or datetime.datetime.now(datetime.UTC)
    return {"operation": operation, "started": now.strftime("%Y-%m-%dT%H:%M:%SZ"), "writer": writer}


def marked(root: dict[str, Any], mark: dict[str, str]) -> dict[str, Any]:
    """The root document ``root`` carrying ``mark`` (``root`` itself is left as it is)."""
    return {**root, "attributes": {**root.get("attributes", {}), INCOMPLETE_ATTR: mark}}


def incomplete(root: dict[str, Any] | None) -> dict[str, Any] | None:
    """The marker held by a root document, or ``None`` when the file is complete."""
    if not isinstance(root, dict):
        return None
    attrs = root.get("attributes")
    found = attrs.get(INCOMPLETE_ATTR) if isinstance(attrs, dict) else None
    if found is None:
        return None
    return found if isinstance(found, dict) else {"operation": str(found)}


def describe(mark: dict[str, Any]) -> str:
    """One sentence saying what did not finish, for error messages."""
    operation = mark.get("operation", "write")
    started = mark.get("started")
    writer = mark.get("writer")
    when = f" started at {started}" if isinstance(started, str) else ""
    who = f" by {writer}" if isinstance(writer, str) else ""
    article = "an" if str(operation)[:1] in "aeiou" else "a"
    return (
        f"the file is incomplete: {article} {operation}{when}{who} did not finish (the writer crashed, "
        "was killed, or is still running)"
    )
