"""Benchmark (c): open + ``read()`` + every table of the part-(b) file through a store with latency.

Every store request (get, get_partial_values, exists, list*, set, ...) waits ``--latency`` seconds
(``asyncio.sleep``, so concurrent requests overlap, as against an object store); requests are
counted, and so are *rounds* (a round starts when a request starts while none is in flight: requests
sent together share one; the time waiting is about rounds x latency). hdmf-zarr 0.14 accepts any
``zarr.abc.store.Store`` as its path, so it reads its own file through the same wrapper, in its venv,
killed after ``--rival-timeout`` seconds (then reported as ">X s"). NWBHDF5IO reads the part-(b) HDF5
file over HTTP range requests (h5py on fsspec's ``HTTPFileSystem``) from a server on 127.0.0.1 that
adds the same latency to every request (:mod:`_http_range`). The target, issue #19: ours' ``read()``
through the latency store costs at most its local ``read()`` + 0.3 s. Usage::

    python benchmarks/latency.py [--latency 0.02] [--rival-timeout 150] [--series 500] ...
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import _rival
from _common import fmt, ratio, ratio_line, table, workdir
from _measure import http_hdf5_read, latency_read

#: Issue #19: open + ``read()`` with 20 ms per request costs at most the local ``read()`` plus this.
TARGET_EXTRA_SECONDS = 0.3
#: Ours is read this many times each way and the best times kept (a shared machine is noisy; a read
#: takes under a second). hdmf-zarr and NWBHDF5IO over HTTP are read once.
REPEAT = 3


def run(
    paths: dict[str, str], latency: float = 0.02, rival_timeout: float = 150.0, rival: bool = True
) -> dict[str, Any]:
    """Read the (b) files ``paths["ours"]`` and ``paths["hdmf-zarr 0.14"]`` through the latency store."""
    from hdmf_zarr3 import NWBZarrIO

    out: dict[str, Any] = {"latency": latency, "rival_timeout": rival_timeout, "backends": {}}
    out["backends"]["ours"] = latency_read(NWBZarrIO, paths["ours"], latency, repeat=REPEAT)
    res = None
    if rival and Path(paths.get("hdmf-zarr 0.14", "")).exists():
        res = _rival.call("latency", {"path": paths["hdmf-zarr 0.14"], "latency": latency}, timeout=rival_timeout)
    out["backends"]["hdmf-zarr 0.14"] = res or {}
    out["growth"] = requests_by_size(Path(paths["ours"]).parent / "growth")
    try:
        out["backends"]["NWBHDF5IO (HTTP)"] = http_hdf5_read(paths["hdf5"], latency) if "hdf5" in paths else {}
    except ImportError as exc:  # fsspec's HTTP file system needs aiohttp
        print(f"  NWBHDF5IO over HTTP: n/a ({exc})")
        out["backends"]["NWBHDF5IO (HTTP)"] = {}
    return out


def requests_by_size(work: Path, sizes: tuple[int, ...] = (20, 200)) -> dict[str, Any]:
    """Requests and rounds of open + ``read()`` of ours for files of ``n`` TimeSeries each (every one with
    a scalar ``starting_time`` and cached specifications): issue #19 asks that they not grow with ``n``."""
    from _data import many_small
    from _latency_store import LatencyStore
    from zarr.storage import LocalStore

    from hdmf_zarr3 import NWBZarrIO

    out: dict[str, Any] = {}
    work.mkdir(parents=True, exist_ok=True)
    for n in sizes:
        path = work / f"growth_{n}.nwb.zarr"
        with NWBZarrIO(str(path), mode="w") as io:
            io.write(many_small(n, 2, 2))
        store = LatencyStore(LocalStore(str(path), read_only=True), latency=0.0)
        with NWBZarrIO(store, mode="r") as io:
            io.read()
            out[str(n)] = {"requests": sum(store.counts.values()), "rounds": store.rounds.rounds}
    return out


def _requests(counts: dict[str, int] | None) -> str:
    if not counts:
        return "n/a"
    return f"{sum(counts.values())} (" + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + ")"


BACKENDS = ("ours", "hdmf-zarr 0.14", "NWBHDF5IO (HTTP)")


def report(r: dict[str, Any]) -> None:
    """Print the table, the target of issue #19 and the ratios of one :func:`run`."""
    b = r["backends"]
    cap = r["rival_timeout"]
    rows = []
    for name in BACKENDS:
        res = b.get(name) or {}
        cells = {}
        for step in ("read", "read+tables"):
            if step not in res and res.get("timed_out"):
                cells[step] = f">{cap:.0f}"
            else:
                cells[step] = fmt(res.get(step))
        rows.append(
            [
                name,
                fmt(res.get("local_read")),
                cells["read"],
                cells["read+tables"],
                fmt(res.get("rows"), "d"),
                fmt(res.get("read_rounds"), "d"),
                _requests(res.get("read_requests")),
                fmt(res.get("rounds"), "d"),
                _requests(res.get("requests"))
                if "requests" in res
                else ("(killed)" if res.get("timed_out") else "n/a"),
            ]
        )
    print(
        f"  {r['latency'] * 1e3:.0f} ms per store request (HDF5: per HTTP request, fsspec's default "
        f"read-ahead of {fmt((b.get('NWBHDF5IO (HTTP)') or {}).get('block_size'), 'd')} bytes); "
        f"hdmf-zarr killed after {cap:.0f} s"
    )
    header = ["backend", "local read s", "read s", "read+tables s", "rows"]
    header += ["rounds by read()", "requests by read()", "rounds in all", "requests in all"]
    print(table(header, rows))
    ours = b["ours"]
    local, remote = ours.get("local_read"), ours.get("read")
    if local is not None and remote is not None:
        limit = local + TARGET_EXTRA_SECONDS
        met = "OK" if remote <= limit else "MISSED"
        print(
            f"  target (issue #19): ours read() with {r['latency'] * 1e3:.0f} ms latency <= local read() + "
            f"{TARGET_EXTRA_SECONDS} s: {remote:.2f} s <= {local:.2f} + {TARGET_EXTRA_SECONDS} = {limit:.2f} s  {met}"
        )
    growth = r.get("growth") or {}
    if growth:
        sizes = sorted(growth, key=int)
        seen = ", ".join(
            f"{n} TimeSeries: {growth[n]['requests']} requests / {growth[n]['rounds']} rounds" for n in sizes
        )
        flat = len({growth[n]["requests"] for n in sizes}) == 1
        print(
            f"  target (issue #19): open + read() requests do not grow with N scalars: {seen}  "
            + ("OK" if flat else "MISSED")
        )
    print("  ratios (time of hdmf-zarr / time of ours; '>' = hdmf-zarr was killed, a lower bound):")
    rival = b["hdmf-zarr 0.14"]
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
