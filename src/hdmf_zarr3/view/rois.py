"""The regions of interest of a PlaneSegmentation and their traces (issue #41, point 6), as plain data: which
ROI a pixel of the masks picture belongs to, and the RoiResponseSeries (Fluorescence, DfOverF...) of the file
holding a trace of each ROI, with the column of that ROI in them, so that the page plots the trace of the ROI
clicked with the series view it already has.

A pixel is looked up in at most :data:`ROI_PICKS` ROIs (one element of each image mask read, or the pixel masks
read as the picture reads them).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ViewRequestError
from . import budget
from .viewed_file import ViewedFile

#: ROIs a click is looked up in, at most (the first ones).
ROI_PICKS = 2_000


def _segmentation(opened: ViewedFile, path: str) -> Any:
    from pynwb.ophys import PlaneSegmentation

    found = opened.container_at(path)
    if not isinstance(found, PlaneSegmentation):
        raise ViewRequestError(f"a {type(found).__name__} is no plane segmentation", path)
    return found


def traces(opened: ViewedFile, path: str) -> dict[str, Any]:
    """The RoiResponseSeries whose ROIs are rows of the segmentation at ``path``, each with its column of each
    row (``columns[row]``, ``None`` where it has no trace of that ROI), and the segmentation's mask shape."""
    from pynwb.ophys import RoiResponseSeries

    segmentation = _segmentation(opened, path)
    rows = len(segmentation.id)
    found = []
    for container in opened.nwbfile.objects.values():
        region: Any = getattr(container, "rois", None)
        if not isinstance(container, RoiResponseSeries) or getattr(region, "table", None) is not segmentation:
            continue
        budget.check_chunks(region.data, path)
        columns: list[int | None] = [None] * min(rows, ROI_PICKS)
        for column, row in enumerate(np.asarray(region.data[: min(len(region.data), ROI_PICKS)]).tolist()):
            if 0 <= int(row) < len(columns) and columns[int(row)] is None:
                columns[int(row)] = column
        found.append({"path": opened.path_of(container), "name": container.name, "columns": columns})
    found.sort(key=lambda entry: str(entry["path"]))
    masks = segmentation["image_mask"].data if "image_mask" in segmentation.colnames else None
    shape = [int(n) for n in masks.shape[1:3]] if masks is not None and len(masks.shape) == 3 else None
    return {"path": path, "rows": rows, "mask_shape": shape, "traces": found}


def roi_at(opened: ViewedFile, path: str, row: int, column: int) -> dict[str, Any]:
    """The ROIs (rows of the segmentation) whose mask covers pixel (``row``, ``column``) of its image."""
    segmentation = _segmentation(opened, path)
    count = min(len(segmentation.id), ROI_PICKS)
    if "image_mask" in segmentation.colnames:
        masks = segmentation["image_mask"].data
        budget.check_chunks(masks, path)
        shape: tuple[int, ...] = tuple(getattr(masks, "shape", ()))
        if len(shape) != 3 or not (0 <= row < shape[1] and 0 <= column < shape[2]):
            raise ViewRequestError(f"pixel ({row}, {column}) is outside the masks of shape {tuple(shape)}", path)
        budget.check_chunk_count(masks, [(count, count), (1, 1), (1, 1)], path, "looking a pixel up in the masks")
        hits = [r for r in range(count) if float(np.asarray(masks[r, row, column])) > 0]
    elif "pixel_mask" in segmentation.colnames:
        hits = _in_pixel_masks(segmentation["pixel_mask"], count, row, column, path)
    else:
        raise ViewRequestError("the plane segmentation has neither image nor pixel masks", path)
    return {"path": path, "row": row, "column": column, "rois": hits}


def _in_pixel_masks(pixel_masks: Any, count: int, row: int, column: int, path: str) -> list[int]:
    budget.check_read(pixel_masks.data, count, path, "the ends of the pixel masks")
    ends = np.asarray(pixel_masks.data[:count], dtype=np.int64)
    target = pixel_masks.target.data
    total = min(int(ends.max(initial=0)), len(target))
    budget.check_read(target, total, path, "the pixel masks")
    points = np.asarray(target[:total])
    names: tuple[str, ...] = points.dtype.names or ()
    if len(names) < 2:
        raise ViewRequestError("the pixel masks are no (x, y, weight) rows", path)
    inside = np.flatnonzero((points[names[0]] == row) & (points[names[1]] == column))
    return sorted({int(np.searchsorted(ends, i, side="right")) for i in inside})
