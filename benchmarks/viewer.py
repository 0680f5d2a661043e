"""Benchmark (i): the viewer's first paint of every view of a 1 GiB session, locally and from S3 (issue #41,
point 9).

The session: a 384-channel recording of int16 at 30 kHz, 1.4 M samples (1.0 GiB, as the viewer's memory test
writes it), its electrodes along a probe, 500 units with spike trains of 1–20 Hz, 200 trials with a condition,
a Position and an EventsTable of licks (``tests/viewer_files.write_big_recording``). It is written once
locally and uploaded to S3 (moto's server on 127.0.0.1, in a process of its own). Each place is served by
``hdmf-zarr3 view`` in a process of its own, and headless
Chromium, driven over the DevTools protocol (``_browser.py``), loads each view's URL as a fresh page
``--rounds`` times: a view's first paint is the time from the start of loading until its drawing is in the
page (its canvas marked drawn, or its table or overview present), the page, scripts, tree and node included;
the page is then left to finish what it still asks for (a plot's minimap) before the next one is loaded. The
local file's pages are evicted before the first round (that round reads from the disk). The S3 requests of
each view's page are counted in a separate pass, through a proxy counting every request (it slows each down).

Printed per view and place: the first round's time, the median [min–max] of all rounds, the S3 requests of
the first round; and the server's peak resident memory after every view. Target: every first paint under
1 s on this machine. Usage::

    python benchmarks/viewer.py [--rounds 3] [--no-s3] [--keep DIR] [--samples N] [--units N] [--trials N]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _browser import Browser
from _common import evict_tree, fmt_spread, table, workdir

TESTS = Path(__file__).resolve().parents[1] / "tests"
#: Each view: the URL's hash, and what is in the page once it is drawn.
VIEWS = {
    "session overview": ("", "#session"),
    "plot, 8 channels": ("#node=/acquisition/ElectricalSeries", '#plot[data-state="drawn"]'),
    "minimap, 384 channels": ("#node=/acquisition/ElectricalSeries", '#minimap[data-state="drawn"]'),
    "plot, 64 channels": (
        "#node=/acquisition/ElectricalSeries&view=series&channels=100-163",
        '#plot[data-state="drawn"]',
    ),
    "details of the recording": ("#node=/acquisition/ElectricalSeries/data", "#pane table.facts"),
    "units table": ("#node=/units&view=table", "#rows"),
    "raster, 500 units by depth": ("#node=/units&view=raster&sort=depth", '#raster[data-state="drawn"]'),
    "PSTH against 200 trials": ("#node=/units&view=raster&sort=depth", '#psth[data-state="drawn"]'),
    "trials timeline": ("#node=/intervals/trials&view=timeline&group=condition", '#timeline[data-state="drawn"]'),
    "path": ("#node=/processing/behavior/Position", '#path[data-state="drawn"]'),
    "licks as ticks": ("#node=/events/licks&view=events", '#events[data-state="drawn"]'),
}
TARGET_SECONDS = 1.0
#: The server's peak resident memory, at most (as the viewer's memory test holds plotting alone to).
PEAK_BYTES = 200 * 2**20
#: The page once none of its requests is under way (the page counts them on its body).
SETTLED = 'body[data-fetching="0"]'


#: The session's size: samples of the 384-channel recording (1.0 GiB), units, trials.
SESSION = {"samples": 1_400_000, "units": 500, "trials": 200}


def write_session(work: Path, size: dict[str, int]) -> Path:
    """The session file of ``size`` (:data:`SESSION`'s keys), in a child process: its memory is not this one's."""
    path = work / "session.nwb.zarr"
    if (path / "zarr.json").exists():  # kept from an earlier run (--keep)
        return path
    arguments = ", ".join(f"{key}={value}" for key, value in size.items())
    write = f"from viewer_files import write_big_recording; write_big_recording({str(path)!r}, {arguments})"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    subprocess.run([sys.executable, "-c", write], check=True, env=env, timeout=1800)
    return path


@contextlib.contextmanager
def served(location: str, options: dict[str, Any] | None) -> Iterator[tuple[str, int]]:
    """``hdmf-zarr3 view`` of ``location`` in its own process: its URL and process id."""
    command = [sys.executable, "-m", "hdmf_zarr3.cli", "view", location, "--no-browser"]
    if options is not None:
        command += ["--storage-options", json.dumps(options)]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        server.stdout.readline()  # type: ignore[union-attr]  # "serving ... at"
        yield server.stdout.readline().strip(), server.pid  # type: ignore[union-attr]
    finally:
        server.terminate()
        server.wait(timeout=30)


def peak_bytes(pid: int) -> int:
    """The peak resident memory of process ``pid`` (VmHWM)."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("VmHWM:")[1].split()[0]) * 1024


def measure(browser: Browser, url: str, pid: int, rounds: int) -> dict[str, Any]:
    """Every view's first paints over ``rounds`` fresh loads, and the server's peak memory at the end."""
    found: dict[str, Any] = {name: {"seconds": []} for name in VIEWS}
    for _ in range(rounds):
        for name, (hash_, selector) in VIEWS.items():
            found[name]["seconds"].append(browser.first_paint(url + hash_, selector, settled=SETTLED))
    return {"views": found, "peak_bytes": peak_bytes(pid)}


def count_requests(browser: Browser, url: str, requests: list[Any]) -> dict[str, int]:
    """The requests ``requests`` (a counting proxy's list) grows by while each view's page loads and settles."""
    counts = {}
    for name, (hash_, selector) in VIEWS.items():
        before = len(requests)
        browser.first_paint(url + hash_, selector, settled=SETTLED)
        counts[name] = len(requests) - before
    return counts


def run(
    rounds: int = 3, s3: bool = True, keep: str | None = None, size: dict[str, int] | None = None
) -> dict[str, Any]:
    """Write the session (of ``size``, :data:`SESSION` by default; or use the one kept in ``keep``), serve it
    locally (and from S3), time every view; the measurements."""
    results: dict[str, Any] = {}
    with workdir(keep=keep) as work, Browser() as browser:
        path = write_session(work, {**SESSION, **(size or {})})
        evict_tree(path)
        with served(str(path), None) as (url, pid):
            results["local"] = measure(browser, url, pid, rounds)
        if s3:
            results["s3"] = _from_s3(path, browser, rounds)
    return results


def _from_s3(path: Path, browser: Browser, rounds: int) -> dict[str, Any]:
    sys.path.insert(0, str(TESTS))
    from read_limit import upload
    from s3_faults import fault_proxy, through

    with moto_process() as s3:
        location = upload(path, s3, "session.nwb.zarr")
        with served(location, s3["options"]) as (url, pid):
            found = measure(browser, url, pid, rounds)
        # counted apart: the proxy (Python, a connection per request) would slow down what is timed
        with fault_proxy({"endpoint": s3["options"]["endpoint"]}) as proxy:
            with served(location, through(proxy, s3["options"])) as (url, _):
                for name, count in count_requests(browser, url, proxy.requests).items():
                    found["views"][name]["requests"] = count
        return found


@contextlib.contextmanager
def moto_process() -> Iterator[dict[str, Any]]:
    """moto's S3 server in a process of its own on a free port of 127.0.0.1 (in this one, its work and the
    counting proxy's would share one interpreter lock), with one bucket: its options and the bucket's name."""
    import socket
    import time
    import urllib.request

    import boto3

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):  # up within 30 s
            with contextlib.suppress(OSError):
                urllib.request.urlopen(endpoint + "/moto-api/", timeout=1).close()
                break
            time.sleep(0.1)
        keys = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
        boto3.client("s3", endpoint_url=endpoint, **keys).create_bucket(Bucket="bench")
        options = {"endpoint": endpoint, "access_key_id": "testing", "secret_access_key": "testing"}
        options |= {"region": "us-east-1", "client_options": {"allow_http": True}}
        yield {"options": options, "bucket": "bench"}
    finally:
        server.terminate()
        server.wait(timeout=30)


def report(res: dict[str, Any]) -> None:
    """The table of first paints (and S3 requests) per view, and the verdict."""
    places = [p for p in ("local", "s3") if p in res]
    rows, missed = [], []
    for name in VIEWS:
        row = [name]
        for place in places:
            entry = res[place]["views"][name]
            times = [t for t in entry["seconds"] if t is not None]
            row.append("never" if len(times) < len(entry["seconds"]) else f"{times[0]:.2f}; {fmt_spread(times)}")
            if place == "s3":
                row.append(str(entry["requests"]))
            if len(times) < len(entry["seconds"]) or max(times) >= TARGET_SECONDS:
                missed.append(f"{name} ({place})")
        rows.append(row)
    header = ["view"] + [
        h for p in places for h in ([f"{p}: first; median [min–max] s"] + (["S3 requests"] if p == "s3" else []))
    ]
    print(table(header, rows))
    for place in places:
        peak = res[place]["peak_bytes"]
        print(f"  server peak memory ({place}): {peak / 2**20:.0f} MiB (bound {PEAK_BYTES / 2**20:.0f} MiB: ", end="")
        print("met)" if peak < PEAK_BYTES else "missed)")
    print(
        f"  first paint < {TARGET_SECONDS:.0f} s in every round: "
        + ("met" if not missed else "missed: " + ", ".join(missed))
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-s3", action="store_true")
    parser.add_argument("--keep", help="write the session into this directory and keep it (or use it)")
    for key, value in SESSION.items():
        parser.add_argument(f"--{key}", type=int, default=value, help=f"the session's {key} (default {value})")
    args = parser.parse_args()
    report(run(args.rounds, not args.no_s3, args.keep, {key: getattr(args, key) for key in SESSION}))


if __name__ == "__main__":
    main()
