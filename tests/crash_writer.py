"""A writer that SIGKILLs itself at its N-th store mutation; run by test_crash_safety.py.

    python crash_writer.py SCENARIO PATH KILL_AT SEED     # one run
    python crash_writer.py --serve SEED                    # many runs: "SCENARIO PATH KILL_AT" per stdin line

SCENARIO is ``write`` (a new file), ``replace`` (mode ``w`` over an existing file), ``append`` (mode
``a``: new TimeSeries added to an existing file), ``rows`` (mode ``a``: trials added to the existing
trials table), ``grow`` (mode ``a``: samples appended to an existing dataset), ``edit`` (mode ``r+``: in-place
assignments by slices, index arrays and scalars to a chunked and a sharded array of a file made by
``fault_scenarios.write_edit_base``), ``grow_sharded`` (mode ``a``: rows appended to that sharded array past its
shape) or ``virtual`` (``convert(..., virtual=True)`` of ``source.nwb``, the HDF5 file beside PATH, into the
icechunk repository PATH; icechunk's store writes and its commit count as mutations). Every mutation of
the local disk the backend makes (a key stored or deleted through zarr's LocalStore, a file or
directory removed, a hard link made, a file renamed into place) is counted; at mutation number
KILL_AT the process kills itself with SIGKILL, while other mutations may be in flight on zarr's I/O
threads. KILL_AT -1 runs to the end. Object ids
come from a generator seeded with SEED, so two runs with the same seed write the same bytes.

``--serve`` imports everything once and forks one writer process per line (nothing has touched a
store before the fork, so zarr's I/O threads start in each writer); it answers each line with one
JSON line: ``{"signal": 9 or null, "exit": code or null, "mutations": count or null}``.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sys
import uuid
from pathlib import Path

import hdmf.container
import numpy as np
from fault_scenarios import edit_all, grow_sharded
from full_nwbfile import make_full_nwbfile, make_manager
from pynwb import TimeSeries
from zarr.storage import LocalStore

from hdmf_zarr3 import NWBZarrIO, convert

KILL_AT = -1
count = 0


def _tick() -> None:
    global count
    count += 1
    if count == KILL_AT:
        os.kill(os.getpid(), signal.SIGKILL)


def _counted_async(original):
    async def method(self, *args, **kwargs):
        _tick()
        return await original(self, *args, **kwargs)

    return method


def _counted(original):
    def function(*args, **kwargs):
        _tick()
        return original(*args, **kwargs)

    return function


for _name in ("_set", "delete", "delete_dir"):
    setattr(LocalStore, _name, _counted_async(getattr(LocalStore, _name)))
LocalStore.set_sync = _counted(LocalStore.set_sync)  # (appended rows are stored in the writer's thread)
os.link = _counted(os.link)  # (the journal keeps a local file as a hard link)
os.replace = _counted(os.replace)  # (small keys are written in the writer's thread: temporary name, rename)
os.remove = _counted(os.remove)
os.unlink = _counted(os.unlink)  # the lock is released with it
shutil.rmtree = _counted(shutil.rmtree)


def _count_icechunk() -> None:
    """A virtual conversion writes through icechunk (its own I/O is Rust's, below these calls). Imported in the
    writer only: icechunk starts threads of its own, which a fork must not copy."""
    from icechunk import Session
    from icechunk.store import IcechunkStore

    for name in ("set", "delete"):
        setattr(IcechunkStore, name, _counted_async(getattr(IcechunkStore, name)))
    IcechunkStore.set_virtual_refs = _counted(IcechunkStore.set_virtual_refs)
    Session.commit = _counted(Session.commit)


def run(scenario: str, path: str, seed: int) -> None:
    rng = random.Random(seed)
    hdmf.container.uuid4 = lambda: uuid.UUID(int=rng.getrandbits(128), version=4)  # object ids only
    if scenario in ("write", "replace"):
        with NWBZarrIO(path, mode="w", manager=make_manager()) as io:
            io.write(make_full_nwbfile())
    elif scenario == "append":
        with NWBZarrIO(path, mode="a", manager=make_manager()) as io:
            nwbfile = io.read()
            for i in range(8):
                nwbfile.add_acquisition(
                    TimeSeries(name=f"appended_{i}", data=np.arange(50 * (i + 1), dtype="f4"), unit="V", rate=10.0 + i)
                )
            io.write(nwbfile)
    elif scenario == "rows":
        with NWBZarrIO(path, mode="a", manager=make_manager()) as io:
            nwbfile = io.read()
            for t in range(40):
                nwbfile.add_trial(start_time=100.0 + t, stop_time=100.5 + t, correct=bool(t % 3), stim_name=f"late_{t}")
            io.write(nwbfile)
    elif scenario == "grow":
        with NWBZarrIO(path, mode="a", manager=make_manager()) as io:
            data = io.read().analysis["mean_rate"].data
            for i in range(6):
                data.extend(np.linspace(i, i + 1, 7 * (i + 1)))
    elif scenario == "edit":
        edit_all(Path(path))
    elif scenario == "grow_sharded":
        grow_sharded(Path(path))
    elif scenario == "virtual":
        _count_icechunk()
        convert(Path(path).parent / "source.nwb", path, virtual=True, min_bytes=64)
    else:
        raise SystemExit(f"unknown scenario {scenario!r}")


def serve(seed: int) -> None:
    global KILL_AT
    for line in sys.stdin:
        scenario, path, kill_at = line.split()
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the writer
            os.close(read_end)
            KILL_AT = int(kill_at)
            run(scenario, path, seed)
            os.write(write_end, str(count).encode())
            os._exit(0)
        os.close(write_end)
        with os.fdopen(read_end) as pipe:
            told = pipe.read()
        _, status = os.waitpid(pid, 0)
        print(
            json.dumps(
                {
                    "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
                    "exit": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                    "mutations": int(told) if told else None,
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    if sys.argv[1] == "--serve":
        serve(int(sys.argv[2]))
    else:
        KILL_AT = int(sys.argv[3])
        if os.environ.get("CRASH_WRITER_READY"):  # the parent kills us at a moment of its choosing
            print("ready", flush=True)
        run(sys.argv[1], sys.argv[2], int(sys.argv[4]))
        print(json.dumps({"mutations": count}))
