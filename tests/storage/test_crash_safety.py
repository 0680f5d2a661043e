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

import hdmf_zarr3
from hdmf_zarr3 import FileLockedError, IncompleteFileError, ModeError, ZarrIO, break_lock, recover

TESTS = Path(__file__).resolve().parents[1]  # tests/: the helper modules and scripts
ROUNDS = int(os.environ.get("HDMF_ZARR3_CRASH_ROUNDS", "8"))
SEED = int(os.environ.get("HDMF_ZARR3_CRASH_SEED", "20261122"))
WRITER_SEED = 7  # object ids of the files written (the same bytes on every run)


# The writers import the same hdmf_zarr3 as this process (a source tree first on the path, not the installed one).
SOURCE = Path(hdmf_zarr3.__file__).parent.parent
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join([str(TESTS), str(SOURCE)]),
    "PYTHONWARNINGS": "ignore",
    "OPENBLAS_NUM_THREADS": "1",
}


@pytest.fixture(scope="module")
def writers():
    """One process that forks a writer per request (imports paid once)."""
    server = subprocess.Popen(
        [sys.executable, str(TESTS / "crash_writer.py"), "--serve", str(WRITER_SEED)],
        env=ENV,
        cwd=TESTS,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )

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


def _files(path: Path, every: bool = False) -> dict[str, bytes]:
    """Every file of a store (LocalStore's temporary ``*.partial`` files aside, unless ``every``)."""
    return {
        str(p.relative_to(path)): p.read_bytes()
        for p in path.rglob("*")
        if p.is_file() and (every or not p.name.endswith(".partial"))
    }


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


APPENDS = ("append", "rows", "grow")  # new containers, rows added to a table, samples added to a dataset


@pytest.fixture(scope="module")
def references(tmp_path_factory, writers):
    """Files written to the end by the same writer: a new file, and the same file after each append."""
    base = tmp_path_factory.mktemp("references")
    written = base / "written.nwb.zarr"
    counts = {"write": writers("write", written, -1)["mutations"]}
    files = {"written": _files(written)}
    for scenario in APPENDS:
        path = base / f"{scenario}.nwb.zarr"
        shutil.copytree(written, path)
        counts[scenario] = writers(scenario, path, -1)["mutations"]
        assert _outcome(path) == "complete"
        files[scenario] = _files(path)
        assert files[scenario] != files["written"]
    assert _outcome(written) == "complete"
    return {**files, "appended": files["append"], "counts": counts, "base": written}


def _check_lock_left_behind(path: Path) -> None:
    """A killed writer's lock stays: the next writer is refused with a clear, stale-lock message."""
    if not Path(str(path) + ".lock").exists():
        return
    with pytest.raises(FileLockedError, match="no longer running"):
        ZarrIO(path, mode="a")
    holder = break_lock(path)
    assert holder is not None and isinstance(holder["pid"], int)
    assert break_lock(path) is None


def test_a_killed_write_is_complete_or_detected(references, writers, tmp_path):
    rng = random.Random(f"{SEED}-write")
    outcomes = []
    for kill_at in _kill_points(references["counts"]["write"], rng):
        path = tmp_path / f"write-{kill_at}.nwb.zarr"
        writers("write", path, kill_at)
        outcome = _outcome(path)
        outcomes.append((kill_at, outcome))
        if outcome == "complete":
            assert _files(path) == references["written"], f"killed at {kill_at}: complete but different"
        elif outcome == "absent":  # killed before the first write into the store: nothing else is there
            assert not _files(path) if path.exists() else True, f"killed at {kill_at}"
        else:  # a new file has no earlier state: recover says so and changes nothing
            _check_lock_left_behind(path)
            before = _files(path)
            with pytest.raises(IncompleteFileError, match="no earlier complete state"):
                recover(path)
            assert _files(path) == before
        _check_lock_left_behind(path)
    kinds = {o for _, o in outcomes}
    assert "incomplete" in kinds and "complete" in kinds, outcomes


def test_a_killed_replacement_leaves_the_old_file_or_the_new_one(references, writers, tmp_path):
    """Mode 'w' over an existing directory writes beside it and swaps at commit: a kill at any point
    leaves one of the two complete files, never a partial or empty one."""
    rng = random.Random(f"{SEED}-replace")
    seen = set()
    for kill_at in _kill_points(references["counts"]["write"] + 10, rng):
        path = tmp_path / f"replace-{kill_at}.nwb.zarr"
        shutil.copytree(references["base"].parent / "append.nwb.zarr", path)
        old = _files(path)
        writers("replace", path, kill_at)
        assert _outcome(path) == "complete", f"killed at {kill_at}"
        after = _files(path)
        assert after in (references["written"], old), f"killed at {kill_at}: complete but different"
        seen.add("new" if after == references["written"] else "old")
        _check_lock_left_behind(path)
        break_lock(path)  # also removes the killed writer's working directory beside the file
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(path.name + ".")] == []
    assert seen == {"old", "new"}


@pytest.mark.parametrize("scenario", APPENDS)
def test_a_killed_append_is_recovered_byte_for_byte(scenario, references, writers, tmp_path):
    """An append killed at any store operation leaves a file that reads as incomplete, refuses to be
    changed, and that ``recover`` puts back exactly as it was before the append."""
    rng = random.Random(f"{SEED}-{scenario}")
    before = references["written"]
    outcomes = []
    for kill_at in _kill_points(references["counts"][scenario], rng):
        path = tmp_path / f"{scenario}-{kill_at}.nwb.zarr"
        shutil.copytree(references["base"], path)
        writers(scenario, path, kill_at)
        outcome = _outcome(path)
        outcomes.append((kill_at, outcome))
        if outcome == "complete":  # killed after the commit: at most a stale journal or lock is left
            assert _files(path) in (before, references[scenario]) or "__hdmf_zarr3_journal" in str(_files(path))
            assert "the file is complete" in recover(path, break_lock=True)
            assert _files(path, every=True) in (before, references[scenario]), f"killed at {kill_at}"
            continue
        assert outcome == "incomplete", f"killed at {kill_at}: {outcome}"
        with pytest.raises(FileLockedError):  # the killed writer's lock: recover does not break it by itself
            recover(path)
        with pytest.raises(ModeError, match="mode 'r' only"):  # allow_incomplete is read-only
            ZarrIO(path, mode="a", allow_incomplete=True)
        break_lock(path)
        with pytest.raises(IncompleteFileError, match="recover"):  # no change on top of a half-done append
            ZarrIO(path, mode="a")
        assert "restored the file as it was before the append" in recover(path)
        assert _files(path, every=True) == before, f"killed at {kill_at}: not restored byte for byte"
        assert "nothing to recover" in recover(path)
    assert {o for _, o in outcomes} == {"complete", "incomplete"}, outcomes


@pytest.mark.parametrize("scenario", APPENDS)
def test_a_killed_append_to_a_zip_is_undone_byte_for_byte(scenario, references, writers, tmp_path):
    """A zip's changes go to a working directory and are added to the zip when the append finished; a
    writer killed while adding them leaves a record by which the next writer (here ``recover``) cuts the
    zip back (see ``zipped.update_zip``)."""
    from hdmf_zarr3 import convert

    zipped = tmp_path / "base.nwb.zarr.zip"
    convert(references["base"], zipped)
    before = zipped.read_bytes()
    finished = tmp_path / "finished.nwb.zarr.zip"
    shutil.copyfile(zipped, finished)
    total = writers(scenario, finished, -1)["mutations"]  # no journal in a zip: fewer store operations
    assert finished.read_bytes() != before
    after = _members(finished)  # the same members; the zip's own timestamps differ between runs
    rng = random.Random(f"{SEED}-zip-{scenario}")
    seen = set()
    for kill_at in sorted({1, 2, total - 1, total} | set(rng.sample(range(3, total - 1), 3))):
        path = tmp_path / f"{scenario}-{kill_at}.nwb.zarr.zip"
        shutil.copyfile(zipped, path)
        writers(scenario, path, kill_at)
        recover(path, break_lock=True)  # cuts back a change killed while it was added to the zip in place
        found = path.read_bytes()
        assert found == before or _members(path) == after, f"killed at {kill_at}"  # after: killed cleaning up
        seen.add(found == before)
        assert "nothing to recover" in recover(path, break_lock=True)
        assert path.read_bytes() == found
    assert True in seen


def _members(path: Path) -> dict[str, bytes]:
    import zipfile

    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def test_a_writer_killed_from_outside_is_complete_or_detected(references, tmp_path):
    """SIGKILL from another process at random moments (not at a chosen store operation)."""
    rng = random.Random(f"{SEED}-timer")
    for i in range(3):
        path = tmp_path / f"timer-{i}.nwb.zarr"
        child = subprocess.Popen(
            [sys.executable, str(TESTS / "crash_writer.py"), "write", str(path), "-1", str(WRITER_SEED)],
            env={**ENV, "CRASH_WRITER_READY": "1"},
            cwd=TESTS,
            stdout=subprocess.PIPE,
            text=True,
        )
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


def _read_partial(path: Path) -> str:
    """What ``NWBZarrIO(..., allow_incomplete=True).read()`` makes of a killed writer's file: ``"read"`` (and every
    series' data reads, missing chunks as the fill value), ``"absent"`` (killed before the first store write), or
    the name of the typed error; anything else fails the test."""
    import warnings

    import numpy as np

    from hdmf_zarr3 import HdmfZarrError, IncompleteFileWarning, NWBZarrIO

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", IncompleteFileWarning)
            with NWBZarrIO(path, mode="r", allow_incomplete=True) as io:
                nwbfile = io.read()
                for series in nwbfile.acquisition.values():
                    if hasattr(series, "data") and hasattr(series.data, "shape"):
                        np.asarray(series.data[:])
    except UnsupportedOperation:
        assert not (path / "zarr.json").exists()
        return "absent"
    except HdmfZarrError as exc:
        assert exc.path, exc  # names where
        return type(exc).__name__
    return "read"


def test_a_killed_new_file_reads_with_allow_incomplete(references, writers, tmp_path):
    """A new file killed at any point: read() gives what is there, or a typed error naming what is missing
    (never a TypeError, KeyError or AttributeError from HDMF or PyNWB); killed only before its last store
    operation (the consolidated root), it reads."""
    total = references["counts"]["write"]
    rng = random.Random(f"{SEED}-partial")
    outcomes = []
    for kill_at in _kill_points(total, rng):
        path = tmp_path / f"partial-{kill_at}.nwb.zarr"
        writers("write", path, kill_at)
        outcomes.append((kill_at, _read_partial(path)))
    assert dict(outcomes)[total] == "read", outcomes
    assert {o for _, o in outcomes} <= {"read", "absent", "IncompleteFileError"}, outcomes


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
        nwbfile.add_acquisition(
            _failing_series("also_new").__class__(name="also_new", data=[1.0, 2.0], unit="V", rate=1.0)
        )
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


# --- what a killed zip writer leaves beside the zip ---------------------------------------------------
def test_a_killed_zip_writers_working_copies_are_removed_once_no_writer_can_use_them(writers, tmp_path):
    """A zip writer SIGKILLed mid-write leaves its working directory (as large as the file) and its lock;
    readers and refused writers touch neither; break_lock removes both (and a half-packed ``<zip>.partial``),
    and so does the next writer once it holds the lock."""
    path = tmp_path / "f.nwb.zarr.zip"
    total = writers("write", path, -1)["mutations"]
    before = path.read_bytes()
    assert writers("replace", path, total // 2)["signal"] == signal.SIGKILL
    working = list(tmp_path.glob("f.nwb.zarr.zip.*.partial"))
    assert len(working) == 1 and working[0].is_dir() and any(working[0].rglob("zarr.json"))
    Path(f"{path}.partial").write_bytes(b"PK\x03\x04 half a zip")  # what a kill while packing leaves
    assert _outcome(path) == "complete" and path.read_bytes() == before  # the old zip, read in place
    with pytest.raises(FileLockedError, match="no longer running"):
        ZarrIO(path, mode="a")
    assert working[0].is_dir() and Path(f"{path}.partial").is_file()
    assert isinstance(break_lock(path)["pid"], int)
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]

    assert writers("replace", path, total - 1)["signal"] == signal.SIGKILL
    assert len(list(tmp_path.glob("f.nwb.zarr.zip.*.partial"))) == 1
    os.remove(f"{path}.lock")  # gone some other way (removed by hand): the next writer cleans up
    with ZarrIO(path, mode="a") as io:
        io.read_builder()
        assert len(list(tmp_path.glob("f.nwb.zarr.zip.*.partial"))) == 1  # its own, only
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]
    assert _outcome(path) == "complete"
