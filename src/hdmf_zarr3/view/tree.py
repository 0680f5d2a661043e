"""The tree of an NWB file and the details of one node, as plain data (JSON) for the viewer's page.

Every node is named by its path in the file; links and references are given as the paths they point at,
so the page can jump there. Which views a node opens in (``table``, ``series``, ``image``) follows from
its NWB type. Nothing here reads array values except :func:`node`'s short preview.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hdmf.build import DatasetBuilder, GroupBuilder, LinkBuilder, ReferenceBuilder

from ..errors import HdmfZarrError
from . import budget
from .viewed_file import ViewedFile, file_path

#: Values of an array shown in a node's details, at most.
PREVIEW_ITEMS = 20
#: Characters of one string attribute shown, at most (descriptions can be long; the rest is cut).
TEXT_CHARS = 2000


def walked_series(container: Any) -> Any:
    """The SpatialSeries drawn as a path for ``container``: itself when it has two or more columns (x, y...),
    or the first such of a Position or CompassDirection; else ``None``."""
    from pynwb.behavior import CompassDirection, Position, SpatialSeries

    if isinstance(container, (Position, CompassDirection)):
        found = (walked_series(s) for _, s in sorted(container.spatial_series.items()))
        return next((s for s in found if s is not None), None)
    shape = getattr(getattr(container, "data", None), "shape", None)
    if isinstance(container, SpatialSeries) and shape is not None and len(shape) == 2 and shape[1] >= 2:
        return container
    return None


def views_of(container: Any) -> list[str]:
    """The views a container opens in: ``session`` (the file's overview), ``series`` (a plot), ``table``
    (rows), ``timeline`` (an interval table's rows in time), ``raster`` (a Units table's spikes), ``path`` (a
    SpatialSeries in x-y, :func:`walked_series`), ``events`` (a BehavioralEvents' times as ticks), ``image`` (a
    picture)."""
    from hdmf.common import DynamicTable
    from pynwb import NWBFile, TimeSeries
    from pynwb.base import Image, Images
    from pynwb.behavior import BehavioralEvents
    from pynwb.epoch import TimeIntervals
    from pynwb.event import EventsTable
    from pynwb.image import ImageSeries
    from pynwb.misc import Units
    from pynwb.ophys import PlaneSegmentation

    views = []
    if isinstance(container, NWBFile):
        views.append("session")
    if walked_series(container) is not None:
        views.append("path")
    if isinstance(container, (BehavioralEvents, EventsTable)) or isinstance(
        getattr(container, "parent", None), BehavioralEvents
    ):
        views.append("events")
    if isinstance(container, ImageSeries):
        data = container.data
        views.append("image" if getattr(data, "ndim", 0) >= 3 else "series")
    elif isinstance(container, TimeSeries):
        views.append("series")
    if isinstance(container, (Images, Image, PlaneSegmentation)):
        views.append("image")
    if isinstance(container, DynamicTable):
        views.append("table")
    if isinstance(container, TimeIntervals):
        views.append("timeline")
    if isinstance(container, Units) and "spike_times" in container.colnames:
        views.append("raster")
    return views


def neurodata_type(builder: Any) -> str | None:
    """``namespace:Type`` of a typed node, or ``None``."""
    attrs = builder.attributes
    for key in ("neurodata_type", "data_type"):
        if isinstance(attrs.get(key), str):
            return f"{attrs.get('namespace', '?')}:{attrs[key]}"
    return None


def tree(opened: ViewedFile) -> dict[str, Any]:
    """The whole tree of the file: for each node its name, path, kind, type, views and children; arrays with
    shape and dtype, links with their target path."""
    return {"location": opened.location, "root": _entry(opened, opened.root)}


def _entry(opened: ViewedFile, builder: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": builder.name if builder.parent is not None else "/", "path": file_path(builder)}
    if isinstance(builder, LinkBuilder):
        entry.update(kind="link", target=file_path(builder.builder))
        return entry
    entry["kind"] = "group" if isinstance(builder, GroupBuilder) else "dataset"
    kind = neurodata_type(builder)
    if kind:
        entry["type"] = kind
        container = opened.nwbfile.objects.get(builder.attributes.get("object_id"))
        entry["views"] = views_of(container) if container is not None else []
    if isinstance(builder, DatasetBuilder):
        entry.update(shape=_shape(builder.data), dtype=_dtype(builder))
    else:
        children = sorted(
            (*builder.groups.values(), *builder.datasets.values(), *builder.links.values()), key=lambda b: b.name
        )
        entry["children"] = [_entry(opened, child) for child in children]
    return entry


def node(opened: ViewedFile, path: str) -> dict[str, Any]:
    """The details of the node at ``path``: attributes (references as paths), an array's shape, dtype, chunks,
    shards, codecs, logical and stored size and first values; a link's target; a group's children."""
    builder = opened.builder_at(path)
    out: dict[str, Any] = {"path": file_path(builder), "name": builder.name}
    if isinstance(builder, LinkBuilder):
        out.update(kind="link", target=file_path(builder.builder))
        return out
    out["kind"] = "group" if isinstance(builder, GroupBuilder) else "dataset"
    out["type"] = neurodata_type(builder)
    out["attributes"] = {k: plain(v) for k, v in sorted(builder.attributes.items())}
    container = opened.nwbfile.objects.get(builder.attributes.get("object_id"))
    out["views"] = views_of(container) if container is not None else []
    if isinstance(builder, GroupBuilder):
        out["children"] = sorted([*builder.groups, *builder.datasets, *builder.links])
        out["links"] = {name: file_path(link.builder) for name, link in sorted(builder.links.items())}
    else:
        out.update(_array(builder))
    return out


def _array(builder: DatasetBuilder) -> dict[str, Any]:
    data = builder.data
    out: dict[str, Any] = {"shape": _shape(data), "dtype": _dtype(builder)}
    if not hasattr(data, "shape") or isinstance(data, np.generic):  # a scalar or short value read with the file
        out["value"] = plain(data)
        return out
    try:
        out.update(storage(data))
    except HdmfZarrError as exc:  # e.g. hdmf-zarr <= 0.13 object arrays: no zarr array to ask
        out["storage_error"] = str(exc)
    out["preview"] = preview(data)
    return out


def storage(data: Any) -> dict[str, Any]:
    """What ``hdmf-zarr3 info`` tells of an array, from the lazy dataset's public properties."""
    codecs = [*data.filters, *([data.serializer] if data.serializer is not None else []), *data.compressors]
    out: dict[str, Any] = {
        "chunks": list(data.chunks),
        "shards": list(data.shards) if data.shards else None,
        "codecs": [_codec(c) for c in codecs],
        "logical_bytes": _logical_bytes(data),
    }
    try:
        out["stored_bytes"] = int(data.nbytes_stored())
    except Exception:  # a store that cannot list its keys (e.g. plain HTTP): the size is unknown, not an error
        out["stored_bytes"] = None
    return out


def _logical_bytes(data: Any) -> int | None:
    try:
        return int(data.nbytes)
    except (AttributeError, TypeError):  # a dataset of references has no numpy item size to count
        return None


def preview(data: Any) -> Any:
    """The first values of an array (along its first axis, at most :data:`PREVIEW_ITEMS`; an error as text)."""
    try:
        budget.check_chunks(data, "")  # the corner decodes the first chunk: not one past the budget
        if not data.shape:
            return plain(data[()])
        # the first values along the first two axes only: a corner of the first chunk, not a row of all chunks
        corner = tuple(slice(0, min(PREVIEW_ITEMS, n)) if axis < 2 else 0 for axis, n in enumerate(data.shape))
        values = data[corner]
    except HdmfZarrError as exc:
        return {"error": type(exc).__name__, "message": str(exc)}
    if isinstance(values, np.ndarray) and values.ndim > 1:
        values = values.reshape(values.shape[0], -1)[:, :PREVIEW_ITEMS]
    return plain(values)


def _codec(codec: Any) -> str:
    try:
        described = codec.to_dict()
    except Exception:  # a codec without a JSON form
        return type(codec).__name__
    name = str(described.get("name", type(codec).__name__))
    config = described.get("configuration") or {}
    inner = config.get("cname") or config.get("level")  # blosc's compressor, zstd's level
    return f"{name}({inner})" if inner is not None else name


def _shape(data: Any) -> list[int]:
    shape = getattr(data, "shape", None)
    if shape is None:
        return [len(data)] if isinstance(data, (list, tuple)) else []
    return [int(n) for n in shape]


def _dtype(builder: DatasetBuilder) -> str:
    data = builder.data
    dtype = getattr(data, "dtype", None)
    if dtype is not None and getattr(dtype, "names", None):
        return "{" + ", ".join(dtype.names) + "}"
    if isinstance(builder.dtype, str):
        return builder.dtype
    return str(dtype) if dtype is not None else type(data).__name__


def plain(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON: numpy scalars and arrays as numbers and lists (cut to :data:`PREVIEW_ITEMS`), bytes
    as text, references and builders as ``{"ref": path}``, containers as their path or name."""
    if isinstance(value, ReferenceBuilder):
        return {"ref": file_path(value.builder)}
    if isinstance(value, (GroupBuilder, DatasetBuilder)):
        return {"ref": file_path(value)}
    if isinstance(value, LinkBuilder):
        return {"ref": file_path(value.builder)}
    if isinstance(value, (bytes, np.bytes_)):
        return value.decode("utf-8", "replace")[:TEXT_CHARS]
    if isinstance(value, str):
        return value[:TEXT_CHARS]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        number = float(value)
        return number if np.isfinite(number) else str(number)  # JSON has no NaN nor infinity
    if value is None:
        return None
    if depth > 3:
        return str(value)[:200]
    if isinstance(value, np.ndarray) and value.dtype.names:  # a compound row
        value = list(value)
    if isinstance(value, np.void) and value.dtype.names:
        return {name: plain(value[name], depth + 1) for name in value.dtype.names}
    if isinstance(value, dict):
        return {str(k): plain(v, depth + 1) for k, v in list(value.items())[:PREVIEW_ITEMS]}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [plain(v, depth + 1) for v in list(value[:PREVIEW_ITEMS])]
    if hasattr(value, "object_id") and hasattr(value, "name"):  # a container
        return {"name": value.name, "type": type(value).__name__}
    return str(value)[:200]
