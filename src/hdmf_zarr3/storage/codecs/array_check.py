"""Check storage settings a caller chose (``ZarrDataIO``, a conversion's ``--codec``) against the data
type, with zarr's own parser, before anything is written.

The writer stores documents without zarr reading them back, so a setting zarr cannot use (a fill value
the data type cannot hold, an unknown codec option, a transpose order of the wrong rank, the ``bytes``
serializer for strings) would be written, and no Zarr reader could then open the array. Here zarr
parses the document the writer would store; anything it refuses is an :class:`UnsupportedDataError`
naming the dataset. Codecs come back as zarr-python records them when it creates an array (every
option filled in, tuned to the data type), so the stored document is complete for any reader.
Nothing here touches a store; the module sits in ``storage`` rather than ``format`` because it runs zarr's
own engine (its data type registry, and its metadata parser through :mod:`.zarr_adapter`), which the pure
format rules do not.
"""

from __future__ import annotations

import json
import math
import warnings
from typing import Any

import numpy as np
from zarr.dtype import data_type_registry

from ...errors import UnsupportedDataError
from ...format.vocabulary import StorageType
from ..stores import array_metadata_as_zarr_writes_it


def fill_value_json(value: Any, storage: StorageType, where: str | None) -> Any:
    """``value`` as the ``fill_value`` of an array of ``storage``, in its canonical JSON form (NaN as
    ``"NaN"``), or :class:`UnsupportedDataError` if the data type cannot hold it.

    Stricter than zarr where zarr converts silently: a string array's fill is a string, a boolean's a
    bool, and a finite number must stay finite (``1e10`` overflows ``float16``).
    """
    value = value.item() if isinstance(value, np.generic) else value

    def refuse(reason: str) -> UnsupportedDataError:
        return UnsupportedDataError(
            f"fill_value {value!r} does not fit the {_type_name(storage)} data: {reason}", where
        )

    if storage.kind != "numeric" and storage.kind != "struct" and not isinstance(value, str):
        raise refuse("a string is needed")
    if storage.data_type == "bool" and not isinstance(value, bool):
        raise refuse("True or False is needed")
    zdtype = data_type_registry.match_json(storage.data_type, zarr_format=3)
    try:
        with np.errstate(over="ignore", invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scalar = zdtype.from_json_scalar(value, zarr_format=3)
            stored = json.loads(json.dumps(zdtype.to_json_scalar(scalar, zarr_format=3), default=str))
    except (TypeError, ValueError, OverflowError) as exc:
        raise refuse(str(exc)) from None
    if (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and isinstance(stored, str)
    ):
        raise refuse(f"it is out of range (stored as {stored})")
    return stored


def zarr_codecs(doc: dict[str, Any], where: str | None) -> list[dict[str, Any]]:
    """The codecs of the array document ``doc`` as zarr records them, once zarr has parsed the whole
    document (an :class:`UnsupportedDataError` naming ``where`` if it refuses any of it)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a document zarr would only read "repaired" is refused too
            metadata = array_metadata_as_zarr_writes_it(json.loads(json.dumps(doc)))
        codecs: Any = metadata["codecs"]  # zarr types it as any JSON: a list of dicts and codecs
    except Exception as exc:  # zarr raises TypeError, ValueError, KeyError, warnings... for bad settings
        message = str(exc).strip() or type(exc).__name__
        raise UnsupportedDataError(f"zarr cannot store this array with these settings: {message}", where) from None
    # zarr's dicts hold enums (blosc's shuffle): plain JSON values, as they are stored
    return json.loads(json.dumps([c if isinstance(c, dict) else c.to_dict() for c in codecs], default=_plain))


def _plain(value: Any) -> Any:
    return getattr(value, "value", str(value))


def _type_name(storage: StorageType) -> str:
    return storage.data_type if isinstance(storage.data_type, str) else storage.data_type.get("name", "struct")
