"""Refusing a write whose destination is its own source (a conversion, an export), before anything is opened.

Used by :func:`hdmf_zarr3.convert` and :meth:`ZarrIO.export <hdmf_zarr3.ZarrIO.export>`: both read one file
while writing another, and a destination that is the source, lies inside it or contains it would be
destroyed (or replaced) before it is read.
"""

from __future__ import annotations

import os
from typing import Any

from ...errors import SelfOverwriteError
from ..stores import locations, store_location


def refuse_self_overwrite(src: Any, dst: Any) -> None:
    """Refuse a destination that is the source, lies inside it or contains it (writing it would destroy
    the source before it is read), before anything is opened.

    Parameters
    ----------
    src, dst : str, os.PathLike or zarr Store
        Where the data is read from and where it would be written.

    Raises
    ------
    SelfOverwriteError
        ``dst`` is ``src``, lies inside it or contains it.
    """
    if src is dst:
        raise SelfOverwriteError("the destination is the source", _describe(dst))
    a, b = _location(src), _location(dst)
    how = locations.overlap(b, a) if a is not None and b is not None else None
    if how is not None:
        what = {"same": "is the source", "inside": "lies inside the source", "contains": "contains the source"}[how]
        raise SelfOverwriteError(
            f"the destination {what} ({_describe(src)}); writing it would destroy the data "
            "being converted: choose another destination",
            _describe(dst),
        )


def _location(where: Any) -> str | None:
    if isinstance(where, (str, os.PathLike)):
        return os.fspath(where)
    return store_location(where) if where is not None else None


def _describe(where: Any) -> str:
    return os.fspath(where) if isinstance(where, (str, os.PathLike)) else repr(where)
