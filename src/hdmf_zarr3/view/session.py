"""The session overview, the page a file opens on (issue #41, point 1): who, when and what, as plain data.

From the NWBFile read by :class:`~.viewed_file.ViewedFile`: the session's description, identifier, start time,
experimenter, institution, lab, keywords and publications; the subject; the devices; and a summary of what the
file holds (acquisition, processing modules, units, intervals, electrodes, stimulus), each entry with its node
path and the views it opens in, so that the page links to it. Only small values are read: a field stored as
an array gives its first :data:`~.tree.PREVIEW_ITEMS` values, within the viewer's budget; a table's size is
the length of its ids, known from the array's shape.
"""

from __future__ import annotations

import datetime
from typing import Any

import numpy as np

from ..errors import HdmfZarrError
from . import budget
from .tree import PREVIEW_ITEMS, plain, views_of
from .viewed_file import ViewedFile

#: The session's fields, in the order shown, with their labels.
SESSION_FIELDS = (
    ("session_description", "description"),
    ("identifier", "identifier"),
    ("session_start_time", "start time"),
    ("session_id", "session id"),
    ("experimenter", "experimenter"),
    ("institution", "institution"),
    ("lab", "lab"),
    ("experiment_description", "experiment"),
    ("keywords", "keywords"),
    ("related_publications", "publications"),
    ("timestamps_reference_time", "timestamps reference"),
)
SUBJECT_FIELDS = (
    ("subject_id", "id"),
    ("species", "species"),
    ("strain", "strain"),
    ("sex", "sex"),
    ("age", "age"),
    ("date_of_birth", "date of birth"),
    ("genotype", "genotype"),
    ("weight", "weight"),
    ("description", "description"),
)


def overview(opened: ViewedFile) -> dict[str, Any]:
    """The session, its subject, devices and what the file holds (see the module's description)."""
    nwb = opened.nwbfile
    subject = getattr(nwb, "subject", None)
    return {
        "session": _fields(nwb, SESSION_FIELDS),
        "subject": None if subject is None else {"path": opened.path_of(subject), **_fields(subject, SUBJECT_FIELDS)},
        "devices": [_entry(opened, name, device) for name, device in sorted(nwb.devices.items())],
        "contents": _contents(opened, nwb),
    }


def _fields(container: Any, fields: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    found: dict[str, Any] = {"fields": []}
    for attribute, label in fields:
        shown = _small(getattr(container, attribute, None))
        if shown not in (None, "", []):
            found["fields"].append({"name": attribute, "label": label, "value": shown})
    return found


def _small(value: Any) -> Any:
    """A field's value as JSON: dates as ISO 8601, an array's first values (an error as text)."""
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    if hasattr(value, "shape") and not isinstance(value, (np.ndarray, np.generic)):  # stored as an array
        try:
            budget.check_chunks(value, "")
            value = value[()] if not value.shape else value[:PREVIEW_ITEMS]
        except HdmfZarrError as exc:
            return {"error": type(exc).__name__, "message": str(exc)}
    if isinstance(value, np.ndarray) and value.dtype.kind in "mM":
        return [str(v) for v in value[:PREVIEW_ITEMS]]
    return plain(value)


def _entry(opened: ViewedFile, name: str, container: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name, "type": type(container).__name__, "path": opened.path_of(container)}
    entry["views"] = views_of(container)
    description = getattr(container, "description", None)
    if isinstance(description, str) and description and description != "no description":
        entry["description"] = plain(description)
    rows = _rows(container)
    if rows is not None:
        entry["rows"] = rows
    return entry


def _rows(container: Any) -> int | None:
    ids = getattr(container, "id", None)
    shape = getattr(getattr(ids, "data", None), "shape", None)
    return int(shape[0]) if shape else None


def _contents(opened: ViewedFile, nwb: Any) -> list[dict[str, Any]]:
    """What the file holds, by section; empty sections left out."""
    sections = [
        ("acquisition", [_entry(opened, n, c) for n, c in sorted(nwb.acquisition.items())]),
        ("stimulus", [_entry(opened, n, c) for n, c in sorted(nwb.stimulus.items())]),
        ("units", [_entry(opened, "units", nwb.units)] if nwb.units is not None else []),
        ("intervals", [_entry(opened, n, c) for n, c in sorted((nwb.intervals or {}).items())]),
        ("events", [_entry(opened, n, c) for n, c in sorted((getattr(nwb, "events", None) or {}).items())]),
        ("electrodes", [_entry(opened, "electrodes", nwb.electrodes)] if nwb.electrodes is not None else []),
    ]
    for name, module in sorted(nwb.processing.items()):
        items = [_entry(opened, n, c) for n, c in sorted(module.data_interfaces.items())]
        sections.append((f"processing/{name}", [_entry(opened, name, module), *items]))
    return [{"section": name, "items": items} for name, items in sections if items]
