"""Frames of ImageSeries, TwoPhotonSeries, Images and Image as PNG pictures, and the masks of a
PlaneSegmentation over the file's mean image.

The PNG is written here (zlib and struct: no imaging library to install). A frame is read alone (one
index of the first axis); gray values are stretched between the frame's 0.5th and 99.5th percentiles.
Frames larger than :data:`MAX_PIXELS` are shown every n-th pixel; beyond :data:`READ_PIXELS` they are
refused rather than read.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import numpy as np

from ..errors import ViewRequestError
from .opened import OpenedFile

#: Pixels of a picture sent, at most (larger frames are shown every n-th pixel).
MAX_PIXELS = 2048 * 2048
#: Pixels of a frame read, at most.
READ_PIXELS = 64 * 1024 * 1024
#: Regions of interest drawn over the mean image, at most (each is read alone).
MAX_ROIS = 2000
#: Colours of the regions of interest (RGB), in turn.
PALETTE = np.array(
    [[230, 25, 75], [60, 180, 75], [255, 225, 25], [0, 130, 200], [245, 130, 48], [145, 30, 180], [70, 240, 240]],
    dtype=np.float64,
)
#: Names of the images a PlaneSegmentation's masks are drawn over, in order of preference.
MEAN_NAMES = ("mean", "average", "avg", "reference", "max")


def image_info(opened: OpenedFile, path: str) -> dict[str, Any]:
    """How many frames the node at ``path`` shows and their names (an ``Images``' image names)."""
    source = _source(opened, path)
    return {"path": path, "kind": source["kind"], "frames": source["frames"], "names": source.get("names")}


def frame_png(opened: OpenedFile, path: str, index: int = 0) -> bytes:
    """Frame ``index`` of the node at ``path`` as a PNG."""
    source = _source(opened, path)
    if not 0 <= index < max(source["frames"], 1):
        raise ViewRequestError(f"frame {index} is not among the {source['frames']} frames", path)
    if source["kind"] == "segmentation":
        return png(_segmentation(opened, source["container"], path))
    return png(_picture(source["read"](index), path))


def _source(opened: OpenedFile, path: str) -> dict[str, Any]:
    from pynwb.base import Image, Images
    from pynwb.image import ImageSeries
    from pynwb.ophys import PlaneSegmentation, TwoPhotonSeries

    container = opened.container_at(path)
    if isinstance(container, ImageSeries):
        data = container.data
        shape = getattr(data, "shape", None)
        if shape is None or len(shape) < 3 or shape[0] == 0:
            raise ViewRequestError("the series holds no frames here (they may be in external files)", path)
        planes = isinstance(container, TwoPhotonSeries) or shape[-1] not in (3, 4)
        # a volume (t, x, y, z) shows its first plane; (t, x, y, 3|4) is colour
        pick = (lambda i: data[i][..., 0]) if len(shape) == 4 and planes else (lambda i: data[i])
        _check_size(shape[1:3], path)
        return {"kind": "series", "frames": int(shape[0]), "read": pick}
    if isinstance(container, Images):
        images = _ordered(container)
        return {
            "kind": "images",
            "frames": len(images),
            "names": [i.name for i in images],
            "read": lambda i: images[i].data[()],
        }
    if isinstance(container, Image):
        return {"kind": "image", "frames": 1, "read": lambda i: container.data[()]}
    if isinstance(container, PlaneSegmentation):
        return {"kind": "segmentation", "frames": 1, "container": container}
    raise ViewRequestError(f"a {type(container).__name__} has no picture", path)


def _ordered(images: Any) -> list[Any]:
    order = getattr(images, "order_of_images", None)
    if order is not None:
        return list(order.data[:])
    return list(images.images.values())


def _check_size(shape: Any, path: str) -> None:
    if int(np.prod([int(n) for n in shape])) > READ_PIXELS:
        raise ViewRequestError(f"a frame of {tuple(shape)} pixels is too large to show", path)


def _picture(frame: Any, path: str) -> np.ndarray:
    """A frame as 8-bit gray, RGB or RGBA pixels, at most :data:`MAX_PIXELS` of them."""
    pixels = np.asarray(frame)
    if pixels.ndim not in (2, 3) or (pixels.ndim == 3 and pixels.shape[2] not in (3, 4)):
        raise ViewRequestError(f"a frame of shape {pixels.shape} is no picture", path)
    _check_size(pixels.shape[:2], path)
    step = int(np.ceil(np.sqrt(pixels.shape[0] * pixels.shape[1] / MAX_PIXELS)))
    if step > 1:
        pixels = pixels[::step, ::step]
    if pixels.dtype == np.uint8:
        return pixels
    return _stretch(pixels.astype(np.float64))


def _stretch(values: np.ndarray) -> np.ndarray:
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return np.zeros(values.shape, dtype=np.uint8)
    low, high = np.percentile(finite, [0.5, 99.5])
    if high <= low:
        high = low + 1.0
    scaled = np.clip((np.nan_to_num(values, nan=low) - low) / (high - low), 0.0, 1.0)
    return (scaled * 255).round().astype(np.uint8)


def _segmentation(opened: OpenedFile, segmentation: Any, path: str) -> np.ndarray:
    """The masks of a PlaneSegmentation, each in its colour, over the mean image (else black)."""
    masks: Any = segmentation["image_mask"] if "image_mask" in segmentation.colnames else None
    pixel_masks: Any = segmentation["pixel_mask"] if "pixel_mask" in segmentation.colnames else None
    background = _mean_image(segmentation)
    if background is not None:
        shape = background.shape[:2]
    elif masks is not None:
        shape = tuple(masks.data.shape[1:3])
    elif pixel_masks is not None:
        points = np.asarray(pixel_masks.target.data[:])
        shape = (int(points["x"].max()) + 1, int(points["y"].max()) + 1) if len(points) else (1, 1)
    else:
        raise ViewRequestError("the plane segmentation has neither image nor pixel masks", path)
    _check_size(shape, path)
    gray = _stretch(np.asarray(background, dtype=np.float64)) if background is not None else None
    canvas = np.zeros((*shape, 3)) if gray is None else np.repeat(gray[..., None], 3, axis=2).astype(np.float64)
    if gray is not None and gray.ndim == 3:  # an RGB mean image
        canvas = gray[..., :3].astype(np.float64)
    count = min(len(segmentation.id), MAX_ROIS)
    for roi in range(count):
        weight = np.zeros(shape)
        if masks is not None:
            mask = np.asarray(masks.data[roi], dtype=np.float64)
            weight[: mask.shape[0], : mask.shape[1]] = mask[: shape[0], : shape[1]]
        else:
            for x, y, w in pixel_masks[roi]:
                if 0 <= x < shape[0] and 0 <= y < shape[1]:
                    weight[int(x), int(y)] = w
        alpha = 0.5 * (weight > 0)[..., None]
        canvas = canvas * (1 - alpha) + PALETTE[roi % len(PALETTE)] * alpha
    return canvas.round().clip(0, 255).astype(np.uint8)


def _mean_image(segmentation: Any) -> np.ndarray | None:
    """The image a segmentation was drawn on: an Images' mean image in its processing module, or the first
    frame of its reference images."""
    from pynwb.base import Images

    module = getattr(segmentation.parent, "parent", None)
    found = []
    for container in getattr(module, "data_interfaces", {}).values():
        if isinstance(container, Images):
            found.extend(container.images.values())
    for wanted in MEAN_NAMES:
        for image in found:
            if wanted in image.name.lower():
                return np.asarray(image.data[()])
    references = getattr(segmentation, "reference_images", None) or {}
    for series in references.values() if isinstance(references, dict) else references:
        data = getattr(series, "data", None)
        if data is not None and getattr(data, "ndim", 0) >= 3 and data.shape[0] > 0:
            return np.asarray(data[0])
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
