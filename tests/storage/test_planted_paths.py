"""Writes touch only regular files and directories inside the file (issue #38): a symlink, a dangling symlink, a
FIFO or a directory planted where a write goes is refused with our error naming it, nothing outside the file
changes, nothing hangs, and the file is as before.

The first tests are the probe's cases (a group directory symlinked out of the file, written through by modes
``a`` and ``r+`` and by ``recover``). The harness below them traces every path each write path of
:data:`WRITE_PATHS` touches in a real run (:mod:`path_trace`: opened for writing, created, renamed, linked,
deleted, and every directory on the way) and plants at each one, in turn, each of :data:`PLANTS`, each time in a
fresh copy:

``symlink out``
    a symlink to a sentinel outside the file (an existing directory's or file's content moved there first, so
    the file reads the same through it: the probe's shipped-as-a-symlink case);
``dangling symlink``
    a symlink to a name outside that does not exist (nothing may create it);
``fifo``
    a named pipe (nothing may wait on it);
``directory``
    an empty directory where a file goes (none where a directory already is).

Each case runs in a thread with a generous timeout that fails instead of hanging. It passes when nothing outside
changed (the sentinel tree, compared before and after) and either the run failed with an
:class:`~hdmf_zarr3.errors.HdmfZarrError` naming the planted path (on disk, or as the node and key inside the
file) and left the case directory exactly as it was (the plant included), or the run succeeded without going
through the plant (a plant inside a file that mode ``w`` replaces goes with the old file; a stale temporary is
removed as a link) and the result reads back as that write path expects.

The paths are deduplicated by role (one per kind of key: a group or array directory, a node document, a chunk, a
journal entry, each as existing or new), and names holding a random token (temporaries) are not planted: they
are created exclusively (``O_EXCL``), never through a name that exists. The exhaustive sweep is marked
``slow``; :data:`FAST_CASES` run always. Plants beside the file (the lock, a zip being written, working copies,
an HDF5 destination's temporary) are swept by ``test_side_file_plants`` (:data:`SIDE_FILE_PLANTS`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import fault_scenarios
import pytest
from full_nwbfile import make_manager
from path_trace import tracing
from pynwb import NWBHDF5IO, TimeSeries
from writing import write_nwb

from hdmf_zarr3 import NWBZarrIO, convert, recover
from hdmf_zarr3.errors import HdmfZarrError, UnsafeDataError

JOURNAL = "__hdmf_zarr3_journal"


def bounded(function, *args, seconds: float = 60.0):
    """``function(*args)`` run in a thread: its value, or its exception raised here; the test fails (instead of
    hanging) when it has not ended within ``seconds``."""
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["value"] = function(*args)
        except BaseException as exc:  # handed to the test
            outcome["error"] = exc

    worker = threading.Thread(target=run, daemon=True, name="planted-path-case")
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"{getattr(function, '__name__', function)} blocked for more than {seconds} s"
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome.get("value")


def state(directory: Path) -> dict[str, object]:
    """Everything below ``directory``: each file's bytes, each symlink's target, each FIFO and directory."""
    out: dict[str, object] = {}
    for base, dirs, names in os.walk(directory):
        for name in dirs + names:
            path = os.path.join(base, name)
            key = os.path.relpath(path, directory)
            info = os.lstat(path)
            if os.path.islink(path):
                out[key] = ("symlink", os.readlink(path))
            elif os.path.isdir(path):
                out[key] = "directory"
            elif os.path.isfile(path):
                with open(path, "rb") as handle:
                    out[key] = handle.read()
            else:
                out[key] = ("special", info.st_mode)
    return out


@pytest.fixture
def symlinked_group(tmp_path: Path) -> tuple[Path, Path]:
    """A file whose ``acquisition/`` directory is a symlink to ``outside`` (which holds its content)."""
    path = write_nwb(tmp_path / "f.nwb.zarr")
    outside = tmp_path / "outside"
    shutil.move(str(path / "acquisition"), outside)
    os.symlink(outside, path / "acquisition")
    return path, outside


def _append_series(path: Path) -> None:
    with NWBZarrIO(path, mode="a") as io:
        nwb = io.read()
        nwb.add_acquisition(TimeSeries(name="late", data=[1.0, 2.0, 3.0], unit="V", rate=1.0))
        io.write(nwb)


def _change_chunk(path: Path) -> None:
    with NWBZarrIO(path, mode="r+") as io:
        io.read().acquisition["ts"].data[0:3] = [9.0, 9.0, 9.0]


@pytest.mark.parametrize("write", [_append_series, _change_chunk], ids=["a adds a container", "r+ changes a chunk"])
def test_a_write_never_goes_through_a_symlinked_group(symlinked_group: tuple[Path, Path], write) -> None:
    path, outside = symlinked_group
    before_file, before_outside = state(path), state(outside)
    with pytest.raises(HdmfZarrError) as caught:
        bounded(write, path)
    assert str(path / "acquisition") in str(caught.value)
    assert state(outside) == before_outside  # (before #38: 4 objects added there, or a chunk changed)
    assert state(path) == before_file


def test_recover_never_deletes_or_writes_through_a_symlinked_group(tmp_path: Path) -> None:
    """A journal naming keys below a group that is a symlink (planted after the crash): recover refuses, and
    neither deletes the files it leads to nor writes the journal's bytes into them."""
    path = write_nwb(tmp_path / "f.nwb.zarr")
    _interrupted_append(path)
    project = tmp_path / "project"
    project.mkdir()
    (project / "results.csv").write_text("precious results\n")
    (project / "notes.txt").write_text("keep me\n")
    entries = path / JOURNAL
    (entries / "saved").mkdir(exist_ok=True)
    (entries / "saved" / "acquisition%2Fresults.csv").write_bytes(b"the journal's bytes")
    (entries / "absent").mkdir(exist_ok=True)
    (entries / "absent" / "acquisition%2Fnotes.txt").write_bytes(b"")
    shutil.rmtree(path / "acquisition")
    os.symlink(project, path / "acquisition")
    before_project = state(project)
    with pytest.raises(UnsafeDataError) as caught:
        bounded(recover, path)
    assert caught.value.path == str(path / "acquisition")
    assert state(project) == before_project  # (before #38: notes.txt deleted, results.csv overwritten)
    assert (entries / "root").is_file()  # the journal is kept: nothing was applied


def _interrupted_append(path: Path) -> None:
    """Leave ``path`` as an append killed half way would: journal kept, root marked, new nodes written."""
    from hdmf_zarr3.storage.stores import opening as stores

    commit = stores.StoreHandle.commit
    stores.StoreHandle.commit = lambda self: None  # the commit never happens: as if killed before it
    try:
        io = NWBZarrIO(path, mode="a")
        nwb = io.read()
        nwb.add_acquisition(TimeSeries(name="late", data=[1.0, 2.0, 3.0], unit="V", rate=1.0))
        nwb.add_trial(start_time=7.0, stop_time=8.0)
        io.write(nwb)
        io.store_handle.lock.release()
        io._open_file.handle = None  # dropped without closing, like a killed process
    finally:
        stores.StoreHandle.commit = commit
    assert (path / JOURNAL / "root").is_file()
    json.loads((path / JOURNAL / "root").read_bytes())


def test_parallel_workers_write_through_the_guarded_store(symlinked_group: tuple[Path, Path]) -> None:
    """The store a worker process of a parallel write reopens refuses a symlinked group like the parent's."""
    from zarr.core.buffer import default_buffer_prototype

    from hdmf_zarr3.backend.write import parallel

    path, outside = symlinked_group
    before = state(outside)
    saved = dict(parallel._WORKER)
    try:
        parallel._start_worker(str(path), {}, None)
        store = parallel._WORKER["store"]
        with pytest.raises(UnsafeDataError) as caught:
            store.set_sync("acquisition/ts/data/c/0", default_buffer_prototype().buffer.from_bytes(b"\0" * 8))
        assert caught.value.path == str(path / "acquisition")
    finally:
        parallel._WORKER["pools"].close()
        parallel._WORKER.clear()
        parallel._WORKER.update(saved)
    assert state(outside) == before


# --- the harness ---------------------------------------------------------------------------------------------

PLANTS = ("symlink out", "dangling symlink", "fifo", "directory")
#: Traced operations that change what a name holds (reads of existing keys are the guarded reader's).
WRITING = {
    "open-write", "mkdir", "rename", "link", "remove", "rmdir", "rmtree", "truncate", "mkstemp", "mkdtemp",
    "copy", "move", "paths.create", "paths.mkdir", "paths.rename", "paths.link", "paths.unlink", "paths.rmtree",
}  # fmt: skip


def _write_new(path: Path) -> None:
    fault_scenarios.write_base(path)


def _write_new_exclusive(path: Path) -> None:
    with NWBZarrIO(path, mode="w-", manager=make_manager()) as io:
        io.write(fault_scenarios.scenario_nwbfile())


def _change_a_chunk(path: Path) -> None:
    with NWBZarrIO(path, mode="r+", manager=make_manager()) as io:
        io.read().analysis["mean_rate"].data[0:3] = [7.0, 7.0, 7.0]


def _recover(path: Path) -> None:
    recover(path)


def _break_lock(path: Path) -> None:
    from hdmf_zarr3 import break_lock

    break_lock(path)


def _convert_hdf5(path: Path) -> None:
    convert(fault_scenarios.SOURCES["hdf5"], path)


def _convert_to_hdf5(path: Path) -> None:
    convert(fault_scenarios.SOURCES["zarr"], path)


def _leave_a_stale_lock(path: Path) -> None:
    """The lock a writer killed while it held the file leaves behind (its bytes, copied while it was held)."""
    lock = Path(f"{path}.lock")
    with NWBZarrIO(path, mode="a", manager=make_manager()):
        held = lock.read_bytes()
    lock.write_bytes(held)


def _expect(*, acquisition: tuple[str, ...] = ("ts",), trials: int = 2, rate: float | None = None):
    def check(path: Path) -> None:
        if path.suffix == ".nwb":
            with NWBHDF5IO(str(path), mode="r") as io:
                nwb = io.read()
                assert sorted(nwb.acquisition) == sorted(acquisition) and len(nwb.trials) == trials
            return
        with NWBZarrIO(path, mode="r", manager=make_manager()) as io:
            nwb = io.read()
            assert sorted(nwb.acquisition) == sorted(acquisition) and len(nwb.trials) == trials
            if rate is not None:
                assert nwb.analysis["mean_rate"].data[0] == rate

    return check


@dataclass(frozen=True)
class WritePath:
    """One write path: what it does to the file ``file`` of a case directory, which base file it starts from (a
    copy; ``None``: a new file), what is done to the copy first, and what a successful run leaves."""

    run: Callable[[Path], None]
    file: str
    base: str | None
    check: Callable[[Path], None]
    prepare: Callable[[Path], None] | None = None


APPENDED = ("ts", "appended_0", "appended_1", "appended_2")
BASE = "f.nwb.zarr"
WRITE_PATHS: dict[str, WritePath] = {
    "w new": WritePath(_write_new, "f.nwb.zarr", None, _expect()),
    "w over existing": WritePath(fault_scenarios.SCENARIOS["replace"][0], "f.nwb.zarr", "f.nwb.zarr", _expect()),
    "w- new": WritePath(_write_new_exclusive, "f.nwb.zarr", None, _expect()),
    "a adds containers": WritePath(fault_scenarios.append_three, BASE, BASE, _expect(acquisition=APPENDED)),
    "r+ changes a chunk": WritePath(_change_a_chunk, "f.nwb.zarr", "f.nwb.zarr", _expect(rate=7.0)),
    "a appends rows": WritePath(fault_scenarios.SCENARIOS["rows"][0], "f.nwb.zarr", "f.nwb.zarr", _expect(trials=7)),
    "recover": WritePath(_recover, "f.nwb.zarr", "f.nwb.zarr", _expect(), prepare=_interrupted_append),
    "break_lock": WritePath(_break_lock, "f.nwb.zarr", "f.nwb.zarr", _expect(), prepare=_leave_a_stale_lock),
    "zip w": WritePath(_write_new, "f.nwb.zarr.zip", None, _expect()),
    "zip a": WritePath(fault_scenarios.append_three, "f.nwb.zarr.zip", "f.nwb.zarr.zip", _expect(acquisition=APPENDED)),
    "convert hdf5 to dir": WritePath(_convert_hdf5, "f.nwb.zarr", None, _expect()),
    "convert hdf5 to zip": WritePath(_convert_hdf5, "f.nwb.zarr.zip", None, _expect()),
    "convert zarr to hdf5": WritePath(_convert_to_hdf5, "f.nwb", None, _expect()),
}  # fmt: skip


@dataclass(frozen=True)
class Target:
    """A traced path to plant at: relative to the case directory, whether the run made it a directory, whether
    it existed before the run, and its role (what kind of key it is)."""

    path: str
    directory: bool
    existed: bool
    role: tuple[str, ...]

    @property
    def beside(self) -> bool:
        """Whether it lies beside the file (a side file, or the file's own name) rather than inside it."""
        return os.sep not in self.path


_CHUNK = re.compile(r"c|\d+|c[./]\d+([./]\d+)*")
_RANDOM = re.compile(r"[0-9a-f]{32}|\.[A-Za-z0-9_]{8}\.(partial|previous)$|[0-9a-f]{8}\.previous$")


def _component_role(name: str, inside_journal: bool) -> str:
    if name == "zarr.json":
        return "document"
    if name == JOURNAL:
        return "journal"
    if inside_journal:
        return "journal entry" if name not in ("root", "saved", "absent", "new") else name
    if _CHUNK.fullmatch(name):
        return "chunk"
    return "node"


def role_of(relative: str, file: str, directory: bool, existed: bool) -> tuple[str, ...]:
    """What kind of path ``relative`` is (one planted per role): where it lies, what its last name is, whether
    it is a directory and whether it existed."""
    parts = relative.split(os.sep)
    first = "F" if parts[0] == file else parts[0].replace(file, "F", 1)
    inside_journal = JOURNAL in parts
    last = _component_role(parts[-1], inside_journal and parts[-1] != JOURNAL) if len(parts) > 1 else first
    depth = "top" if len(parts) == 2 else "deep" if len(parts) > 2 else "beside"
    return (first if len(parts) == 1 else "F", depth, last, "dir" if directory else "file", "old" if existed else "new")


def _fresh_case(bases: Path, write_path: WritePath, where: Path) -> Path:
    where.mkdir(parents=True)
    path = where / write_path.file
    if write_path.base is not None:
        source = bases / write_path.base
        (shutil.copytree if source.is_dir() else shutil.copy2)(
            source, path, **({"symlinks": True} if source.is_dir() else {})
        )
    if write_path.prepare is not None:
        write_path.prepare(path)
    return path


def _traced(bases: Path, write_path: WritePath, where: Path) -> tuple[set[str], set[str], dict[str, bool]]:
    """(paths written, of them directories made, paths that existed: whether each was a directory) of one real
    run, relative to the case directory."""
    path = _fresh_case(bases, write_path, where)
    existed = {
        os.path.relpath(os.path.join(base, name), where): name in dirs
        for base, dirs, names in os.walk(where)
        for name in dirs + names
    }
    with tracing() as trace:
        write_path.run(path)
    written = set(trace.below(where, *WRITING))
    made = set(trace.below(where, "mkdir", "paths.mkdir", "mkdtemp"))
    removed = trace.below(where, "rename", "rmtree", "paths.rename", "paths.rmtree")
    if any(r == write_path.file or r.startswith(write_path.file + ".") for r in removed):
        # the file itself swapped out (mode w; the exchange is a renameat2 no audit event shows) and its old
        # copy deleted: everything that was in it is touched
        written.update(r for r in existed if r.startswith(write_path.file + os.sep))
    for relative in list(written):  # every directory on the way inside the case (a group a write goes through)
        parent = os.path.dirname(relative)
        while parent:
            written.add(parent)
            made.add(parent) if parent not in existed else None
            parent = os.path.dirname(parent)
    return {w for w in written if w != "."}, made, existed


_TARGETS: dict[str, list[Target]] = {}


def targets(bases: Path, scratch: Path, name: str) -> list[Target]:
    """The paths to plant at for write path ``name``: traced twice (a name only one run touched holds a random
    token), one per role."""
    if name not in _TARGETS:
        write_path = WRITE_PATHS[name]
        first, made, existed = _traced(bases, write_path, scratch / f"{name}-trace-1")
        second, _, _ = _traced(bases, write_path, scratch / f"{name}-trace-2")
        chosen: dict[tuple[str, ...], Target] = {}
        for relative in sorted(first & second, key=lambda r: (r.count(os.sep), r)):
            if _RANDOM.search(os.path.basename(relative)):
                continue
            directory = relative in made or existed.get(relative, False)
            role = role_of(relative, write_path.file, directory, relative in existed)
            chosen.setdefault(role, Target(relative, directory, relative in existed, role))
        _TARGETS[name] = list(chosen.values())
    return _TARGETS[name]


def _sentinel(outside: Path) -> None:
    (outside / "sub").mkdir(parents=True)
    (outside / "sentinel.bin").write_bytes(b"outside the file")
    (outside / "sub" / "zarr.json").write_bytes(b'{"outside": true}')


def plant(case: Path, target: Target, kind: str, outside: Path) -> list[str] | None:
    """Put a ``kind`` plant at ``target`` in ``case`` (see the module's description); ``None`` when that plant
    makes no sense there (a directory where a directory is). Returns the paths made for it: the plant and the
    directories created to hold it (where the write makes a new node)."""
    place = case / target.path
    if kind == "directory" and target.directory:
        return None
    if kind == "symlink out" and target.role[:3] == ("F", "beside", "F"):
        return None  # the file's own name is the caller's: a symlink there is followed, as a reader follows it
    made = [target.path]
    parent = place.parent
    while not parent.exists():
        made.append(os.path.relpath(parent, case))
        parent = parent.parent
    place.parent.mkdir(parents=True, exist_ok=True)
    exists = os.path.lexists(place)
    if kind == "symlink out":
        if exists and place.is_dir():
            shutil.move(str(place), outside / "moved")
            os.symlink(outside / "moved", place)
        elif exists:
            shutil.copy2(place, outside / "moved-file")
            place.unlink()
            os.symlink(outside / "moved-file", place)
        else:
            os.symlink(outside / ("sub" if target.directory else "sentinel.bin"), place)
        return made
    if exists:
        shutil.rmtree(place) if place.is_dir() and not place.is_symlink() else place.unlink()
    if kind == "dangling symlink":
        os.symlink(outside / "missing", place)
    elif kind == "fifo":
        os.mkfifo(place)
    else:
        place.mkdir()
    return made


def names_the_plant(error: BaseException, case: Path, target: Target, new_file: bool) -> bool:
    """Whether ``error`` names the planted path: on disk, relative to the file, or as a node and a key below it.
    The file is named instead when the plant made it no Zarr file: a new file's directory holding the plant (it
    is refused before anything is written), or the root document."""
    message = str(error)
    if str(case / target.path) in message:
        return True
    parts = target.path.split(os.sep)
    if (new_file or parts[1:] == ["zarr.json"]) and f"{case / parts[0]}:" in message:
        return True
    inner = target.path.split(os.sep)[1:]
    if not inner:
        return target.path in message
    for cut in range(len(inner), 0, -1):
        head, tail = "/".join(inner[:cut]), "/".join(inner[cut:])
        if head in message and tail in message:
            return True
    return False


def _unblock(place: Path) -> None:
    """Let a thread stuck opening the FIFO ``place`` go on (a failed case must not hang the rest)."""
    with contextlib.suppress(OSError):
        os.close(os.open(place, os.O_RDWR | os.O_NONBLOCK))


#: Seconds a case may take before it counts as hung (a write waiting on a FIFO); generous: CI machines are slow.
HANG_SECONDS = 120.0


def judge(bases: Path, name: str, target: Target, kind: str, where: Path) -> str | None:
    """Run write path ``name`` with a ``kind`` plant at ``target`` in a fresh copy; what went wrong, or ``None``."""
    write_path = WRITE_PATHS[name]
    case, outside = where / "case", where / "outside"
    path = _fresh_case(bases, write_path, case)
    _sentinel(outside)
    made = plant(case, target, kind, outside)
    if made is None:
        return None
    before, before_outside = state(case), state(outside)
    error: BaseException | None = None
    try:
        bounded(write_path.run, path, seconds=HANG_SECONDS)
    except AssertionError as exc:
        if "blocked for more than" in str(exc):
            _unblock(case / target.path)
            return f"{name}: {kind} at {target.path}: hung"
        error = exc
    except BaseException as exc:  # noqa: BLE001 -- judged below
        error = exc
    problems = []
    if state(outside) != before_outside or os.path.lexists(outside / "missing"):
        problems.append("changed what lies outside the file")
    if error is None:
        try:
            write_path.check(path)
        except Exception as exc:  # noqa: BLE001 -- reported
            problems.append(f"succeeded, but the result is wrong: {type(exc).__name__}: {exc}")
    elif not isinstance(error, HdmfZarrError):
        problems.append(f"not our error: {type(error).__name__}: {error}")
    else:
        if not names_the_plant(error, case, target, write_path.base is None):
            problems.append(f"the error does not name it: {error}")
        after = state(case)
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        if not target.existed and all(k in made and k not in after for k in changed):
            changed = []  # a plant where the write makes a new node goes with that node when the write is undone
        if changed:
            problems.append(f"the case directory changed: {changed[:6]}")
    return f"{name}: {kind} at {target.path} {target.role}: " + "; ".join(problems) if problems else None


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The base files the write paths copy, and the sources of the conversions (``fault_scenarios``)."""
    root = tmp_path_factory.mktemp("planted-bases")
    fault_scenarios.make_bases(root)
    return root


def sweep(bases: Path, scratch: Path, name: str, kind: str, chosen: Callable[[Target], bool]) -> tuple[int, list[str]]:
    """Judge every chosen target of write path ``name`` with a ``kind`` plant; (cases run, failures)."""
    failures, runs = [], 0
    for n, target in enumerate(t for t in targets(bases, scratch, name) if chosen(t)):
        outcome = judge(bases, name, target, kind, scratch / f"{name}-{kind}-{n}")
        runs += 1
        if outcome is not None:
            failures.append(outcome)
    return runs, failures


def _inside(target: Target) -> bool:
    return not target.beside


def _beside(target: Target) -> bool:
    return target.beside


#: Write paths that touch nothing inside a file (a zip's members are written into the archive, an HDF5 file is
#: one file, break_lock touches only the lock): swept by ``test_side_file_plants`` alone.
NOTHING_INSIDE = {"break_lock", "zip w", "zip a", "convert hdf5 to zip", "convert zarr to hdf5"}
#: The representative subset run always: each kind of plant, in the write paths the probe found writing outside.
FAST_CASES = [
    ("a adds containers", "symlink out"),
    ("r+ changes a chunk", "fifo"),
    ("a appends rows", "dangling symlink"),
    ("recover", "symlink out"),
    ("w over existing", "directory"),
    ("convert hdf5 to dir", "fifo"),
]
INSIDE_PLANTS = [(name, kind) for name in WRITE_PATHS if name not in NOTHING_INSIDE for kind in PLANTS]
#: Plants beside the file (its lock, a zip being written or appended to, the file's own name, an HDF5
#: destination): the side files' own engineer's (issue #38, slice "beside"); see the report of slice "paths".
SIDE_FILE_PLANTS = [(name, kind) for name in WRITE_PATHS for kind in PLANTS]


def _assert_sweep(bases: Path, scratch: Path, name: str, kind: str, chosen: Callable[[Target], bool]) -> None:
    runs, failures = sweep(bases, scratch, name, kind, chosen)
    assert runs, f"{name}: nothing traced to plant at"
    assert not failures, f"{len(failures)} of {runs} plants failed:\n  " + "\n  ".join(failures)


@pytest.mark.parametrize(("name", "kind"), FAST_CASES)
def test_planted_paths_inside_the_file(bases: Path, tmp_path: Path, name: str, kind: str) -> None:
    _assert_sweep(bases, tmp_path, name, kind, _inside)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "kind"), INSIDE_PLANTS)
def test_every_traced_path_inside_the_file(bases: Path, tmp_path: Path, name: str, kind: str) -> None:
    _assert_sweep(bases, tmp_path, name, kind, _inside)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "kind"), SIDE_FILE_PLANTS)
def test_side_file_plants(bases: Path, tmp_path: Path, name: str, kind: str) -> None:
    _assert_sweep(bases, tmp_path, name, kind, _beside)
