"""Helpers shared by the benchmark parts: timing, disk usage, page-cache eviction, targets, printing.

Imports only the standard library and numpy, so the hdmf-zarr 0.14 scratch venv loads it too.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

GB = 1e9

#: Targets from issues #4 and #19: (comparison, ">=" or "<=", bound). Ratios without an entry print "-".
#: Most ratios are other/ours (">=": ours at least that much faster); the append ratios are ours/HDF5.
TARGETS: dict[str, tuple[str, float]] = {
    "write vs HDF5 gzip": (">=", 30.0),
    "write vs codec 2-thread rate": (">=", 0.6),
    "write until close vs codec 2-thread rate": (">=", 0.6),
    "latency read+tables hdmf-zarr/ours": (">=", 10.0),
    # issue #19, point 5: bulk (writes until close, i.e. into the page cache; windows: time of ours / HDF5's)
    "write until close vs HDF5 gzip": (">=", 20.0),
    "write until close vs hdmf-zarr 0.14": (">=", 5.0),
    "full read vs HDF5 gzip": (">=", 8.0),
    "1 s window ours/HDF5 contiguous": ("<=", 1.5),
    # issue #19, point 1: many small objects
    "write HDF5/ours": (">=", 1.2),
    "read+tables HDF5/ours": (">=", 3.0),
    # issue #19: these ratios are ours/HDF5 (time of ours over time of HDF5), so the bound is a maximum
    "append loop ours/HDF5": ("<=", 1.5),
    "append per open ours/HDF5": ("<=", 1.5),
    "append samples ours/HDF5": ("<=", 1.5),
    # issue #20: virtual copies of HDF5 files (ours/other: the bound is a maximum)
    "virtual time / full convert": ("<=", 0.05),
    "virtual bytes / full convert": ("<=", 0.01),
    "virtual window ours/h5py": ("<=", 1.5),
    "virtual channel ours/h5py": ("<=", 1.5),
    "virtual remote window ours/h5py": ("<=", 1.5),
    "virtual remote channel ours/h5py": ("<=", 1.5),
}


class Timer:
    """Context manager measuring wall time in seconds (``.seconds``)."""

    def __enter__(self) -> Timer:
        self.start = time.perf_counter()
        self.seconds = float("nan")
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.start


def quiet() -> None:
    """Silence what every round would repeat and nothing here measures: HDMF's warnings about the richer
    file's own content (dtype conversions, a table region without a shared ancestor) and icechunk's
    warning that local storage is unsafe for concurrent commits (one commit here); ``ICECHUNK_LOG`` set
    by the user keeps icechunk's."""
    import warnings

    from hdmf.build.warnings import DtypeConversionWarning

    warnings.filterwarnings("ignore", category=DtypeConversionWarning)
    warnings.filterwarnings("ignore", message="The linked table for DynamicTableRegion")
    if "ICECHUNK_LOG" not in os.environ:
        try:
            import icechunk
        except ImportError:
            return
        icechunk.set_logs_filter("error")


def files(path: str | Path) -> Iterator[Path]:
    """Every regular file at or below ``path``."""
    path = Path(path)
    if path.is_file():
        yield path
        return
    for root, _, names in os.walk(path):
        for name in names:
            yield Path(root) / name


def fsync_tree(path: str | Path) -> None:
    """Flush every file of a store (or one file) to disk, so write times include the disk."""
    for f in files(path):
        fd = os.open(f, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def evict_tree(path: str | Path) -> None:
    """Drop the (clean) page-cache pages of every file below ``path``; needs no root.

    ``posix_fadvise(DONTNEED)`` evicts from this machine's page cache only: a hypervisor or disk
    cache below it may still serve the bytes, so "cold" reads here are a lower bound on cold cost.
    """
    for f in files(path):
        fd = os.open(f, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def du(path: str | Path) -> int:
    """Bytes allocated on disk by ``path`` (like ``du -s --block-size=1``)."""
    return sum(f.stat().st_blocks * 512 for f in files(path))


@contextlib.contextmanager
def workdir(prefix: str = "hdmf_zarr3_bench_", keep: str | None = None) -> Iterator[Path]:
    """A temporary directory removed afterwards (``keep``: use this directory and leave it)."""
    if keep:
        path = Path(keep)
        path.mkdir(parents=True, exist_ok=True)
        yield path
        return
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def ratio(a: float | None, b: float | None) -> float | None:
    """``a / b``, or ``None`` when either is missing or ``b`` is zero."""
    if a is None or b is None or b == 0 or a != a or b != b:
        return None
    return a / b


def fmt(value: float | None, spec: str = ".2f", missing: str = "n/a") -> str:
    """``value`` formatted with ``spec``; ``missing`` for ``None``."""
    return missing if value is None else format(value, spec)


def verdict(name: str, value: float | None, lower_bound: bool = False) -> tuple[str, str]:
    """The target text and OK/MISS for the ratio ``name`` (``lower_bound``: ``value`` is a minimum)."""
    if name not in TARGETS:
        return "", ""
    op, bound = TARGETS[name]
    target = f"(target {op}{bound:g}x)"
    if value is None:
        return target, "n/a"
    if op == ">=":
        return target, "OK" if value >= bound else ("MISS?" if lower_bound else "MISS")
    return target, "OK" if value <= bound else "MISS"


def ratio_line(name: str, value: float | None, note: str = "", lower_bound: bool = False) -> str:
    """One printed ratio, e.g. ``write vs HDF5 gzip: 35.2x (target >=30x)  OK``."""
    target, ok = verdict(name, value, lower_bound)
    shown = "n/a" if value is None else (">" if lower_bound else "") + f"{value:.2f}x"
    text = f"  {name + ':':<44}{shown:>10}  {target:<16}{ok:<5}"
    return (text + ("  " + note if note else "")).rstrip()


def spread(values: list[float] | None) -> tuple[float, float, float] | None:
    """``(median, min, max)`` of ``values`` (a series of rounds), or ``None`` when there are none."""
    values = [v for v in values or [] if v is not None and v == v]
    if not values:
        return None
    return statistics.median(values), min(values), max(values)


def fmt_spread(values: list[float] | None, spec: str = ".2f") -> str:
    """``median [min–max]`` of a series, e.g. ``1.31 [1.22–1.58]``."""
    found = spread(values)
    if found is None:
        return "n/a"
    median, low, high = found
    return f"{median:{spec}} [{low:{spec}}–{high:{spec}}]"


def spread_line(name: str, ratios: list[float] | None, note: str = "") -> str:
    """One ratio as a user meets it: the median of rounds (checked against its target), min–max beside it."""
    found = spread(ratios)
    median = None if found is None else found[0]
    target, ok = verdict(name, median)
    shown = "n/a" if found is None else f"{found[0]:.2f}x [{found[1]:.2f}–{found[2]:.2f}]"
    text = f"  {name + ':':<44}{shown:>20}  {target:<16}{ok:<5}"
    return (text + ("  " + note if note else "")).rstrip()


def table(header: list[str], rows: list[list[str]]) -> str:
    """A plain text table: first column left-aligned, the others right-aligned."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = []
    for r in [header, *rows]:
        cells = [str(r[0]).ljust(widths[0])] + [str(c).rjust(w) for c, w in zip(r[1:], widths[1:])]
        lines.append("  " + "  ".join(cells))
    return "\n".join(lines)


def zarr_layout(path: str | Path) -> str:
    """Chunk grid, shards and codecs of the zarr v3 array at ``path``, from its zarr.json."""
    import json

    doc = json.loads((Path(path) / "zarr.json").read_text())
    outer = doc["chunk_grid"]["configuration"]["chunk_shape"]
    codecs = doc["codecs"]

    def names(chain: list[dict]) -> list[str]:
        out = []
        for c in chain:
            conf = c.get("configuration") or {}
            out.append(
                "-".join(
                    str(x)
                    for x in (c["name"], conf.get("cname"), conf.get("shuffle"), conf.get("clevel"))
                    if x is not None
                )
                if c["name"] == "blosc"
                else c["name"]
            )
        return out

    if codecs and codecs[0]["name"] == "sharding_indexed":
        inner = codecs[0]["configuration"]
        return f"shards {tuple(outer)}, chunks {tuple(inner['chunk_shape'])}, codecs {names(inner['codecs'])}"
    return f"chunks {tuple(outer)}, codecs {names(codecs)}"
