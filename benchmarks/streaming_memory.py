"""Benchmark (d): peak memory of a streaming write through NWBZarrIO, in a fresh process.

The source is an ``hdmf.data_utils.GenericDataChunkIterator`` shaped like NeuroConv's recording
iterator: chunks of (78125, 64) int16 (10 MB, its default), a buffer of whole-channel rows, about
``--buffer-mb`` (240 MB for 256: four chunks along time x 384 channels), over a recording several
buffers long (46.6 s = 1.07 GB by default). Its rows repeat a pool of a few generated seconds, so
producing a buffer costs a copy, not a simulation. The child process measures its peak resident
set size: ``VmRSS`` once everything is imported and the source is ready (the baseline), then the
high-water mark ``VmHWM`` after the write, reset to the baseline in between through
``/proc/self/clear_refs``. (``getrusage``'s ``ru_maxrss`` is no use here: Linux carries it over from
the parent across fork and exec.) Peak minus baseline is compared with the target
"<= 2 x buffer + 300 MB". Usage::

    python benchmarks/streaming_memory.py [--seconds 46.6] [--buffer-mb 256]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from _common import GB, fmt, ratio_line, workdir

CHUNKS = (78125, 64)
POOL_SECONDS = 4
MB = 1e6


def _status(key: str) -> int:
    """A ``kB`` field of ``/proc/self/status`` (``VmRSS``, ``VmHWM``) in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(key)


def _reset_peak() -> bool:
    """Reset ``VmHWM`` to the current RSS (Linux >= 4.0; a process may do it to itself)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _child(params: dict[str, Any]) -> dict[str, Any]:
    import numpy as np
    from _common import Timer, fsync_tree, zarr_layout
    from _data import CHANNELS, RATE, ephys_nwbfile, ephys_rows
    from hdmf.data_utils import GenericDataChunkIterator

    from hdmf_zarr3 import NWBZarrIO

    pool = ephys_rows(0, POOL_SECONDS * RATE)
    rows = int(round(params["seconds"] * RATE))

    def source(start: int, stop: int) -> np.ndarray:
        index = np.arange(start, stop) % len(pool)
        return pool[index]

    class Recording(GenericDataChunkIterator):
        def _get_data(self, selection: tuple[slice, ...]) -> np.ndarray:
            return source(selection[0].start, selection[0].stop)[:, selection[1]]

        def _get_maxshape(self) -> tuple[int, int]:
            return (rows, CHANNELS)

        def _get_dtype(self) -> np.dtype:
            return np.dtype(np.int16)

    k = max(1, round(params["buffer_mb"] * MB / (CHUNKS[0] * CHANNELS * 2)))

    def recording() -> Recording:
        return Recording(chunk_shape=CHUNKS, buffer_shape=(min(rows, k * CHUNKS[0]), CHANNELS))

    iterator = recording()
    buffer_bytes = int(np.prod(iterator.buffer_shape)) * 2
    nwb = ephys_nwbfile(iterator)
    baseline = _status("VmRSS")
    reset = _reset_peak()
    with Timer() as t:
        with NWBZarrIO(params["path"], mode="w") as io:
            io.write(nwb)
        fsync_tree(params["path"])
    peak = _status("VmHWM")
    base = _status("VmRSS")  # control: the source alone, drained without writing
    _reset_peak()
    for _ in recording():
        pass
    source_alone = _status("VmHWM") - base
    with NWBZarrIO(params["path"], mode="r") as io:
        data = io.read().acquisition["ephys"].data
        probe = slice(max(0, iterator.buffer_shape[0] - 1000), min(rows, iterator.buffer_shape[0] + 1000))
        correct = tuple(data.shape) == (rows, CHANNELS) and bool(
            np.array_equal(data[probe], source(probe.start, probe.stop))
        )
    return {
        "rows": rows,
        "bytes": rows * CHANNELS * 2,
        "buffer_shape": list(iterator.buffer_shape),
        "chunk_shape": list(iterator.chunk_shape),
        "buffer_bytes": buffer_bytes,
        "baseline": baseline,
        "peak": peak,
        "extra": peak - baseline,
        "peak_reset": reset,
        "source_alone": source_alone,
        "write": t.seconds,
        "correct": correct,
        "layout": zarr_layout(Path(params["path"]) / "acquisition" / "ephys" / "data"),
    }


def run(seconds: float = 46.6, buffer_mb: float = 256.0, timeout: float = 600.0) -> dict[str, Any]:
    """Stream-write ``seconds`` of ephys in a fresh process; return its memory and time."""
    with workdir() as tmp:
        params = {"seconds": seconds, "buffer_mb": buffer_mb, "path": str(tmp / "stream.nwb.zarr")}
        proc = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(params)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    if proc.returncode != 0:
        tail = "\n  ".join(proc.stderr.strip().splitlines()[-8:])
        print(f"  streaming child failed (exit {proc.returncode}):\n  {tail}")
        return {"failed": True}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def report(r: dict[str, Any]) -> None:
    """Print the measurements of one :func:`run` against the target."""
    if r.get("failed"):
        print("  n/a")
        return
    buf, extra = r["buffer_bytes"], r["extra"]
    target = 2 * buf + 300 * MB
    print(
        f"  {r['bytes'] / GB:.2f} GB streamed ({r['rows']} x 384 int16) from a GenericDataChunkIterator, "
        f"chunks {tuple(r['chunk_shape'])}, buffer {tuple(r['buffer_shape'])} = {buf / MB:.0f} MB "
        f"({r['bytes'] / buf:.1f} buffers)"
    )
    print(f"  written as {r['layout']}")
    check = "ok" if r["correct"] else "WRONG"
    print(f"  write {r['write']:.1f} s ({r['bytes'] / GB / r['write']:.3f} GB/s), data read back {check}")
    since = "the baseline" if r.get("peak_reset") else "start (could not reset VmHWM)"
    print(
        f"  peak RSS {r['peak'] / MB:.0f} MB since {since}; baseline (imports, source ready) "
        f"{r['baseline'] / MB:.0f} MB: "
        f"peak - baseline = {extra / MB:.0f} MB = {extra / buf:.2f} x buffer"
    )
    print(
        f"  control: draining the same iterator without writing peaks at {r['source_alone'] / MB:.0f} MB "
        "over its baseline"
    )
    ok = "OK" if extra <= target else "MISS"
    print(
        f"  {'peak - baseline vs 2 x buffer + 300 MB:':<46}{fmt(extra / MB, '.0f')} MB  "
        f"(target <={target / MB:.0f} MB)  {ok}"
    )
    print(ratio_line("peak - baseline / buffer", extra / buf))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=46.6, help="recording length (46.6 s = 1.07 GB)")
    parser.add_argument("--buffer-mb", type=float, default=256.0, help="iterator buffer, rounded to whole chunks")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(json.loads(args.child))))
        return
    print("(d) streaming write peak memory")
    report(run(args.seconds, args.buffer_mb))


if __name__ == "__main__":
    main()
