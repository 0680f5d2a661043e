"""This package's own convention (specified in ``docs/storage.md``); the reader's model as it is."""

from __future__ import annotations

from typing import Any

from ...errors import FormatVersionError
from ..vocabulary import DTYPE_ATTR, FORMAT_ATTR, LINK_ATTR, READABLE_MAJOR_VERSIONS, parse_version
from .base import Dialect

_FOREIGN_MARKERS = ("_DTYPE", "_LINKS", "_REFERENCE_FIELDS")


class NativeDialect(Dialect):
    name = "hdmf_zarr3"

    @classmethod
    def recognises(cls, raw: dict[str, dict[str, Any]]) -> bool:
        root = raw["/"]
        if root.get("zarr_format") != 3:
            return False
        if FORMAT_ATTR in root.get("attributes", {}):
            return True
        # files without the version attribute: ours if they use our reserved names, or an empty group
        attrs = [doc.get("attributes", {}) for doc in raw.values()]
        if any(marker in a for a in attrs for marker in _FOREIGN_MARKERS):
            return False
        return any(DTYPE_ATTR in a or LINK_ATTR in a for a in attrs) or (len(raw) == 1 and not attrs[0])

    def translate(self, raw: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        version = raw.get("/", {}).get("attributes", {}).get(FORMAT_ATTR)
        if version is not None and parse_version(version)[0] not in READABLE_MAJOR_VERSIONS:
            raise FormatVersionError(
                f"written with hdmf_zarr3 format version {version}; this hdmf_zarr3 reads "
                f"{', '.join(f'{major}.x' for major in sorted(READABLE_MAJOR_VERSIONS))}: upgrade hdmf_zarr3",
                "/",
            )
        return raw
