"""The arguments of ``ZarrDataIO``, each checked for its type and turned into the form zarr takes: shapes,
codecs (zarr codec objects, their JSON forms, numcodecs codecs), a fill value, dimension names. What they
give a dataset of a known data type and shape is checked by :meth:`.layout_choice.ZarrSettings.layout`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...errors import UnsupportedDataError
from .layout_choice import AUTO, POLICY, ZarrSettings

CodecLike = Any  # a zarr codec object or its JSON form {"name": ..., "configuration": {...}}


def codec_json(codec: CodecLike, role: str) -> dict[str, Any]:
    """The JSON form of a codec, checked against zarr's registry, the role it plays and its options."""
    from zarr.abc.codec import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec
    from zarr.registry import get_codec_class

    from .hdmf_zarr_inputs import is_numcodecs_codec, numcodecs_json

    if is_numcodecs_codec(codec):  # a Zarr v2-style codec, as older hdmf-zarr took
        codec = numcodecs_json(codec)
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
    configuration = doc.get("configuration", {})
    if not isinstance(configuration, dict):
        raise UnsupportedDataError(
            f"{role}: the configuration of codec {doc['name']!r} must be a dict, got {configuration!r}"
        )
    try:
        cls.from_dict({"name": doc["name"], "configuration": configuration})  # zarr checks the options
    except Exception as exc:  # zarr raises TypeError, ValueError... depending on the codec
        raise UnsupportedDataError(f"{role}: codec {doc['name']!r}: {exc}") from None
    return {"name": doc["name"], "configuration": configuration}


def _codecs(value: Any, role: str) -> list[dict[str, Any]] | None:
    """A list of codecs (a single codec stands for a list of one, as in zarr's ``create_array``)."""
    if value is None:
        return None
    if isinstance(value, str):
        raise UnsupportedDataError(
            f"{role}: expected zarr codecs or their JSON forms ({{'name': {value!r}, ...}}), got the string {value!r}"
        )
    if isinstance(value, dict) or hasattr(value, "to_dict") or hasattr(value, "get_config"):
        value = [value]
    try:
        items = list(value)
    except TypeError:
        raise UnsupportedDataError(f"{role}: expected a list of zarr codecs, got {value!r}") from None
    return [codec_json(c, role) for c in items]


def _shape(value: Sequence[int] | None, name: str) -> tuple[int, ...] | None:
    if value is None:
        return None
    if (
        isinstance(value, (int, str))
        or not hasattr(value, "__iter__")
        or not all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and v > 0 for v in value)
    ):
        raise UnsupportedDataError(f"{name} must be a tuple of positive integers, got {value!r}")
    return tuple(int(v) for v in value)


def _dimension_names(value: Any) -> list[str | None] | None:
    if value is None:
        return None
    if (
        isinstance(value, str)
        or not hasattr(value, "__iter__")
        or not all(v is None or isinstance(v, str) for v in value)
    ):
        raise UnsupportedDataError(f"dimension_names must be a list of strings (or None), got {value!r}")
    return list(value)


def _fill_value(value: Any) -> Any:
    value = value.item() if isinstance(value, np.generic) else value  # JSON-ready
    if value is not None and not isinstance(value, (bool, int, float, str, dict)):
        raise UnsupportedDataError(
            f"fill_value must be a number, a bool or a string (a dict of them for a compound), got {value!r}"
        )
    return value


def one_fill_value(fill_value: Any, fillvalue: Any) -> Any:
    """The fill value given as ``fill_value`` or as hdmf-zarr's ``fillvalue`` (both only if equal)."""
    if fillvalue is None:
        return fill_value
    both_nan = fill_value != fill_value and fillvalue != fillvalue  # NaN equals nothing, not even itself
    if fill_value is not None and not (fill_value == fillvalue or both_nan):
        raise UnsupportedDataError(
            f"ZarrDataIO: fill_value={fill_value!r} and fillvalue={fillvalue!r} differ; give one of them"
        )
    return fillvalue


def checked_settings(
    chunks: Sequence[int] | None,
    shards: Any,
    compressors: Any,
    filters: Any,
    serializer: Any,
    fill_value: Any,
    dimension_names: Any,
) -> ZarrSettings:
    """The settings a ``ZarrDataIO`` was given, each checked for its type and turned into the form zarr takes
    (``compressors``: ``True``/``None`` the default, ``False``/``[]`` none)."""
    chunk_shape = _shape(chunks, "chunks")
    if isinstance(shards, str) and shards not in (AUTO, POLICY):
        raise UnsupportedDataError(
            f"'shards' must be a shape or 'auto' (or 'policy', the default, or None), got {shards!r}"
        )
    shard_shape = str(shards) if isinstance(shards, str) else _shape(shards, "shards")
    if not isinstance(shard_shape, (str, type(None))) and chunk_shape is not None:  # without: chosen to fit
        if len(chunk_shape) != len(shard_shape) or any(s % c for s, c in zip(shard_shape, chunk_shape)):
            raise UnsupportedDataError(f"shards {shard_shape} must be whole multiples of chunks {chunk_shape}")
    if compressors is True:  # hdmf-zarr: True means the default compressor, False none
        compressors = None
    elif compressors is False:
        compressors = []
    return ZarrSettings(
        chunks=chunk_shape,
        shards=shard_shape,
        compressors=_codecs(compressors, "compressors"),
        filters=_codecs(filters, "filters"),
        serializer=codec_json(serializer, "serializer") if serializer is not None else None,
        fill_value=_fill_value(fill_value),
        dimension_names=_dimension_names(dimension_names),
    )
