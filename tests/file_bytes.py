"""What a file holds, byte for byte, and how long the small file's series is (the trust tests' checks)."""

from __future__ import annotations

from pathlib import Path

from hdmf_zarr3 import NWBZarrIO


def files(path: Path) -> dict[str, bytes]:
    """Every file of a directory store (relative path: bytes), or a single file's bytes under ``""``."""
    if path.is_file():
        return {"": path.read_bytes()}
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def series_length(path: Path, **kwargs) -> int:
    """How many samples the small file's TimeSeries ``ts`` holds, read back."""
    with NWBZarrIO(path, mode="r", **kwargs) as io:
        return len(io.read().acquisition["ts"].data)
