"""The write paths of the fault sweeps (``tests/storage/test_faults.py``) and how one run is judged.

:data:`SCENARIOS` names each write path: what it does to a file, whether it starts from an existing one (a
copy of a base file, :func:`make_bases`), and the file's name. :func:`run_once` runs one with a fault at the
k-th store operation (``tests/faults.py``) and checks what it left: an existing file reads exactly as before,
byte for byte (every file of the tree); a new file does not exist or is refused as incomplete; nothing is left
beside the file nor inside it; the error is ours naming the file with the ``errno`` of the fault, or, for Ctrl-C,
``KeyboardInterrupt`` itself.
"""

from __future__ import annotations

import errno
import importlib.util
import shutil
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from faults import FAULTS, beside, pending_tasks, tree
from full_nwbfile import make_manager
from nwb_factories import small_nwbfile
from pynwb import NWBHDF5IO, TimeSeries

from hdmf_zarr3 import NWBZarrIO, ZarrDataIO, ZarrIO, convert
from hdmf_zarr3.errors import HdmfZarrError, IncompleteFileError


def scenario_nwbfile(n: int = 40):
    nwbfile = small_nwbfile(n)
    nwbfile.add_analysis(TimeSeries(name="mean_rate", data=np.linspace(0, 1, 10), unit="Hz", rate=1.0))
    return nwbfile


def write_base(path: Path) -> None:
    with NWBZarrIO(path, mode="w", manager=make_manager()) as io:
        io.write(scenario_nwbfile())


def _replace(path: Path) -> None:
    with NWBZarrIO(path, mode="w", manager=make_manager()) as io:
        io.write(scenario_nwbfile(60))


def append_three(path: Path) -> None:
    with NWBZarrIO(path, mode="a", manager=make_manager()) as io:
        nwbfile = io.read()
        for i in range(3):
            nwbfile.add_acquisition(
                TimeSeries(name=f"appended_{i}", data=np.arange(20 * (i + 1), dtype="f4"), unit="V", rate=1.0 + i)
            )
        io.write(nwbfile)


def _rows(path: Path) -> None:
    with NWBZarrIO(path, mode="a", manager=make_manager()) as io:
        nwbfile = io.read()
        for t in range(5):
            nwbfile.add_trial(start_time=10.0 + t, stop_time=10.5 + t)
        io.write(nwbfile)


def _grow(path: Path) -> None:
    with NWBZarrIO(path, mode="a", manager=make_manager()) as io:
        data = io.read().analysis["mean_rate"].data
        for i in range(3):
            data.extend(np.linspace(i, i + 1, 4))


def write_edit_base(path: Path) -> None:
    """The file the in-place edits and the sharded growth start from: a 12 x 4 array in 8 chunks of 3 x 2
    and a 1-d array of 10 in shards of 4 (chunks of 2)."""
    nwbfile = small_nwbfile(8)
    grid = ZarrDataIO(np.arange(48.0).reshape(12, 4), chunks=(3, 2))
    nwbfile.add_acquisition(TimeSeries(name="grid", data=grid, unit="V", rate=1.0))
    sharded = ZarrDataIO(np.arange(10.0), chunks=(2,), shards=(4,))
    nwbfile.add_acquisition(TimeSeries(name="sharded", data=sharded, unit="V", rate=1.0))
    with NWBZarrIO(path, mode="w", manager=make_manager()) as io:
        io.write(nwbfile)


def _edit(path: Path, selections: tuple[str, ...]) -> None:
    """Assign in place (mode ``r+``), to the chunked and the sharded array, with each kind of selection."""
    with NWBZarrIO(path, mode="r+", manager=make_manager()) as io:
        acquisition = io.read().acquisition
        grid, sharded = acquisition["grid"].data, acquisition["sharded"].data
        if "slice" in selections:  # every chunk, and the three shards
            grid[1:11, 1:4] = -np.arange(30.0).reshape(10, 3)
            sharded[1:10] = -1.0
        if "index" in selections:  # rows of three chunk rows, columns of both chunk columns; two shards
            grid[[0, 5, 11], [1, 2]] = [[100.0, 101.0], [102.0, 103.0], [104.0, 105.0]]
            sharded[np.array([0, 9])] = [50.0, 59.0]
        if "scalar" in selections:
            grid[7, 2] = 42.0
            sharded[5] = 7.0


def edit_slice(path: Path) -> None:
    _edit(path, ("slice",))


def edit_index(path: Path) -> None:
    _edit(path, ("index",))


def edit_scalar(path: Path) -> None:
    _edit(path, ("scalar",))


def edit_all(path: Path) -> None:
    _edit(path, ("slice", "index", "scalar"))


def grow_sharded(path: Path) -> None:
    """Rows appended to the sharded array past its shape (10 -> 23: the last shard filled, three new ones)."""
    with NWBZarrIO(path, mode="a", manager=make_manager()) as io:
        data = io.read().acquisition["sharded"].data
        data.extend(np.linspace(0, 1, 12))
        data.append(99.0)


def _widen(path: Path) -> None:
    """A unit whose spikes take the ragged index past its ``uint8`` (issue #38): the index array is widened to
    ``uint16`` (its document and every chunk rewritten), then the rows of every column appended."""
    with NWBZarrIO(path, mode="a", manager=make_manager()) as io:
        nwbfile = io.read()
        nwbfile.add_unit(spike_times=np.linspace(0.0, 1.0, 300).tolist(), quality="many")
        io.write(nwbfile)


#: The files the export and conversions read (set by the ``bases`` fixture).
SOURCES: dict[str, Path] = {}


def _export(path: Path) -> None:
    with NWBZarrIO(SOURCES["zarr"], mode="r", manager=make_manager()) as src:
        with NWBZarrIO(path, mode="w", manager=make_manager()) as dst:
            dst.export(src_io=src, write_args={"link_data": False})


def _convert_zarr(path: Path) -> None:
    convert(SOURCES["zarr"], path)


def _convert_hdf5(path: Path) -> None:
    convert(SOURCES["hdf5"], path)


def _convert_virtual(path: Path) -> None:
    """An icechunk repository whose datasets of 64 bytes or more read their chunks in place (every write
    through icechunk's store and session is an operation: ``faults.py``)."""
    convert(SOURCES["hdf5"], path, virtual=True, min_bytes=64)


#: name: (what it does, whether it starts from an existing file, the file's name)
SCENARIOS: dict[str, tuple[Callable[[Path], None], bool, str]] = {
    "write": (write_base, False, "f.nwb.zarr"),
    "replace": (_replace, True, "f.nwb.zarr"),
    "append": (append_three, True, "f.nwb.zarr"),
    "rows": (_rows, True, "f.nwb.zarr"),
    "grow": (_grow, True, "f.nwb.zarr"),
    "widen": (_widen, True, "f.nwb.zarr"),
    "zip_write": (write_base, False, "f.nwb.zarr.zip"),
    "zip_replace": (_replace, True, "f.nwb.zarr.zip"),
    "zip_append": (append_three, True, "f.nwb.zarr.zip"),
    "export": (_export, False, "f.nwb.zarr"),
    "convert_zarr": (_convert_zarr, False, "f.nwb.zarr"),
    "convert_hdf5": (_convert_hdf5, False, "f.nwb.zarr"),
    "edit_slice": (edit_slice, True, "e.nwb.zarr"),
    "edit_index": (edit_index, True, "e.nwb.zarr"),
    "edit_scalar": (edit_scalar, True, "e.nwb.zarr"),
    "grow_sharded": (grow_sharded, True, "e.nwb.zarr"),
    "zip_edit": (edit_all, True, "e.nwb.zarr.zip"),
    "zip_grow_sharded": (grow_sharded, True, "e.nwb.zarr.zip"),
}

if importlib.util.find_spec("icechunk") is not None:
    SCENARIOS["convert_virtual"] = (_convert_virtual, False, "v.icechunk")

#: The scenarios whose finished change is always the same bytes (no new object ids): a run may end only with
#: the old file or that one, byte for byte (a zip: its members), never another file that merely reads whole.
EXACT = frozenset({"edit_slice", "edit_index", "edit_scalar", "grow_sharded", "zip_edit", "zip_grow_sharded"})


#: The base files by name (set by :func:`make_bases`, or by a sweep's worker process).
BASES: dict[str, Path] = {}

#: The errno the error of a run must carry, by the kind of fault (as the ``OSError`` of the store had it).
ERRNOS = {"enospc": errno.ENOSPC, "eio": errno.EIO}

#: A base file's tree (``faults.tree``), read once: every run starts from a copy of it, byte for byte.
BASE_TREES: dict[str, dict[str, bytes]] = {}


def make_bases(root: Path) -> dict[str, Path]:
    """The existing files the scenarios start from (by name), made in ``root``; the sources of the export
    and conversions (:data:`SOURCES`) too."""
    made = {}
    for name in ("f.nwb.zarr", "f.nwb.zarr.zip", "e.nwb.zarr", "e.nwb.zarr.zip"):
        (root / name).parent.mkdir(exist_ok=True)
        (write_edit_base if name.startswith("e.") else write_base)(root / name)
        made[name] = root / name
        BASE_TREES[name] = tree(root / name)
    BASES.update(made)
    SOURCES["zarr"] = root / "source.nwb.zarr"
    write_base(SOURCES["zarr"])
    SOURCES["hdf5"] = root / "source.nwb"
    with NWBHDF5IO(SOURCES["hdf5"], mode="w") as io:
        io.write(scenario_nwbfile())
    return made


def fresh(bases: dict[str, Path], scenario: str, where: Path) -> Path:
    _, existing, name = SCENARIOS[scenario]
    where.mkdir()
    path = where / name
    if existing:
        source = bases[name]
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, path)
    return path


def check_new(path: Path, complete_allowed: bool = False) -> None:
    """A new file a failure stopped: absent, or refused as incomplete; no temporary file in it. A Ctrl-C
    that came after the commit (``complete_allowed``) may leave it complete."""
    if not path.exists() or not [p for p in path.rglob("*") if p.is_file()]:
        return  # (stopped before its first key: the directory may be there, empty)
    assert not [k for k in tree(path) if k.endswith(".partial")], f"temporary files left in {path}"
    if complete_allowed and complete(path):
        return
    with pytest.raises(IncompleteFileError):
        with ZarrIO(path, mode="r") as io:
            io.read_builder()


def run_once(
    bases: dict[str, Path], scenario: str, kind: str, at: int, where: Path, prepare: Callable[[], None] | None = None
) -> bool:
    """Run ``scenario`` with a ``kind`` fault at operation ``at`` (0: none injected; a real disk's error is
    checked as ``kind``); check what it left. Returns whether it failed (False: it completed). ``prepare``
    runs once the file is in place (e.g. fills the disk)."""
    action, existing, _ = SCENARIOS[scenario]
    path = fresh(bases, scenario, where)
    if prepare is not None:
        prepare()
    before = BASE_TREES[SCENARIOS[scenario][2]] if existing else None
    around = beside(path)
    error: BaseException | None = None
    try:
        with FAULTS.armed(at, kind):
            action(path)
    except BaseException as exc:  # noqa: BLE001 -- judged below
        error = exc
    fired = FAULTS.fired
    label = f"{scenario}, {kind} at operation {at} ({fired})"
    assert not pending_tasks(), f"{label}: zarr's tasks still running after the write returned: {pending_tasks()}"
    if error is None:
        if fired is None:
            return False
        # the fault hit an operation whose failure the writer may tolerate: the write must be whole
        with NWBZarrIO(path, mode="r", manager=make_manager()) as io:
            io.read()
    elif kind == "interrupt":
        assert isinstance(error, KeyboardInterrupt), f"{label}: {type(error).__name__}: {error}"
    else:
        assert isinstance(error, HdmfZarrError), f"{label}: not ours: {type(error).__name__}: {error}"
        named = [str(p) for p in (path, *SOURCES.values()) if str(p) in str(error)]
        assert named, f"{label}: the error names neither the file nor its source: {error}"
        assert getattr(error, "errno", None) == ERRNOS[kind], (
            f"{label}: errno {getattr(error, 'errno', None)}, not {ERRNOS[kind]}: {type(error).__name__}: {error}"
        )
    left = set(beside(path)) - set(around)
    if kind != "interrupt" and fired and fired.startswith("os.unlink") and fired.endswith(".lock"):
        left.discard(path.name + ".lock")  # the disk refused to delete the lock: it stays (and says whose)
    assert not left, f"{label}: left beside the file: {left}"
    if error is None:
        return True
    if before is None:
        check_new(path, complete_allowed=kind == "interrupt")
        return True
    after = tree(path)
    if scenario in EXACT and after != before:  # only the finished change, exactly, may be there instead
        assert content(path) == finished(scenario, where.parent), f"{label}: a mix of the old file and the change"
        return True
    if after != before and kind == "interrupt" and complete(path):
        return True  # Ctrl-C after the commit: the new state is whole (the interrupt came too late to undo)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    assert after == before, f"{label}: the file changed: {changed[:10]}"
    return True


#: What each scenario of :data:`EXACT` leaves when nothing fails (``content``), made once per process.
FINISHED: dict[str, dict[str, bytes]] = {}


def finished(scenario: str, where: Path) -> dict[str, bytes]:
    """The ``content`` of the file once ``scenario`` finished without a fault (run once, in ``where``)."""
    if scenario not in FINISHED:
        holder = Path(tempfile.mkdtemp(prefix=f"finished-{scenario}-", dir=where))  # (workers share ``where``)
        path = fresh(BASES, scenario, holder / "run")
        SCENARIOS[scenario][0](path)
        FINISHED[scenario] = content(path)
        shutil.rmtree(holder)
    return FINISHED[scenario]


def content(path: Path) -> dict[str, bytes]:
    """What a file holds: every file of a directory's tree, every member of a zip (whose bytes also record
    when each member was written)."""
    if not path.is_file():
        return tree(path)
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in sorted(archive.namelist())}


def complete(path: Path) -> bool:
    try:
        with NWBZarrIO(path, mode="r", manager=make_manager()) as io:
            io.read()
    except IncompleteFileError:
        return False
    return True
