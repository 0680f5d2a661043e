"""The result of choosing an array's layout, whoever chooses it.

A :class:`ZarrLayout` comes from the default policy (:mod:`.layout_policy`), from an HDF5 source's
chunking and filters (:mod:`.hdf5_layout`), from a kept Zarr source or a conversion's relayout
(:mod:`.relayout`), or from a user's ``ZarrDataIO``; the writer creates the array from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ZarrLayout:
    """The chunk grid, codecs and array metadata chosen for one Zarr array."""

    chunks: tuple[int, ...] | None  # the chunk grid: shards when sharded
    codecs: list[dict[str, Any]] | None  # None: the default for the data type
    warnings: list[str] = field(default_factory=list)
    fill_value: Any = None
    dimension_names: list[str | None] | None = None
