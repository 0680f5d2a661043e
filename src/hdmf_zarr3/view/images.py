"""Frames of ImageSeries, TwoPhotonSeries, Images and Image as PNG pictures, and the masks of a
PlaneSegmentation over the file's mean image.

The PNG is written here (zlib and struct: no imaging library to install). A frame is read alone (one
index of the first axis) and every n-th pixel of it, so that at most :data:`~.budget.PICTURE_PIXELS` are
read, whatever size the file declares; gray values are stretched between the frame's 0.5th and 99.5th
percentiles. Masks are drawn into a canvas of the same bounded size: image masks read every n-th pixel,
pixel masks placed by their coordinates divided by n (those outside the image left out).
"""

from __future__ import annotations

import math
import struct
import zlib
from typing import Any

import numpy as np

from ..errors import ViewRequestError
from . import budget, display
from .viewed_file import ViewedFile

#: Pixels of a picture sent, at most (larger frames are shown every n-th pixel).
MAX_PIXELS = budget.PICTURE_PIXELS
#: Regions of interest drawn over the mean image, at most (each is read alone).
MAX_ROIS = 2000
#: Colours of the regions of interest (RGB), in turn.
PALETTE = np.array(
    [[230, 25, 75], [60, 180, 75], [255, 225, 25], [0, 130, 200], [245, 130, 48], [145, 30, 180], [70, 240, 240]],
    dtype=np.uint16,
)
#: Names of the images a PlaneSegmentation's masks are drawn over, in order of preference.
MEAN_NAMES = ("mean", "average", "avg", "reference", "max")
#: Frame times sent with a series' frames (its first ones; later frames are labelled by number only).
FRAME_TIMES = 100_000


def image_info(opened: ViewedFile, path: str) -> dict[str, Any]:
    """How many frames the node at ``path`` shows and their names (an ``Images``' image names)."""
    source = _source(opened, path)
    info = {"path": path, "kind": source["kind"], "frames": source["frames"], "names": source.get("names")}
    if source["kind"] == "segmentation":  # what the masks are drawn over, if anything (the page says so)
        found = _mean_source(source["container"])
        info["background"] = None if found is None else found[0]
    if source["kind"] == "series":  # each frame's time: from the rate, or the first timestamps
        info.update(_frame_times(opened.container_at(path), source["frames"], path))
    return info


def _frame_times(series: Any, frames: int, path: str) -> dict[str, Any]:
    if series.timestamps is None:
        rate = series.rate
        return {"rate": float(rate) if rate else None, "starting_time": float(series.starting_time or 0.0)}
    budget.check_chunks(series.timestamps, path)
    shown = min(frames, len(series.timestamps), FRAME_TIMES)
    return {"times": [float(t) for t in np.asarray(series.timestamps[:shown], dtype=np.float64)]}


def frame_png(opened: ViewedFile, path: str, index: int = 0, shown: display.Contrast = display.DEFAULT) -> bytes:
    """Frame ``index`` of the node at ``path`` as a PNG (at most :data:`MAX_PIXELS` pixels), with the contrast and
    colour map ``shown``."""
    source = _source(opened, path)
    if not 0 <= index < max(source["frames"], 1):
        raise ViewRequestError(f"frame {index} is not among the {source['frames']} frames", path)
    if source["kind"] == "segmentation":
        return png(_segmentation(source["container"], path))
    return png(_picture(source["read"](index), path, shown))


def _source(opened: ViewedFile, path: str) -> dict[str, Any]:
    from pynwb.base import Image, Images
    from pynwb.image import ImageSeries
    from pynwb.ophys import PlaneSegmentation

    container = opened.container_at(path)
    if isinstance(container, ImageSeries):
        data = container.data
        shape = getattr(data, "shape", None)
        if shape is None or len(shape) < 3 or shape[0] == 0:
            raise ViewRequestError("the series holds no frames here (they may be in external files)", path)
        return {"kind": "series", "frames": int(shape[0]), "read": lambda i: _frame(container, i, path)}
    if isinstance(container, Images):
        images = _ordered(container, path)
        return {
            "kind": "images",
            "frames": len(images),
            "names": [i.name for i in images],
            "read": lambda i: decimated(images[i].data, (), path),
        }
    if isinstance(container, Image):
        return {"kind": "image", "frames": 1, "read": lambda i: decimated(container.data, (), path)}
    if isinstance(container, PlaneSegmentation):
        return {"kind": "segmentation", "frames": 1, "container": container}
    raise ViewRequestError(f"a {type(container).__name__} has no picture", path)


def _frame(series: Any, index: int, path: str) -> np.ndarray:
    """Frame ``index`` of an ImageSeries: a volume (t, x, y, z) shows its first plane; (t, x, y, 3|4) is colour."""
    from pynwb.ophys import TwoPhotonSeries

    shape = series.data.shape
    planes = isinstance(series, TwoPhotonSeries) or shape[-1] not in (3, 4)
    return decimated(series.data, (index,), path, plane=len(shape) == 4 and planes)


def decimated(data: Any, lead: tuple[int, ...], path: str, plane: bool = False) -> np.ndarray:
    """``data[lead]`` (a picture: height, width and perhaps colours), every n-th pixel so that at most
    :data:`MAX_PIXELS` are read; its first plane only when ``plane``. Checked against the budget first."""
    shape = tuple(int(n) for n in getattr(data, "shape", np.shape(data)))[len(lead) :]
    if len(shape) not in (2, 3) or (len(shape) == 3 and not plane and shape[2] not in (3, 4)):
        raise ViewRequestError(f"a frame of shape {shape} is no picture", path)
    step = chunk_step(data, len(lead), shape, budget.picture_step(shape[0], shape[1]))
    depth = 1 if plane or len(shape) == 2 else shape[2]
    budget.check_read(data, math.ceil(shape[0] / step) * math.ceil(shape[1] / step) * depth, path, "a picture")
    key = (*lead, slice(None, None, step), slice(None, None, step)) + ((0,) if plane else ())
    return np.asarray(data[key])


def chunk_step(data: Any, lead: int, shape: tuple[int, ...], step: int) -> int:
    """``step``, made coarser until a picture of ``shape`` (after ``lead`` indexed axes) read with it touches at
    most :data:`~.budget.REQUEST_CHUNKS` chunks (an image of tiny chunks is shown coarser, not read for hours)."""

    def touched(stride: int) -> int:
        spans = [(1, 1)] * lead + [(n, -(-n // stride)) for n in shape[:2]] + [(n, n) for n in shape[2:]]
        return budget.touched_chunks(data, spans)

    while touched(step) > budget.REQUEST_CHUNKS and step < max(shape[:2]):
        step *= 2
    return step


def _ordered(images: Any, path: str) -> list[Any]:
    order = getattr(images, "order_of_images", None)
    if order is not None:
        budget.check_read(order.data, len(order.data), path, "the order of images")
        return list(order.data[:])
    return list(images.images.values())


def _picture(frame: Any, path: str, shown: display.Contrast = display.DEFAULT) -> np.ndarray:
    """A frame as 8-bit gray, RGB or RGBA pixels, at most :data:`MAX_PIXELS` of them, gray ones with the contrast
    and colour map ``shown`` (8-bit ones as they are at the default contrast)."""
    pixels = np.asarray(frame)
    if pixels.ndim not in (2, 3) or (pixels.ndim == 3 and pixels.shape[2] not in (3, 4)):
        raise ViewRequestError(f"a frame of shape {pixels.shape} is no picture", path)
    step = budget.picture_step(pixels.shape[0], pixels.shape[1])
    if step > 1:  # (frames read here are decimated already: this is for pictures handed in whole)
        pixels = pixels[::step, ::step]
    if pixels.dtype == np.uint8 and (pixels.ndim == 3 or shown == display.DEFAULT):
        return pixels
    if pixels.ndim == 3:  # colour: stretched together, shown in its own colours
        return display.stretched(pixels, shown)
    return display.coloured(display.stretched(pixels, shown), shown)


def _segmentation(segmentation: Any, path: str) -> np.ndarray:
    """The masks of a PlaneSegmentation, each in its colour, over the mean image (else black), in a canvas of at
    most :data:`MAX_PIXELS` pixels."""
    names = segmentation.colnames
    masks: Any = segmentation["image_mask"] if "image_mask" in names else None
    pixel_masks: Any = segmentation["pixel_mask"] if "pixel_mask" in names else None
    if masks is None and pixel_masks is None:
        raise ViewRequestError("the plane segmentation has neither image nor pixel masks", path)
    if masks is not None and len(getattr(masks.data, "shape", ())) != 3:
        raise ViewRequestError(
            f"image masks of shape {getattr(masks.data, 'shape', None)} are no stack of images", path
        )
    count = min(len(segmentation.id), MAX_ROIS)
    points: Any = None
    ends: Any = None
    if masks is None:
        points, ends = _points(pixel_masks, count, path)
    found = _mean_image(segmentation, path)
    if found is not None:
        background, full = found
    elif masks is not None:
        background, full = None, (int(masks.data.shape[1]), int(masks.data.shape[2]))
    else:  # only coordinates: the image is as large as they reach (drawn in a canvas of bounded size all the same)
        reach = [int(points[name].max()) + 1 if len(points) else 1 for name in points.dtype.names[:2]]
        background, full = None, (reach[0], reach[1])
    step = budget.picture_step(*full)
    if masks is not None:  # one mask at a time: the ROIs drawn share the chunk budget
        step = chunk_step(masks.data, 1, full, step)
        count = min(count, max(1, budget.REQUEST_CHUNKS // max(1, _mask_chunks(masks.data, full, step))))
    shape = (math.ceil(full[0] / step), math.ceil(full[1] / step))
    canvas = np.zeros((*shape, 3), dtype=np.uint8)  # 8-bit: the canvas of a 2048 x 2048 picture takes 12 MiB
    if background is not None:
        gray = display.stretched(background)[: shape[0], : shape[1]]
        canvas[: gray.shape[0], : gray.shape[1]] = gray[..., :3] if gray.ndim == 3 else gray[..., None]
    if masks is not None:
        budget.check_read(masks.data, shape[0] * shape[1], path, "an image mask")
    for roi in range(count):
        if masks is not None:
            where: Any = np.nonzero(np.asarray(masks.data[roi, ::step, ::step])[: shape[0], : shape[1]] > 0)
        else:
            where = _placed(points[0 if roi == 0 else int(ends[roi - 1]) : int(ends[roi])], full, step)
        canvas[where] = (canvas[where] + PALETTE[roi % len(PALETTE)]) // 2  # half the mask's colour over it
    return canvas


def _mask_chunks(data: Any, full: tuple[int, int], step: int) -> int:
    return budget.touched_chunks(data, [(1, 1), *((n, -(-n // step)) for n in full)])


def _points(pixel_masks: Any, count: int, path: str) -> tuple[np.ndarray, np.ndarray]:
    """The points of the first ``count`` pixel masks (``x``, ``y``, ``weight``) and where each mask ends."""
    budget.check_read(pixel_masks.data, count, path, "the ends of the pixel masks")
    ends = np.asarray(pixel_masks.data[:count], dtype=np.int64) if count else np.zeros(0, np.int64)
    target = pixel_masks.target.data
    total = min(int(ends.max(initial=0)), len(target))
    budget.check_read(target, total, path, "the pixel masks")
    budget.check_chunk_count(target, [(total, total)], path, "the pixel masks")
    points = np.asarray(target[:total])
    if points.dtype.names is None or len(points.dtype.names) < 2:
        raise ViewRequestError("the pixel masks are no (x, y, weight) rows", path)
    return points, np.clip(ends, 0, total)


def _placed(points: np.ndarray, full: tuple[int, int], step: int) -> tuple[np.ndarray, np.ndarray]:
    """The canvas pixels of the mask ``points`` (those outside the ``full`` image left out)."""
    x_name, y_name = (points.dtype.names or ("x", "y"))[:2]
    x, y = points[x_name].astype(np.int64), points[y_name].astype(np.int64)
    inside = (x >= 0) & (x < full[0]) & (y >= 0) & (y < full[1])
    return x[inside] // step, y[inside] // step


def _mean_image(segmentation: Any, path: str) -> tuple[np.ndarray, tuple[int, int]] | None:
    """The image a segmentation was drawn on (see :func:`_mean_source`), read every n-th pixel, and its full size."""
    found = _mean_source(segmentation)
    if found is None:
        return None
    _, data, lead = found
    shape = getattr(data, "shape", np.shape(data))
    return decimated(data, lead, path), (int(shape[len(lead)]), int(shape[len(lead) + 1]))


def _mean_source(segmentation: Any) -> tuple[str, Any, tuple[int, ...]] | None:
    """What a segmentation is drawn on, nothing read: an Images' mean image in its processing module (by
    :data:`MEAN_NAMES`), else the first frame of its reference images; ``(label, data, leading index)``."""
    from pynwb.base import Images

    module = getattr(segmentation.parent, "parent", None)
    found = []
    for container in getattr(module, "data_interfaces", {}).values():
        if isinstance(container, Images):
            found.extend(container.images.values())
    for wanted in MEAN_NAMES:
        for image in found:
            shape = getattr(image.data, "shape", np.shape(image.data))
            if wanted in image.name.lower() and len(shape) in (2, 3):
                return f"the image {image.name!r}", image.data, ()
    references = getattr(segmentation, "reference_images", None) or {}
    for series in references.values() if isinstance(references, dict) else references:
        data = getattr(series, "data", None)
        if data is not None and getattr(data, "ndim", 0) == 3 and data.shape[0] > 0:
            return f"the first frame of {series.name!r}", data, (0,)
    return None


def png(pixels: np.ndarray) -> bytes:
    """An 8-bit gray (2-d), RGB or RGBA (3-d) picture as PNG bytes."""
    pixels = np.ascontiguousarray(pixels, dtype=np.uint8)
    height, width = pixels.shape[:2]
    color = 0 if pixels.ndim == 2 else {3: 2, 4: 6}[pixels.shape[2]]
    rows = pixels.reshape(height, -1)
    raw = np.concatenate([np.zeros((height, 1), dtype=np.uint8), rows], axis=1).tobytes()  # filter 0 per row

    def chunk(tag: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, color, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b"")
