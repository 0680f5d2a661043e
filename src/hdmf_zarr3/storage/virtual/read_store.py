"""The store a virtual repository is read through: icechunk's, its refusals to read a virtual chunk raised as
our typed errors (:func:`translate`), the sizes of its objects asked of icechunk (never read whole)."""

from __future__ import annotations

from typing import Any

from zarr.storage import WrapperStore

from ...errors import SourceChangedError
from ..stores import wrapped_store


class VirtualReadStore(WrapperStore[Any]):
    """An icechunk store whose refusals to read a virtual chunk raise our typed errors (:func:`translate`)."""

    async def get(self, key: str, prototype: Any, byte_range: Any = None) -> Any:
        try:
            return await wrapped_store(self).get(key, prototype, byte_range)
        except Exception as exc:
            ours = translate(exc, key)
            if ours is exc:
                raise
            raise ours from exc

    async def get_partial_values(self, prototype: Any, key_ranges: Any) -> Any:
        try:
            return await wrapped_store(self).get_partial_values(prototype, key_ranges)
        except Exception as exc:
            ours = translate(exc, "/")
            if ours is exc:
                raise
            raise ours from exc

    # (zarr's Store answers these by reading every object whole: for a virtual chunk, the source file's bytes)
    async def getsize(self, key: str) -> int:
        return await wrapped_store(self).getsize(key)

    async def getsize_prefix(self, prefix: str) -> int:
        return await wrapped_store(self).getsize_prefix(prefix)


def translate(exc: BaseException, path: str) -> BaseException:
    """Our error for icechunk's refusal to read a virtual chunk (``exc`` itself for anything else)."""
    text = str(exc)
    if "checksum of the object owning the virtual chunk has changed" in text:
        where = text.split("changed (", 1)[-1].split(")", 1)[0]
        return SourceChangedError(
            f"the file holding this array's bytes changed since the repository was made ({where}); "
            "make the repository again from the file as it is now",
            path,
        )
    if "error fetching virtual reference" in text:
        first = text.strip().splitlines()[0]
        return SourceChangedError(
            f"the file holding this array's bytes is gone or cannot be read ({first[:300]})", path
        )
    if "authorize the virtual chunk container" in text or "no virtual chunk container can handle" in text:
        return SourceChangedError(
            "this array's bytes are in a location that was not allowed (a repository reads virtual chunks "
            "from its own directory and the external_roots given: local directories, s3:// or http(s):// "
            "prefixes)",
            path,
        )
    return exc
