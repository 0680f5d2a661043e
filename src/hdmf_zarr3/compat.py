"""Bridges for places where HDMF dispatches on concrete array types.

``hdmf.data_utils.extend_data`` (used by ``VectorData.extend``, e.g. when a row with a ragged value
is added to a table read from a file) knows lists, numpy arrays, ``DataIO`` and ``h5py.Dataset`` but
not other lazy datasets, so extending a table read from Zarr would fail. We wrap it so that our own
lazy datasets extend in place, and leave every other type to HDMF's original function.
"""

from __future__ import annotations

from typing import Any

import hdmf.container
import hdmf.data_utils

_ORIGINAL = getattr(hdmf.data_utils.extend_data, "__wrapped__", hdmf.data_utils.extend_data)


def extend_data(data: Any, arg: Any) -> Any:
    from .datasets import ZarrDataset

    if isinstance(data, ZarrDataset):
        data.extend(arg)
        return data
    return _ORIGINAL(data, arg)


extend_data.__wrapped__ = _ORIGINAL  # type: ignore[attr-defined]


def install() -> None:
    """Route ``extend_data`` through :func:`extend_data` (idempotent)."""
    hdmf.data_utils.extend_data = extend_data
    hdmf.container.extend_data = extend_data
