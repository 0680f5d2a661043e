"""Dialects: the conventions other HDMF writers used, mapped onto this package's own model.

Three conventions store HDMF files in Zarr:

=====================  ==========  ==================================================================
dialect                Zarr        recognised by
=====================  ==========  ==================================================================
``hdmf_zarr3``         v3          root attribute ``hdmf_zarr3_format`` (this package; :mod:`.native`)
``hdmf-zarr 0.14``     v3          ``_DTYPE`` / ``_LINKS`` / ``_REFERENCE`` attributes (:mod:`.hdmf_zarr_v3`)
``hdmf-zarr ≤0.13``    v2          ``.zgroup`` at the root, ``zarr_dtype`` attributes (:mod:`.hdmf_zarr_v2`)
=====================  ==========  ==================================================================

A dialect is pure code: given the node documents of a store (``zarr.json`` documents, or the v2
documents of :mod:`hdmf_zarr3.storage.stores.v2`) it yields

- the same documents with their *attributes* rewritten into this package's convention (typed
  attribute envelopes, ``zarr_link`` link records, reference records whose ``source`` is relative
  to the directory holding the file), which the shared reader then reads;
- for every array, an :class:`ArrayLayout`: the HDMF dtype and how elements are stored;
- the decoding of one stored reference element or compound row into :class:`Reference` values.

:func:`detect` picks the dialect of a store, or raises a :class:`DialectError` saying what the store
is and what to do with it.
"""

from __future__ import annotations

from typing import Any

from ...errors import DialectError
from . import hdmf_zarr_v2, hdmf_zarr_v3, native
from .base import ArrayLayout, Convention, Dialect, HdmfZarrDialect, relative_to_parent
from .hdmf_zarr_v2 import OBJECT_CODECS, filter_ids, numpy_dtype
from .native import NativeDialect

__all__ = [
    "ArrayLayout",
    "Convention",
    "Dialect",
    "HdmfZarrDialect",
    "NativeDialect",
    "OBJECT_CODECS",
    "convention",
    "detect",
    "filter_ids",
    "numpy_dtype",
    "relative_to_parent",
]


def detect(raw: dict[str, dict[str, Any]], store_name: str | None = None, location: str | None = None) -> Dialect:
    """The dialect of a store from its node documents.

    Raises
    ------
    DialectError
        For a store that is Zarr but not an HDMF file in any known convention.
    FormatVersionError
        For a file of this package's format written by a newer, incompatible version.
    """
    what = f"{location} is a" if location else "this is a"
    root = raw.get("/")
    if root is None:
        raise DialectError(f"{what} store with no Zarr group at its root (no zarr.json, .zgroup or .zmetadata)", "/")
    version = root.get("zarr_format")
    if root.get("node_type") != "group":
        raise DialectError(
            f"{what} Zarr v{version} array, not a group: plain Zarr data, not an HDMF/NWB file; "
            "open it with zarr.open_array()",
            "/",
        )
    for dialect in (native.NativeDialect, hdmf_zarr_v3.HdmfZarrV3Dialect, hdmf_zarr_v2.HdmfZarrV2Dialect):
        if dialect.recognises(raw):
            return dialect(raw, store_name)
    raise DialectError(
        f"{what} Zarr v{version} store but not an HDMF/NWB file: none of its nodes carries the attributes "
        "HDMF backends write (hdmf_zarr3_format, zarr_dtype/zarr_link of hdmf-zarr <=0.13, _DTYPE/_LINKS of "
        "hdmf-zarr 0.14); open it with zarr.open_group(), or write it with an HDMF backend first",
        "/",
    )


def convention(name: str | None) -> Convention:
    """The write convention called ``name`` (``"hdmf_zarr3"``, the default, or ``"hdmf-zarr"``)."""
    if name in (None, "hdmf_zarr3", "hdmf-zarr3"):
        return Convention()
    if name in ("hdmf-zarr", "hdmf_zarr", "hdmf-zarr 0.14", "hdmf-zarr-0.14"):
        return hdmf_zarr_v3.HdmfZarrV3Convention()
    raise ValueError(
        f"unknown convention {name!r}: use 'hdmf_zarr3' (this package's) or 'hdmf-zarr' (read by hdmf-zarr 0.14)"
    )
