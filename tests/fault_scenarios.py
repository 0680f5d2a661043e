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
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from faults import FAULTS, beside, tree
from full_nwbfile import make_manager
from nwb_factories import small_nwbfile
from pynwb import NWBHDF5IO, TimeSeries

from hdmf_zarr3 import NWBZarrIO, ZarrIO, convert
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


#: name: (what it does, whether it starts from an existing file, the file's name)
SCENARIOS: dict[str, tuple[Callable[[Path], None], bool, str]] = {
    "write": (write_base, False, "f.nwb.zarr"),
    "replace": (_replace, True, "f.nwb.zarr"),
    "append": (append_three, True, "f.nwb.zarr"),
    "rows": (_rows, True, "f.nwb.zarr"),
    "grow": (_grow, True, "f.nwb.zarr"),
    "zip_write": (write_base, False, "f.nwb.zarr.zip"),
    "zip_replace": (_replace, True, "f.nwb.zarr.zip"),
    "zip_append": (append_three, True, "f.nwb.zarr.zip"),
    "export": (_export, False, "f.nwb.zarr"),
    "convert_zarr": (_convert_zarr, False, "f.nwb.zarr"),
    "convert_hdf5": (_convert_hdf5, False, "f.nwb.zarr"),
}


#: The errno the error of a run must carry, by the kind of fault (as the ``OSError`` of the store had it).
ERRNOS = {"enospc": errno.ENOSPC, "eio": errno.EIO}

#: A base file's tree (``faults.tree``), read once: every run starts from a copy of it, byte for byte.
BASE_TREES: dict[str, dict[str, bytes]] = {}


def make_bases(root: Path) -> dict[str, Path]:
    """The existing files the scenarios start from (by name), made in ``root``; the sources of the export
    and conversions (:data:`SOURCES`) too."""
    made = {}
    for name in ("f.nwb.zarr", "f.nwb.zarr.zip"):
        (root / name).parent.mkdir(exist_ok=True)
        write_base(root / name)
        made[name] = root / name
        BASE_TREES[name] = tree(root / name)
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
        lock_error = (error.path or "").endswith(".lock")  # (the write lock's own errno: its own slice of #38)
        assert getattr(error, "errno", None) == ERRNOS[kind] or lock_error, (
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
    if after != before and kind == "interrupt" and complete(path):
        return True  # Ctrl-C after the commit: the new state is whole (the interrupt came too late to undo)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    assert after == before, f"{label}: the file changed: {changed[:10]}"
    return True


def complete(path: Path) -> bool:
    try:
        with NWBZarrIO(path, mode="r", manager=make_manager()) as io:
            io.read()
    except IncompleteFileError:
        return False
    return True
