"""Crash safety: a writer killed at any point leaves either a complete, correct file or one that reads
as incomplete (:class:`IncompleteFileError`), never a valid-looking file with holes; a failed append
leaves the previous content readable and intact; a crashed writer's lock is reported as stale and can
be broken.

Writers run in child processes (``crash_writer.py``, forked from one process that has imported
everything) that SIGKILL themselves at their N-th store mutation, N drawn at random (seeded;
``HDMF_ZARR3_CRASH_SEED`` changes it, ``HDMF_ZARR3_CRASH_ROUNDS`` the number of points) plus the
edges: the first mutations and the last ones.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hdmf.backends.errors import UnsupportedOperation

from hdmf_zarr3 import FileLockedError, IncompleteFileError, ZarrIO, break_lock

TESTS = Path(__file__).parent
ROUNDS = int(os.environ.get("HDMF_ZARR3_CRASH_ROUNDS", "8"))
SEED = int(os.environ.get("HDMF_ZARR3_CRASH_SEED", "20261122"))
WRITER_SEED = 7  # object ids of the files written (the same bytes on every run)


# the caller's PYTHONPATH stays: the writers must import the tree under test, not an installed copy
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
       "PYTHONWARNINGS": "ignore", "OPENBLAS_NUM_THREADS": "1"}


@pytest.fixture(scope="module")
def writers():
    """One process that forks a writer per request (imports paid once)."""
    server = subprocess.Popen([sys.executable, str(TESTS / "crash_writer.py"), "--serve", str(WRITER_SEED)],
                              env=ENV, cwd=TESTS, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def run(scenario: str, path: Path, kill_at: int) -> dict:
        server.stdin.write(f"{scenario} {path} {kill_at}\n")
        server.stdin.flush()
        answer = server.stdout.readline()
        assert answer, "the writer server died"
        result = json.loads(answer)
        assert result["signal"] == signal.SIGKILL or result["exit"] == 0, result
        return result

    yield run
    server.stdin.close()
    server.wait(timeout=60)
    server.stdout.close()


def _files(path: Path) -> dict[str, bytes]:
    """Every file of a store (LocalStore's temporary ``*.partial`` files aside)."""
    return {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*")
            if p.is_file() and not p.name.endswith(".partial")}


def _outcome(path: Path) -> str:
    try:
        with ZarrIO(path, mode="r") as io:
            io.read_builder()
    except IncompleteFileError:
        return "incomplete"
    except UnsupportedOperation:
        assert not (path / "zarr.json").exists()
        return "absent"
    return "complete"


def _kill_points(total: int, rng: random.Random) -> list[int]:
    edges = {1, 2, 3, total - 1, total}
    return sorted(edges | set(rng.sample(range(4, total - 1), min(ROUNDS, total - 5))))


@pytest.fixture(scope="module")
def references(tmp_path_factory, writers):
    """Files written to the end by the same writer: a new file, and the same file after the append."""
    base = tmp_path_factory.mktemp("references")
    written, appended = base / "written.nwb.zarr", base / "appended.nwb.zarr"
    counts = {}
    for scenario, path in (("write", written), ("append", appended)):
        if scenario == "append":
            shutil.copytree(written, appended)
        counts[scenario] = writers(scenario, path, -1)["mutations"]
    assert _outcome(written) == _outcome(appended) == "complete"
    return {"written": _files(written), "appended": _files(appended), "counts": counts, "base": written}


def _check_lock_left_behind(path: Path) -> None:
    """A killed writer's lock stays: the next writer is refused with a clear, stale-lock message."""
    if not Path(str(path) + ".lock").exists():
        return
    with pytest.raises(FileLockedError, match="no longer running"):
        ZarrIO(path, mode="a")
    holder = break_lock(path)
    assert holder is not None and isinstance(holder["pid"], int)
    assert break_lock(path) is None


@pytest.mark.parametrize("scenario", ["write", "replace"])
def test_a_killed_write_is_complete_or_detected(scenario, references, writers, tmp_path):
    rng = random.Random(f"{SEED}-{scenario}")
    total = references["counts"]["write"]
    old = None
    outcomes = []
    for kill_at in _kill_points(total + (40 if scenario == "replace" else 0), rng):
        path = tmp_path / f"{scenario}-{kill_at}.nwb.zarr"
        if scenario == "replace":  # an older, different file is there: mode 'w' replaces it
            shutil.copytree(references["base"].parent / "appended.nwb.zarr", path)
            old = _files(path)
        writers(scenario, path, kill_at)
        outcome = _outcome(path)
        outcomes.append((kill_at, outcome))
        if outcome == "complete":
            assert _files(path) in (references["written"], old), f"killed at {kill_at}: complete but different"
        elif outcome == "absent":  # killed before the first write into the store: nothing else is there
            assert scenario == "write" and not _files(path) if path.exists() else True, f"killed at {kill_at}"
        _check_lock_left_behind(path)
    kinds = {o for _, o in outcomes}
    assert "incomplete" in kinds and "complete" in kinds, outcomes


def test_a_killed_append_keeps_the_previous_content(references, writers, tmp_path):
    rng = random.Random(f"{SEED}-append")
    before = references["written"]
    outcomes = []
    for kill_at in _kill_points(references["counts"]["append"], rng):
        path = tmp_path / f"append-{kill_at}.nwb.zarr"
        shutil.copytree(references["base"], path)
        writers("append", path, kill_at)
        outcome = _outcome(path)
        outcomes.append((kill_at, outcome))
        after = _files(path)
        if outcome == "complete":
            assert after in (before, references["appended"]), f"killed at {kill_at}: complete but different"
        else:
            assert outcome == "incomplete"
            # every node of the previous file is untouched, and readable when asked for explicitly
            changed = [k for k, v in before.items() if k != "zarr.json" and after.get(k) != v]
            assert not changed, f"killed at {kill_at}: previous content changed: {changed[:5]}"
            with ZarrIO(path, mode="r", allow_incomplete=True) as io:
                root = io.read_builder()
                assert root["acquisition"]["ts"]["data"].data[:].size > 0 if "ts" in root["acquisition"] else True
                assert {"acquisition", "general", "processing"} <= set(root.groups)
        _check_lock_left_behind(path)
    assert {o for _, o in outcomes} == {"complete", "incomplete"}, outcomes


def test_a_writer_killed_from_outside_is_complete_or_detected(references, tmp_path):
    """SIGKILL from another process at random moments (not at a chosen store operation)."""
    rng = random.Random(f"{SEED}-timer")
    for i in range(3):
        path = tmp_path / f"timer-{i}.nwb.zarr"
        child = subprocess.Popen([sys.executable, str(TESTS / "crash_writer.py"), "write", str(path), "-1",
                                  str(WRITER_SEED)], env={**ENV, "CRASH_WRITER_READY": "1"}, cwd=TESTS,
                                 stdout=subprocess.PIPE, text=True)
        assert child.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 0.6))
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
        child.stdout.close()
        outcome = _outcome(path)
        if outcome == "complete":
            assert _files(path) == references["written"]
        else:
            assert outcome in ("incomplete", "absent")
        _check_lock_left_behind(path)


# --- failures inside the writing process ------------------------------------------------------------
def _failing_series(name: str = "broken"):
    """A TimeSeries whose data iterator fails after its first chunk (while the write is under way)."""
    import numpy as np
    from hdmf.data_utils import DataChunkIterator
    from pynwb import TimeSeries

    def blocks():
        yield np.arange(100, dtype="f8")
        raise OSError("the acquisition device went away")

    return TimeSeries(name=name, data=DataChunkIterator(blocks(), buffer_size=1), unit="V", rate=1.0)


@pytest.mark.parametrize("suffix", [".nwb.zarr", ".nwb.zarr.zip"])
def test_a_failed_append_leaves_the_file_as_it_was(suffix, tmp_path):
    from nwb_factories import small_nwbfile

    from hdmf_zarr3 import NWBZarrIO

    path = tmp_path / f"f{suffix}"
    with NWBZarrIO(path, mode="w") as io:
        io.write(small_nwbfile())
    before = path.read_bytes() if path.is_file() else _files(path)
    with NWBZarrIO(path, mode="a") as io:
        nwbfile = io.read()
        nwbfile.add_acquisition(_failing_series())
        nwbfile.add_acquisition(_failing_series("also_new").__class__(name="also_new", data=[1.0, 2.0], unit="V",
                                                                        rate=1.0))
        with pytest.raises(OSError, match="went away"):
            io.write(nwbfile)
    after = path.read_bytes() if path.is_file() else _files(path)
    assert after == before  # every byte, the root included: the previous file, complete
    assert not list(tmp_path.glob("*.partial")) and not Path(str(path) + ".lock").exists()
    with NWBZarrIO(path, mode="r") as io:
        assert set(io.read().acquisition) == {"ts"}


def test_a_failed_new_file_reads_as_incomplete(tmp_path):
    from nwb_factories import small_nwbfile

    from hdmf_zarr3 import NWBZarrIO

    path = tmp_path / "f.nwb.zarr"
    nwbfile = small_nwbfile()
    nwbfile.add_acquisition(_failing_series())
    with NWBZarrIO(path, mode="w") as io, pytest.raises(OSError, match="went away"):
        io.write(nwbfile)
    with pytest.raises(IncompleteFileError, match="a write started at .* did not finish"):
        NWBZarrIO(path, mode="r")
    with ZarrIO(path, mode="r", allow_incomplete=True) as io:
        assert "ts" in io.read_builder()["acquisition"]


def test_a_failed_replacement_of_a_zip_keeps_the_old_zip(tmp_path):
    from nwb_factories import small_nwbfile

    from hdmf_zarr3 import NWBZarrIO

    path = tmp_path / "f.nwb.zarr.zip"
    with NWBZarrIO(path, mode="w") as io:
        io.write(small_nwbfile())
    before = path.read_bytes()
    nwbfile = small_nwbfile()
    nwbfile.add_acquisition(_failing_series())
    with NWBZarrIO(path, mode="w") as io, pytest.raises(OSError, match="went away"):
        io.write(nwbfile)
    assert path.read_bytes() == before
