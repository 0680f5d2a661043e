"""``ZarrDataIO``: per-dataset storage settings for the Zarr backend (the counterpart of H5DataIO)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from hdmf.data_utils import DataIO

from .errors import UnsupportedDataError

CodecLike = Any  # a zarr codec object or its JSON form {"name": ..., "configuration": {...}}


def codec_json(codec: CodecLike, role: str) -> dict[str, Any]:
    """The JSON form of a codec, checked against zarr's registry and the role it plays."""
    from zarr.abc.codec import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec
    from zarr.registry import get_codec_class

    doc = codec if isinstance(codec, dict) else getattr(codec, "to_dict", lambda: None)()
    if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
        raise UnsupportedDataError(f"{role}: expected a zarr codec or its JSON form, got {codec!r}")
    try:
        cls = get_codec_class(doc["name"])
    except Exception as exc:  # zarr raises KeyError or UnknownCodecError depending on the version
        raise UnsupportedDataError(f"{role}: codec {doc['name']!r} is not registered with zarr") from exc
    expected = {"compressors": BytesBytesCodec, "filters": ArrayArrayCodec, "serializer": ArrayBytesCodec}[role]
    if not issubclass(cls, expected):
        raise UnsupportedDataError(f"{role}: codec {doc['name']!r} is not a {expected.__name__}")
    return {"name": doc["name"], **({"configuration": doc["configuration"]} if doc.get("configuration") else {})}


def _shape(value: Sequence[int] | None, name: str) -> tuple[int, ...] | None:
    if value is None:
        return None
    if isinstance(value, int) or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value):
        raise UnsupportedDataError(f"{name} must be a tuple of positive integers, got {value!r}")
    return tuple(value)


class ZarrDataIO(DataIO):
    """Wrap data to choose how one dataset is stored in Zarr.

    Parameters
    ----------
    data : array-like, optional
        The data (or ``None`` with ``dtype`` and ``shape`` for an empty dataset). A dask array is
        written by Dask, one task per shard (wrap it here: HDMF's own type checks refuse dask arrays).
    chunks : tuple of int, optional
        Chunk shape (the unit of reading). Defaults to a layout of a few MB.
    shards : tuple of int, "auto" or None
        Shard shape (the unit of storage objects); each dimension a multiple of ``chunks``.
        ``"auto"`` (the default) shards large arrays as the layout policy does without a
        ``ZarrDataIO``; ``None`` never shards.
    compressors, filters : sequence of codecs, optional
        Bytes-to-bytes compressors and array-to-array filters (zarr codec objects or JSON forms).
    serializer : codec, optional
        The array-to-bytes codec (``bytes`` by default; ``vlen-utf8`` for strings).
    fill_value : scalar, optional
        Value of chunks never written.
    dimension_names : sequence of str, optional
        Zarr v3 ``dimension_names`` (by default the spec's ``dims``).
    link_data : bool
        If ``data`` is a dataset read from another Zarr file, link to it instead of copying.
    """

    def __init__(self, data: Any = None, chunks: Sequence[int] | None = None,
                 shards: Sequence[int] | str | None = "auto",
                 compressors: Sequence[CodecLike] | None = None, filters: Sequence[CodecLike] | None = None,
                 serializer: CodecLike | None = None, fill_value: Any = None,
                 dimension_names: Sequence[str | None] | None = None, link_data: bool = False,
                 dtype: Any = None, shape: tuple[int, ...] | None = None):
        from .dask_io import is_dask

        # HDMF's type checks know no dask arrays; set through the setter, they pass (and Dask writes them).
        deferred = data if is_dask(data) else None
        super().__init__(data=None if deferred is not None else data, dtype=dtype, shape=shape)
        if deferred is not None:
            self.data = deferred
        self.chunks = _shape(chunks, "chunks")
        if isinstance(shards, str) and shards != "auto":
            raise UnsupportedDataError(f"shards must be a tuple of positive integers, 'auto' or None, got {shards!r}")
        self.shards = shards if shards == "auto" else _shape(shards, "shards")
        if self.shards not in (None, "auto"):
            if self.chunks is None or len(self.chunks) != len(self.shards) or \
                    any(s % c for s, c in zip(self.shards, self.chunks)):
                raise UnsupportedDataError(f"shards {self.shards} must be whole multiples of chunks {self.chunks}")
        self.compressors = [codec_json(c, "compressors") for c in compressors] if compressors is not None else None
        self.filters = [codec_json(c, "filters") for c in filters] if filters is not None else None
        self.serializer = codec_json(serializer, "serializer") if serializer is not None else None
        self.fill_value = fill_value.item() if isinstance(fill_value, np.generic) else fill_value  # JSON-ready
        self.dimension_names = list(dimension_names) if dimension_names is not None else None
        self.link_data = link_data

    @property
    def io_settings(self) -> dict[str, Any]:
        """The settings given, under the names the writer reads (``zarr_*`` for Zarr-only ones)."""
        settings: dict[str, Any] = {"zarr": True}
        settings["shards"] = self.shards
        for key in ("chunks", "compressors", "filters", "serializer", "fill_value", "dimension_names"):
            value = getattr(self, key)
            if value is not None:
                settings[key] = value
        return settings

    def get_io_params(self) -> dict[str, Any]:
        """Keyword arguments that recreate these settings (HDMF re-wraps data with them)."""
        return {k: v for k, v in self.io_settings.items() if k != "zarr"} | {"link_data": self.link_data}
