"""Every write path under a fault at every store operation (``tests/faults.py``): Ctrl-C, a full disk
(ENOSPC) and an I/O error (EIO) at operation k = 1, 2, ... until the write finishes without reaching k.

The write paths and how each run is judged are in ``tests/fault_scenarios.py``. After each failed run: an
existing file reads exactly as before, byte for byte (every file of the tree); a new file does not exist or is
refused as incomplete; nothing is left beside the file (no working copy, no ``*.partial``, no lock) nor inside
it (no journal, no temporary key); the error is ours (:class:`~hdmf_zarr3.errors.HdmfZarrError`) naming the
file, or, for Ctrl-C, ``KeyboardInterrupt`` itself, raised after the rollback finished. A run the fault did not
stop must leave the complete file.

The default run tries the first and last operations and a few others drawn at random (seeded:
``HDMF_ZARR3_FAULT_SEED``, ``HDMF_ZARR3_FAULT_SPREAD``); the sweep of every index is marked ``slow``
(CI runs it). What every run would redo identically is done once: the count of operations (per scenario), the
existing file's bytes (per base), HDMF's namespace work (``sweep_memo.py``); the runs write into a tmpfs
(``/dev/shm``) where there is one, as file system calls were a third of a run on a disk.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import gc
import logging
import os
import random
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from fault_scenarios import (
    BASE_TREES,
    BASES,
    SCENARIOS,
    SOURCES,
    append_three,
    complete,
    fresh,
    make_bases,
    run_once,
    scenario_nwbfile,
    write_base,
)
from faults import FAULTS, KINDS, beside, installed, pending_tasks, tree
from full_nwbfile import make_manager
from sweep_memo import runs_dir, shared_hdmf_work
from sweep_pool import pool, run_all

from hdmf_zarr3 import NWBZarrIO, ZarrIO, break_lock, recover
from hdmf_zarr3.backend.datasets import changes
from hdmf_zarr3.errors import HdmfZarrError, IncompleteFileError, StoreError
from hdmf_zarr3.storage.handles.handle import StoreHandle
from hdmf_zarr3.storage.safety import journal, locks
from hdmf_zarr3.storage.stores import local as local_writes

SPREAD = int(os.environ.get("HDMF_ZARR3_FAULT_SPREAD", "4"))  # operations tried besides the first and last
SEED = int(os.environ.get("HDMF_ZARR3_FAULT_SEED", "20261126"))


@pytest.fixture(scope="module")
def patched():
    with installed() as faults, shared_hdmf_work():
        yield faults


@pytest.fixture(scope="module")
def runs_root(tmp_path_factory) -> Iterator[Path]:
    """Where the sweeps' runs write (a tmpfs if there is one, else a temporary directory)."""
    with runs_dir(tmp_path_factory.mktemp("runs")) as where:
        yield where


@pytest.fixture
def runs(runs_root, request) -> Iterator[Path]:
    """A directory of its own for each test's runs, removed after it."""
    where = runs_root / request.node.name.replace("/", "_")
    where.mkdir()
    yield where
    shutil.rmtree(where, ignore_errors=True)


@pytest.fixture(scope="module")
def bases(tmp_path_factory, patched):
    """The existing files the scenarios start from, and what each scenario leaves when nothing fails."""
    return make_bases(tmp_path_factory.mktemp("bases"))


def _indices(total: int, scenario: str, kind: str, salt: str = "") -> list[int]:
    """The first and last operations and ``SPREAD`` others, drawn (seeded) from the rest."""
    rng = random.Random(f"{SEED}-{scenario}-{kind}{salt}")
    rest = range(2, total)
    return sorted({1, total, *rng.sample(rest, min(SPREAD, len(rest)))})


#: (scenario, whether the fault is a Ctrl-C) -> how many operations the fault can hit when nothing fails (a
#: failure inside a cleanup that tolerates failure is no fault to try: only a Ctrl-C stops one, see faults.py).
COUNTS: dict[tuple[str, bool], int] = {}


def _count(bases: dict[str, Path], scenario: str, kind: str, where: Path) -> int:
    key = (scenario, kind == "interrupt")
    if key not in COUNTS:
        action = SCENARIOS[scenario][0]
        path = fresh(bases, scenario, where)
        with FAULTS.armed(0, kind) as faults:
            action(path)
        COUNTS[key] = faults.count
        shutil.rmtree(where)
    return COUNTS[key]


def _run_at(bases: dict[str, Path], scenario: str, kind: str, runs: Path, at: int) -> str | None:
    """One run of a sweep: ``None``, or the first line of the assertion it failed."""
    failure = None
    try:
        run_once(bases, scenario, kind, at, runs / f"{at}")
    except AssertionError as exc:
        failure = str(exc).splitlines()[0]
    if failure is None and FAULTS.fired is None:  # (the count said there is an operation ``at``: each run reaches it)
        failure = f"{scenario}, {kind} at operation {at}: never reached, the operations were not counted alike"
    try:
        shutil.rmtree(runs / f"{at}")
    except OSError as exc:  # (a store write still under way after the write returned, e.g. "Directory not empty")
        failure = failure or f"{scenario}, {kind} at operation {at}: written to after the run returned: {exc}"
    return failure


def _sweep(bases, scenario: str, kind: str, runs: Path, every: bool, workers=None, salt: str = "") -> None:
    total = _count(bases, scenario, kind, runs / "count")
    indices = range(1, total + 1) if every else _indices(total, scenario, kind, salt)
    run = functools.partial(_run_at, bases, scenario, kind, runs)
    failures = run_all(workers, run, indices) if workers else [f for f in map(run, indices) if f is not None]
    assert not failures, f"{len(failures)} of {len(indices)} runs failed:\n" + "\n".join(failures)


_WORKER = contextlib.ExitStack()  # a worker's patches, for its life


def _start_worker(sources: dict[str, Path], bases: dict[str, Path]) -> None:
    """Set up a worker process of the sweep as the ``patched`` and ``bases`` fixtures set up the test's."""
    _WORKER.enter_context(installed())
    _WORKER.enter_context(shared_hdmf_work())
    SOURCES.update(sources)
    BASE_TREES.update({name: tree(path) for name, path in bases.items()})
    BASES.update(bases)
    # what the test's process did before counting, done here too, so that the operations are numbered alike
    # (the test extension's type map, made on first use, writes and removes its files: operations)
    with tempfile.TemporaryDirectory() as where:
        write_base(Path(where) / "warm.nwb.zarr")


@pytest.fixture(scope="module")
def workers(bases) -> Iterator[ProcessPoolExecutor | None]:
    """The worker processes the exhaustive sweep shares its runs among (``sweep_pool.py``)."""
    with pool(_start_worker, dict(SOURCES), bases) as executor:
        yield executor


CASES = [(s, k) for s in SCENARIOS for k in KINDS]


@pytest.mark.parametrize(("scenario", "kind"), CASES)
def test_fault_at_spread_of_operations(bases, scenario, kind, runs):
    _sweep(bases, scenario, kind, runs, every=False)


@pytest.mark.slow
@pytest.mark.parametrize(("scenario", "kind"), CASES)
def test_fault_at_every_operation(bases, scenario, kind, runs, workers):
    _sweep(bases, scenario, kind, runs, every=True, workers=workers)


#: Write paths whose batches of keys the writer's threads store (``storage/stores/local.py``) once a batch is
#: large enough (the scenarios' files are smaller: the tests below make every batch of two keys large enough).
THREADED = [(s, k) for s in ("write", "replace", "append", "rows", "export", "convert_zarr") for k in KINDS]


@pytest.mark.parametrize(("scenario", "kind"), THREADED)
def test_fault_at_spread_of_operations_with_keys_stored_by_threads(bases, scenario, kind, runs, monkeypatch):
    monkeypatch.setattr(local_writes, "MIN_KEYS_PER_THREAD", 1)
    _sweep(bases, scenario, kind, runs, every=False, salt="-threads")


@pytest.mark.slow
@pytest.mark.parametrize(("scenario", "kind"), [case for case in THREADED if case[0] in ("write", "append")])
def test_fault_at_every_operation_with_keys_stored_by_threads(bases, scenario, kind, runs, monkeypatch):
    monkeypatch.setattr(local_writes, "MIN_KEYS_PER_THREAD", 1)
    _sweep(bases, scenario, kind, runs, every=True)


#: The write paths swept with the file system turned read-only part-way (``faults.py``, ``erofs``): the appends
#: to a local directory, at every operation (a few seconds: the runs are short), and a new file, a file replaced
#: (mode ``w`` over it) and the zip writes at a spread of them.
READ_ONLY_EVERY = ("append", "rows", "grow")
READ_ONLY = ("write", "replace", "zip_write", "zip_replace", "zip_append", *READ_ONLY_EVERY)
#: What a write cut short by a read-only file system may leave beside the file, which that file system cannot
#: remove: the lock, a working copy (``<name>.<random>.partial``, a file or a directory), a half-packed zip
#: (``<zip>.partial``) and a zip append's record (``<zip>.appending``). The next writer removes them.
_LEFT_BY_EROFS = r"(\.lock|\.[A-Za-z0-9_]+\.partial|\.partial|\.appending)"


def _read_only_at(bases: dict[str, Path], scenario: str, runs: Path, at: int) -> str | None:
    """One run with the file system read-only from operation ``at``: ``None``, or what was wrong.

    The write fails with our ``StoreError`` (``errno`` EROFS) naming the file, or, when only a cleanup after
    the commit was refused, completes. The undo cannot run either: an existing file is left as it was, or
    marked incomplete with its journal and an error that says to run ``recover``, which (the file system
    writable again) puts it back byte for byte. Only the lock, which cannot be removed, is left beside it."""
    action, existing, name = SCENARIOS[scenario]
    path = fresh(bases, scenario, runs / f"{at}")
    label = f"{scenario}, read-only from operation {at}"
    error: BaseException | None = None
    try:
        with FAULTS.armed(at, "erofs"):
            action(path)
    except BaseException as exc:  # noqa: BLE001 -- judged below
        error = exc
    label += f" ({FAULTS.fired})"
    if error is not None and not (
        isinstance(error, HdmfZarrError)
        and (getattr(error, "errno", None) == errno.EROFS or (error.path or "").endswith(".lock"))  # (see run_once)
        and str(path) in str(error)
    ):
        return f"{label}: not ours with EROFS naming the file: {type(error).__name__}: {error}"
    left = [n for n in beside(path) if not re.fullmatch(re.escape(name) + _LEFT_BY_EROFS, n)]
    if left:
        return f"{label}: left beside the file: {beside(path)}"
    if f"{name}.lock" in beside(path):  # (the file system kept it: the next writer would wait on it)
        break_lock(path)
    problem = _judged_after_read_only(path, name, existing, error, label)
    if problem is None:  # the next writer, the file system writable again, removes what the cut-short one left
        _age_lock_temporaries(path)
        if existing:
            NWBZarrIO(path, mode="a").close()
        else:
            write_base(path)
        if beside(path):
            problem = f"{label}: the next writer left beside the file: {beside(path)}"
    return problem


def _age_lock_temporaries(path: Path) -> None:
    """Make the lock's temporaries left beside ``path`` stale, as they are when the next writer comes a minute
    later (a fresh one may be another writer's taking the lock: left alone, ``locks.STALE_TEMPORARY_SECONDS``)."""
    old = time.time() - 2 * locks.STALE_TEMPORARY_SECONDS
    for name in beside(path):
        if re.fullmatch(re.escape(path.name) + r"\.[0-9a-f]{32}\.partial", name) and (path.parent / name).is_file():
            os.utime(path.parent / name, (old, old))


def _judged_after_read_only(
    path: Path, name: str, existing: bool, error: BaseException | None, label: str
) -> str | None:
    """A new file cut short is not complete; an existing one is as before, or (the error saying to recover it)
    ``recover`` puts it back byte for byte."""
    if not existing:
        if error is not None and path.exists() and _reads_as_complete(path):
            return f"{label}: the new file reads as complete"
        return None
    before = BASE_TREES[name]
    if error is not None and tree(path) != before and "recover" not in str(error):
        return f"{label}: the file changed and the error does not say to recover it: {error}"
    recover(path)  # undoes what could not be undone (or removes the journal of an append that finished)
    if error is not None and tree(path) != before:
        return f"{label}: recover did not restore the file byte for byte"
    return None


def _reads_as_complete(path: Path) -> bool:
    """(A directory with no root document yet is a new file's beginning; a zip is there only once packed.)"""
    return complete(path) if path.is_file() or (path / "zarr.json").exists() else False


def _read_only_sweep(bases, scenario: str, runs: Path, every: bool) -> None:
    total = _count(bases, scenario, "erofs", runs / "count")
    indices = range(1, total + 1) if every else _indices(total, scenario, "erofs")
    failures = [f for f in (_read_only_at(bases, scenario, runs, at) for at in indices) if f is not None]
    assert not failures, f"{len(failures)} of {len(indices)} runs failed:\n" + "\n".join(failures)


@pytest.mark.parametrize("scenario", READ_ONLY)
def test_file_system_turned_read_only_part_way(bases, scenario, runs):
    _read_only_sweep(bases, scenario, runs, every=scenario in READ_ONLY_EVERY)


@pytest.mark.slow
def test_file_system_turned_read_only_at_every_operation_of_a_new_file(bases, runs):
    _read_only_sweep(bases, "write", runs, every=True)


def test_an_append_a_read_only_file_system_stops_says_to_recover(bases, runs):
    """Read-only half-way through appending containers: our StoreError (EROFS) says the undo could not run;
    the file is refused as incomplete until ``recover``, which puts it back byte for byte."""
    path = fresh(bases, "append", runs / "half")
    with (
        pytest.raises(StoreError) as raised,
        FAULTS.armed(_count(bases, "append", "erofs", runs / "count") // 2, "erofs"),
    ):
        append_three(path)
    assert raised.value.errno == errno.EROFS and raised.value.path == str(path)
    assert "Read-only file system" in str(raised.value) and "could not be undone" in str(raised.value)
    assert f"hdmf_zarr3.recover({str(path)!r})" in str(raised.value)
    with pytest.raises(IncompleteFileError):
        ZarrIO(path, mode="r").close()
    assert "restored the file as it was" in recover(path, break_lock=True)
    assert tree(path) == BASE_TREES["f.nwb.zarr"]


def _assign(data) -> None:
    data[2:7] = np.arange(5.0)


def _extend(data) -> None:
    data.extend([0.5, 0.25])  # (stored at once: HELD_BYTES is 1 in the test below)


@pytest.mark.parametrize("change", [_assign, _extend], ids=["assign", "rows-stored-early"])
@pytest.mark.parametrize("kind", ["enospc", "eio", "erofs"])
def test_a_change_stored_outside_a_write_fails_as_ours_with_its_errno(bases, runs, monkeypatch, change, kind):
    """An assignment, or rows stored before any write (memory full), stores at once, outside ``write()`` and
    any ``with`` block: a fault at any of its store operations is our StoreError naming the file, with the
    errno (it was the bare OSError)."""
    monkeypatch.setattr(changes, "HELD_BYTES", 1)
    code = {"enospc": errno.ENOSPC, "eio": errno.EIO, "erofs": errno.EROFS}[kind]
    failures, at, fired = [], 0, True
    while fired:
        at += 1
        path = fresh(bases, "grow", runs / f"{at}")
        io = NWBZarrIO(path, mode="r+", manager=make_manager())
        try:
            data = io.read().analysis["mean_rate"].data
            with FAULTS.armed(at, kind):
                change(data)
        except BaseException as exc:  # noqa: BLE001 -- judged here
            if not (isinstance(exc, StoreError) and exc.errno == code and str(path) in str(exc)):
                failures.append(f"operation {at} ({FAULTS.fired}): {type(exc).__name__}: {exc}")
        fired = FAULTS.fired is not None
        io.close()  # (a copy: what the failed change stored is committed or not, it is not judged here)
    assert at > 2 and not failures, "\n".join(failures)


@pytest.mark.parametrize(("name", "mode"), [("f.nwb.zarr", "w"), ("f.nwb.zarr.zip", "w"), ("f.nwb.zarr.zip", "a")])
@pytest.mark.parametrize("code", [errno.EROFS, errno.ENOSPC], ids=["erofs", "enospc"])
def test_a_working_directory_that_cannot_be_made_is_ours_with_its_errno(bases, runs, monkeypatch, name, mode, code):
    """Mode ``w`` over a directory, and any zip write, first make a directory beside the file to write in; a
    file system that refuses it (read-only, full) is our StoreError naming the file with the errno (it was the
    bare OSError of ``tempfile.mkdtemp``), and the file and what is beside it stay as they were."""
    path = runs / name
    (shutil.copytree if bases[name].is_dir() else shutil.copy2)(bases[name], path)
    make = os.mkdir

    def refused(where, *args, **kwargs):
        if str(where).endswith(".partial"):
            raise OSError(code, os.strerror(code), where)
        return make(where, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", refused)
    with pytest.raises(StoreError) as raised, NWBZarrIO(path, mode=mode, manager=make_manager()) as io:
        io.write(scenario_nwbfile()) if mode == "w" else io.read()
    monkeypatch.undo()
    assert raised.value.errno == code and raised.value.path == str(path)
    assert not beside(path) and tree(path) == BASE_TREES[name]


def _killed_append(bases: dict[str, Path], where: Path) -> Path:
    """A copy of the base file whose append stopped half-way and was not undone (as by SIGKILL): the root
    marked incomplete, the journal beside it."""
    path = fresh(bases, "append", where)
    with FAULTS.armed() as faults:
        append_three(fresh(bases, "append", where / "count"))
    undo = StoreHandle.rollback
    StoreHandle.rollback = lambda self: setattr(self, "failed", True)  # (nothing undone, nothing committed)
    try:
        with pytest.raises(HdmfZarrError), FAULTS.armed(faults.count // 2, "eio"):
            append_three(path)
    finally:
        StoreHandle.rollback = undo
    assert (path / journal.PREFIX).is_dir()
    return path


def _recover_sweep(bases, kind: str, tmp_path: Path, every: bool) -> None:
    original = tree(bases["f.nwb.zarr"])
    killed = _killed_append(bases, tmp_path / "killed")
    with FAULTS.armed(0, kind) as faults:  # (as _count: what this kind of fault can hit)
        recover(shutil.copytree(killed, tmp_path / "count" / killed.name))
    total = faults.count
    failures = []
    for at in range(1, total + 1) if every else _indices(total, "recover", kind):
        path = shutil.copytree(killed, tmp_path / f"{at}" / killed.name)
        label = f"recover, {kind} at operation {at}"
        try:
            with FAULTS.armed(at, kind):
                recover(path)
        except KeyboardInterrupt:
            if kind != "interrupt":
                failures.append(f"{label}: KeyboardInterrupt")
        except HdmfZarrError as exc:
            if kind == "interrupt" or str(path) not in str(exc):
                failures.append(f"{label}: {exc}")
        except BaseException as exc:  # noqa: BLE001 -- reported
            failures.append(f"{label}: not ours: {type(exc).__name__}: {exc}")
        fired = FAULTS.fired or ""
        if kind != "interrupt" and fired.startswith("os.unlink") and fired.endswith(".lock"):
            break_lock(path)  # the disk refused to delete the lock (see run_once)
        if beside(path):
            failures.append(f"{label}: left beside the file: {beside(path)}")
        recover(path)  # interrupted or not: run again, it finishes the job
        if tree(path) != original:
            failures.append(f"{label}: not restored byte for byte")
        shutil.rmtree(tmp_path / f"{at}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("kind", KINDS)
def test_fault_during_recover(bases, kind, runs):
    _recover_sweep(bases, kind, runs, every=False)


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_fault_during_recover_at_every_operation(bases, kind, runs):
    _recover_sweep(bases, kind, runs, every=True)


@pytest.fixture(scope="module")
def small_disk(tmp_path_factory):
    """A tmpfs of 8 MiB mounted for the test (root only; skipped where it cannot be mounted)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    where = tmp_path_factory.mktemp("tmpfs")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(where)], capture_output=True)
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=True)


def _fill(disk: Path, room: int) -> None:
    """Take every free byte of ``disk`` but ``room``."""
    with open(disk / "filler", "ab") as f:
        block = b"\0" * 65536
        try:
            while True:
                f.write(block)
                f.flush()
        except OSError:
            pass
    size = (disk / "filler").stat().st_size
    os.truncate(disk / "filler", max(0, size - room))


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_real_full_disk(bases, scenario, small_disk):
    """Each write path into a tmpfs with 0 to 512 KiB free: ENOSPC wherever it comes, checked as above."""
    failed = 0
    for room in (0, 4096, 16384, 65536, 262144, 524288):
        where = small_disk / f"{scenario}-{room}"
        try:
            # (operation 0: nothing injected, the disk fails by itself)
            failed += run_once(bases, scenario, "enospc", 0, where, prepare=functools.partial(_fill, small_disk, room))
        finally:
            shutil.rmtree(where, ignore_errors=True)
            (small_disk / "filler").unlink(missing_ok=True)
    assert failed, "the disk never filled up: the test proves nothing"


#: The operation that stores a chunk of a local file: the rename of its temporary into place, named relative
#: to its directory (storage/paths); a chunk's name is its grid index, the temporary's adds 32 hex digits.
CHUNK_STORED = r"os\.replace \d+\.[0-9a-f]{32}\.partial$"


@pytest.mark.parametrize("suffix", [".nwb.zarr", ".nwb.zarr.zip"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_large_edit_cut_short_ends_zarrs_writes_before_the_undo(patched, tmp_path, suffix, kind, caplog):
    """``data[:] = x`` over 300 chunks, cut short at a chunk write half-way: zarr's other chunk writes are
    cancelled and awaited before the undo (none left running, none destroyed pending: asyncio logs nothing), and
    the file is the old one byte for byte."""
    from pynwb import TimeSeries

    from hdmf_zarr3 import NWBZarrIO, ZarrDataIO

    base = tmp_path / f"base{suffix}"
    nwbfile = scenario_nwbfile(8)
    nwbfile.add_acquisition(TimeSeries(name="big", data=ZarrDataIO(np.zeros(300), chunks=(1,)), unit="V", rate=1.0))
    with NWBZarrIO(base, mode="w") as io:
        io.write(nwbfile)

    def edit(path: Path) -> None:
        with NWBZarrIO(path, mode="r+") as io:
            io.read().acquisition["big"].data[:] = np.arange(300.0)

    def copy(name: str) -> Path:
        if base.is_dir():
            return Path(shutil.copytree(base, tmp_path / name / base.name))
        (tmp_path / name).mkdir()
        return Path(shutil.copy2(base, tmp_path / name / base.name))

    before = tree(base)
    with FAULTS.armed(record=True) as faults:
        edit(copy("count"))
    names = faults.names or []
    chunk = re.compile(rf"LocalStore._set .*/big/data/c/|{CHUNK_STORED}")
    chunk_writes = [i for i, name in enumerate(names, 1) if chunk.match(name)]
    assert len(chunk_writes) == 300, faults.names
    path = copy("run")
    caplog.set_level(logging.DEBUG, logger="asyncio")
    with pytest.raises(KeyboardInterrupt if kind == "interrupt" else HdmfZarrError):
        with FAULTS.armed(chunk_writes[150], kind):
            edit(path)
    assert chunk.match(FAULTS.fired or ""), FAULTS.fired  # (a chunk write, with others in flight)
    assert not pending_tasks()
    gc.collect()
    assert not [r.getMessage() for r in caplog.records if r.name == "asyncio"]
    assert tree(path) == before
    assert not beside(path)


@pytest.mark.parametrize("suffix", [".nwb.zarr", ".nwb.zarr.zip"])
def test_a_failed_edit_outside_with_is_undone_at_once_not_committed_by_the_close(patched, tmp_path, suffix):
    """An edit whose chunk write fails, caught by the caller, then ``close()`` (no ``with`` to undo it on the way
    out): the close commits nothing half done, the file is the old one byte for byte."""
    from fault_scenarios import write_edit_base

    from hdmf_zarr3 import NWBZarrIO

    def opened(name: str):
        path = tmp_path / name / f"e{suffix}"
        path.parent.mkdir()
        write_edit_base(path)
        before = tree(path)
        io = NWBZarrIO(path, mode="r+")
        return path, before, io, io.read().acquisition["grid"].data

    _, _, io, grid = opened("count")
    with FAULTS.armed(record=True) as faults:
        grid[1:11, 1:4] = -1.0
    io.close()
    names = faults.names or []
    chunk = re.compile(rf"LocalStore._set .*/grid/data/c/|{CHUNK_STORED}")
    chunk_writes = [i for i, name in enumerate(names, 1) if chunk.match(name)]
    assert len(chunk_writes) == 8, names
    path, before, io, grid = opened("run")
    with pytest.raises(HdmfZarrError, match="Input/output error"), FAULTS.armed(chunk_writes[4], "eio"):
        grid[1:11, 1:4] = -1.0
    io.close()
    assert tree(path) == before
    assert not beside(path)


def test_a_failed_edit_of_a_zip_is_dropped_at_once_and_later_edits_are_kept(patched, tmp_path):
    """A zip opened in ``r+``: an edit that fails is dropped from its working copy at once, so the same io reads
    the zip's values again (not half the edit), and an edit made after it is stored on close."""
    import zipfile

    from fault_scenarios import write_edit_base

    from hdmf_zarr3 import NWBZarrIO

    path = tmp_path / "e.nwb.zarr.zip"
    write_edit_base(path)
    old = np.arange(48.0).reshape(12, 4)
    with NWBZarrIO(path, mode="r+") as io:
        grid = io.read().acquisition["grid"].data
        with pytest.raises(HdmfZarrError, match="Input/output error"), FAULTS.armed(9, "eio"):
            grid[1:11, 1:4] = -1.0
        assert re.match(CHUNK_STORED, FAULTS.fired or ""), FAULTS.fired
        np.testing.assert_array_equal(grid[:], old)  # the zip's values, not half the failed edit
        grid[0, 0] = 100.0
    old[0, 0] = 100.0
    with NWBZarrIO(path, mode="r") as io:
        np.testing.assert_array_equal(io.read().acquisition["grid"].data[:], old)
    with zipfile.ZipFile(path) as archive:
        assert not [n for n in archive.namelist() if "journal" in n or n.endswith(".partial")]
