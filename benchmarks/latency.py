"""Benchmark (c): open + ``read()`` + every table of the part-(b) file through a store with latency.

Every store request (get, get_partial_values, exists, list*, set, ...) waits ``--latency`` seconds
(``asyncio.sleep``, so concurrent requests overlap, as against an object store); requests are
counted. hdmf-zarr 0.14 accepts any ``zarr.abc.store.Store`` as its path, so it reads its own file
through the same wrapper, in its venv, killed after ``--rival-timeout`` seconds (then reported as
">X s"). NWBHDF5IO has no store interface and is not part of this part. Usage::

    python benchmarks/latency.py [--latency 0.02] [--rival-timeout 150] [--series 500] ...
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import _rival
from _common import fmt, ratio, ratio_line, table, workdir
from _measure import latency_read


def run(
    paths: dict[str, str], latency: float = 0.02, rival_timeout: float = 150.0, rival: bool = True
) -> dict[str, Any]:
    """Read the (b) files ``paths["ours"]`` and ``paths["hdmf-zarr 0.14"]`` through the latency store."""
    from hdmf_zarr3 import NWBZarrIO

    out: dict[str, Any] = {"latency": latency, "rival_timeout": rival_timeout, "backends": {}}
    out["backends"]["ours"] = latency_read(NWBZarrIO, paths["ours"], latency)
    res = None
    if rival and Path(paths.get("hdmf-zarr 0.14", "")).exists():
        res = _rival.call("latency", {"path": paths["hdmf-zarr 0.14"], "latency": latency}, timeout=rival_timeout)
    out["backends"]["hdmf-zarr 0.14"] = res or {}
    return out


def _requests(counts: dict[str, int] | None) -> str:
    if not counts:
        return "n/a"
    return f"{sum(counts.values())} (" + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + ")"


def report(r: dict[str, Any]) -> None:
    """Print the table and the ratios of one :func:`run`."""
    b = r["backends"]
    cap = r["rival_timeout"]
    rows = []
    shown: dict[str, dict[str, str]] = {}
    for name in ("ours", "hdmf-zarr 0.14"):
        res = b[name]
        cells = {}
        for step in ("read", "read+tables"):
            if step not in res and res.get("timed_out"):
                cells[step] = f">{cap:.0f}"
            else:
                cells[step] = fmt(res.get(step))
        shown[name] = cells
        rows.append(
            [
                name,
                cells["read"],
                cells["read+tables"],
                fmt(res.get("rows"), "d"),
                _requests(res.get("read_requests")),
                _requests(res.get("requests"))
                if "requests" in res
                else ("(killed)" if res.get("timed_out") else "n/a"),
            ]
        )
    print(f"  {r['latency'] * 1e3:.0f} ms per store request; hdmf-zarr killed after {cap:.0f} s")
    print(table(["backend", "read s", "read+tables s", "rows", "requests by read()", "requests in all"], rows))
    print("  ratios (time of hdmf-zarr / time of ours; '>' = hdmf-zarr was killed, a lower bound):")
    ours, rival = b["ours"], b["hdmf-zarr 0.14"]
    for step in ("read", "read+tables"):
        value, bound = ratio(rival.get(step), ours.get(step)), False
        if value is None and rival.get("timed_out"):
            value, bound = ratio(cap, ours.get(step)), True
        print(ratio_line(f"latency {step} hdmf-zarr/ours", value, lower_bound=bound))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.02, help="seconds added to every store request")
    parser.add_argument("--rival-timeout", type=float, default=150.0, help="kill hdmf-zarr after this many seconds")
    parser.add_argument("--series", type=int, default=500)
    parser.add_argument("--units", type=int, default=1000)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--no-rival", action="store_true", help="skip hdmf-zarr 0.14")
    args = parser.parse_args()
    import many_small_objects

    with workdir() as work:
        print("(b) many small objects (builds the files read here)")
        small = many_small_objects.run(work, args.series, args.units, args.trials, rival=not args.no_rival)
        many_small_objects.report(small)
        print(f"(c) latency store ({args.latency * 1e3:.0f} ms per request)")
        report(run(small["paths"], args.latency, args.rival_timeout, not args.no_rival))


if __name__ == "__main__":
    main()
