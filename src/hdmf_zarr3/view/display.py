"""How a picture's numbers become pixels (issue #41, point 6): between two percentiles of its values (contrast),
through a colour map (gray, viridis, magma), as the page's contrast and colour controls ask."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ViewRequestError

#: Values the percentiles of a picture's stretch are taken from, at most (every n-th value beyond).
STRETCH_SAMPLE = 1_000_000
#: Colour maps: their stops from the lowest value to the highest (RGB); gray has none.
COLOUR_MAPS: dict[str, list[tuple[int, int, int]] | None] = {
    "gray": None,
    "viridis": [(68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37)],
    "magma": [(0, 0, 4), (81, 18, 124), (183, 55, 121), (252, 137, 97), (252, 253, 191)],
}


@dataclass(frozen=True)
class Contrast:
    """The percentiles of a picture's values shown as black and white (or the colour map's ends)."""

    low: float = 0.5
    high: float = 99.5
    colours: str = "gray"


#: The contrast a picture is shown with unless the page asks for another.
DEFAULT = Contrast()


def contrast(low: float, high: float, colours: str, path: str) -> Contrast:
    """The page's contrast and colour map, checked (a :class:`ViewRequestError` naming what is wrong)."""
    if not 0.0 <= low < high <= 100.0:
        raise ViewRequestError(f"contrast {low}–{high}: give percentiles with 0 <= low < high <= 100", path)
    if colours not in COLOUR_MAPS:
        raise ViewRequestError(f"colours={colours[:20]!r}: choose one of {', '.join(COLOUR_MAPS)}", path)
    return Contrast(low, high, colours)


def stretched(values: np.ndarray, shown: Contrast = DEFAULT) -> np.ndarray:
    """Numbers as 0..255 between their ``shown.low`` and ``shown.high`` percentiles (NaN as the lowest)."""
    values = np.array(values, dtype=np.float32)  # a copy: scaled in place below
    sample = values.reshape(-1)[:: max(1, values.size // STRETCH_SAMPLE)]
    finite = sample[np.isfinite(sample)]
    if finite.size == 0:
        return np.zeros(values.shape, dtype=np.uint8)
    low, high = (float(v) for v in np.percentile(finite, [shown.low, shown.high]))
    if not high > low:
        high = low + 1.0
    scaled = np.nan_to_num(values, copy=False, nan=low, posinf=high, neginf=low)
    scaled -= low
    scaled *= 255.0 / (high - low)
    return np.clip(scaled, 0.0, 255.0, out=scaled).round().astype(np.uint8)


def coloured(gray: np.ndarray, shown: Contrast) -> np.ndarray:
    """A 0..255 gray picture through the colour map of ``shown`` (RGB), or as it is for gray."""
    stops = COLOUR_MAPS[shown.colours]
    if stops is None or gray.ndim != 2:
        return gray
    at = np.linspace(0, 255, len(stops))
    table = np.stack([np.interp(np.arange(256), at, [s[c] for s in stops]) for c in range(3)], axis=1)
    return table.round().astype(np.uint8)[gray]
