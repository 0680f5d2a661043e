"""Ours against ours at an earlier revision, in one run: a restructuring must not make anything slower.

The package at ``--base`` (a git revision) is extracted with ``git archive`` into a temporary folder and
imported from there by child processes; the working tree's ``src/`` is the other side. Each round runs
both sides one after the other, in alternating order, and every figure is the best of ``--rounds``
rounds (the least disturbed by other work on the machine). Measured: the many-small-objects file
(write, ``read()``, ``read()`` + every table) and a bulk ephys recording (write with fsync, full read),
reads from a hot page cache. Usage::

    python benchmarks/revisions.py --base 952cf41 [--rounds 3] [--series 200] [--seconds 10]

Prints each time and ``base / now`` (>1: now is faster); "OK" when now is at most 10 % slower.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import fmt, table

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
STEPS = ("small write", "small read", "small read+tables", "bulk write", "bulk read")
#: ``now`` may be this much slower than ``base`` before a step counts as a regression (timing noise).
TOLERANCE = 1.10


def extract(revision: str, into: Path) -> Path:
    """The ``src/`` folder of ``revision``, extracted under ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", revision, "src"], capture_output=True, check=True
    ).stdout
    tar_path = into / "src.tar"
    tar_path.write_bytes(archive)
    with tarfile.open(tar_path) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def child(work: Path, series: int, seconds: float) -> dict[str, Any]:
    """One measurement of every step, with whichever ``hdmf_zarr3`` is on ``sys.path``."""
    from _data import ephys, ephys_nwbfile, many_small
    from _measure import ephys_write, small_write_read

    import hdmf_zarr3
    from hdmf_zarr3 import NWBZarrIO

    small = small_write_read(NWBZarrIO, many_small(series, 2 * series, series // 2), work / "small.nwb.zarr", False)
    data = ephys(seconds)
    bulk = ephys_write(NWBZarrIO, ephys_nwbfile(data), work / "bulk.nwb.zarr")
    start = time.perf_counter()
    with NWBZarrIO(str(work / "bulk.nwb.zarr"), mode="r") as io:
        back = io.read().acquisition["ephys"].data[:]
    bulk_read = time.perf_counter() - start
    assert back.shape == data.shape
    return {
        "package": hdmf_zarr3.__file__,
        "small write": small["write"],
        "small read": small["read"],
        "small read+tables": small["read+tables"],
        "bulk write": bulk["write"],
        "bulk read": bulk_read,
    }


def measure(src: Path, series: int, seconds: float) -> dict[str, float]:
    """Run :func:`child` in a fresh interpreter importing the package from ``src``."""
    with tempfile.TemporaryDirectory(prefix="hdmf_zarr3_rev_") as work:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(HERE)])}
        code = (
            "import json, sys; from pathlib import Path; import revisions; "
            f"print(json.dumps(revisions.child(Path({work!r}), {series}, {seconds})))"
        )
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=HERE)
        if out.returncode != 0:
            sys.exit(f"measuring {src} failed:\n{out.stderr}")
        result = json.loads(out.stdout.strip().splitlines()[-1])
        if not Path(result.pop("package")).is_relative_to(src):
            sys.exit(f"the child imported hdmf_zarr3 from elsewhere than {src}")
        return result


def run(base: str, rounds: int, series: int, seconds: float) -> dict[str, dict[str, float]]:
    """Best time of every step for ``base`` and for the working tree."""
    best: dict[str, dict[str, float]] = {"base": {}, "now": {}}
    with tempfile.TemporaryDirectory(prefix="hdmf_zarr3_base_") as tmp:
        sides = {"base": extract(base, Path(tmp)), "now": ROOT / "src"}
        for i in range(rounds):
            for side in ("base", "now") if i % 2 == 0 else ("now", "base"):
                for step, value in measure(sides[side], series, seconds).items():
                    best[side][step] = min(value, best[side].get(step, float("inf")))
    return best


def report(best: dict[str, dict[str, float]], base: str) -> bool:
    """Print the table; ``True`` when no step is slower than :data:`TOLERANCE` allows."""
    rows, fine = [], True
    for step in STEPS:
        then, now = best["base"][step], best["now"][step]
        ok = then / now >= 1 / TOLERANCE
        fine &= ok
        rows.append([step, fmt(then, ".3f"), fmt(now, ".3f"), fmt(then / now) + "x", "OK" if ok else "SLOWER"])
    print(f"  base = {base}, now = working tree; best of each; ratio = base / now (>1: now faster)")
    print(table(["step", "base s", "now s", "ratio", ""], rows))
    return fine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="git revision to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--series", type=int, default=200, help="TimeSeries of the small file (units: twice)")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of the bulk recording")
    args = parser.parse_args()
    best: Any = run(args.base, args.rounds, args.series, args.seconds)
    sys.exit(0 if report(best, args.base) else 1)


if __name__ == "__main__":
    main()
