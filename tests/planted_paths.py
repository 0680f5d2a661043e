"""The planted-path harness of issue #38 (``tests/storage/test_planted_paths.py``): every path a write path
touches, traced in a real run (:mod:`path_trace`), then a plant at each one, in turn, in a fresh copy.

:data:`WRITE_PATHS` names each write path: what it does to the file of a case directory, the base file it starts
from (a copy of one of ``fault_scenarios.make_bases``; ``None``: a new file), what is done to the copy first, and
what a successful run leaves. :func:`targets` traces one twice and keeps one path per role
(:func:`role_of`: a group or array directory, a node document, a chunk, a journal entry, a side file, each as
existing or new); a name only one of the two runs touched holds a random token (a temporary made with
``O_EXCL`` or ``mkdtemp``) and is not planted. :func:`plant` puts one of :data:`PLANTS` there:

``symlink out``
    a symlink to a sentinel outside the file (an existing directory's or file's content moved there first, so
    the file reads the same through it: the probe's shipped-as-a-symlink case); never at the file's own name,
    which is the caller's (a symlink there is followed, as a reader follows it);
``dangling symlink``
    a symlink to a name outside that does not exist (nothing may create it);
``fifo``
    a named pipe (nothing may wait on it);
``directory``
    an empty directory where a file goes (none where a directory already is).

:func:`judge` runs the write path in a thread with a generous timeout (:data:`HANG_SECONDS`) that fails instead
of hanging. A case passes when nothing outside changed (the sentinel tree, compared before and after) and either
the run failed with an :class:`~hdmf_zarr3.errors.HdmfZarrError` naming the planted path (:func:`names_the_plant`)
and left the case directory exactly as it was, or the run succeeded without going through the plant (a plant
inside a file mode ``w`` replaces goes with the old file) and the result reads back as that write path expects.
One allowance: a plant where the write makes a new node goes, unlinked as a link, with that node's directory when
the failed write is undone.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import fault_scenarios
from bounded_calls import returns_within
from full_nwbfile import make_manager
from path_trace import tracing
from pynwb import NWBHDF5IO, TimeSeries

from hdmf_zarr3 import NWBZarrIO, convert, recover
from hdmf_zarr3.errors import HdmfZarrError

JOURNAL = "__hdmf_zarr3_journal"


bounded = returns_within  # (the harness's name for it)


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


def interrupted_append(path: Path) -> None:
    """Leave ``path`` as an append killed half way would: journal kept, root marked, new nodes written."""
    from hdmf_zarr3.storage import handles as stores

    commit = stores.StoreHandle.commit
    stores.StoreHandle.commit = lambda self, *args, **kwargs: None  # the commit never happens: as if killed before it
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
    "recover": WritePath(_recover, "f.nwb.zarr", "f.nwb.zarr", _expect(), prepare=interrupted_append),
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


#: Seconds a case may take before it counts as hung (a write waiting on a FIFO): the small file is written in
#: 1-3 s on a loaded machine, so this is generous, and a sweep with a hang still ends in minutes.
HANG_SECONDS = 30.0


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


def sweep(bases: Path, scratch: Path, name: str, kind: str, chosen: Callable[[Target], bool]) -> tuple[int, list[str]]:
    """Judge every chosen target of write path ``name`` with a ``kind`` plant; (cases run, failures)."""
    failures, runs = [], 0
    for n, target in enumerate(t for t in targets(bases, scratch, name) if chosen(t)):
        outcome = judge(bases, name, target, kind, scratch / f"{name}-{kind}-{n}")
        runs += 1
        if outcome is not None:
            failures.append(outcome)
    return runs, failures
