"""The rival, hdmf-zarr 0.14, measured in a scratch venv of its own and driven through subprocesses.

In our venv this module creates the scratch venv when missing (``.cache/venv-hdmf-zarr-0.14``, from
the same base Python as ``.venv``; idempotent) and runs measurement tasks in it with :func:`call`.
Run by the scratch venv's Python (``python _rival.py TASK PARAMS.json OUT.json``) it performs one
task with ``hdmf_zarr.nwb.NWBZarrIO`` and writes the results to ``OUT.json`` after every step, so a
task killed at its timeout still reports what it finished. Task parameters and results are JSON.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
VENV = ROOT / ".cache" / "venv-hdmf-zarr-0.14"
PYTHON = VENV / "bin" / "python"
REQUIREMENT = "hdmf-zarr==0.14.*"

_state: dict[str, Any] = {}


# ---------------------------------------------------------------- our side (the driver)


def _installed_version() -> str | None:
    if not PYTHON.exists():
        return None
    probe = subprocess.run(
        [str(PYTHON), "-c", "import hdmf_zarr; print(hdmf_zarr.__version__)"], capture_output=True, text=True
    )
    version = probe.stdout.strip()
    return version if probe.returncode == 0 and version.startswith("0.14") else None


def ensure(install: bool = True) -> str | None:
    """The rival's version, creating its venv first when missing; ``None`` (and a message) on failure.

    Parameters
    ----------
    install : bool
        Create the venv and ``pip install hdmf-zarr==0.14.*`` when it is missing or broken.
    """
    if "version" in _state:
        return _state["version"]
    version = _installed_version()
    if version is None and install:
        print(f"[rival] creating {VENV.relative_to(ROOT)} ({REQUIREMENT}; pip resolves hdmf/pynwb/zarr)...", flush=True)
        base = getattr(sys, "_base_executable", sys.executable)
        try:
            subprocess.run([base, "-m", "venv", "--clear", str(VENV)], check=True, capture_output=True, timeout=120)
            pip = subprocess.run(
                [str(PYTHON), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", REQUIREMENT],
                capture_output=True,
                text=True,
                timeout=600,
            )
            if pip.returncode != 0:
                errors = [ln for ln in pip.stderr.splitlines() if "is ignored: it is neither" not in ln]
                print("[rival] pip install failed:\n  " + "\n  ".join(errors[-10:]), flush=True)
        except (subprocess.SubprocessError, OSError) as exc:
            print(f"[rival] could not create the venv: {exc}", flush=True)
        version = _installed_version()
    if version is None:
        print("[rival] hdmf-zarr 0.14 is NOT available: its measurements and ratios print as n/a.", flush=True)
    _state["version"] = version
    return version


def call(task: str, params: dict[str, Any], timeout: float | None = None) -> dict[str, Any] | None:
    """Run ``task`` in the rival venv and return its results (``None`` if the rival is unavailable).

    Parameters
    ----------
    task : str
        One of the names in :data:`TASKS`.
    params : dict
        JSON-serialisable task parameters.
    timeout : float, optional
        Seconds before the task is killed; its partial results then carry ``"timed_out": True``.
    """
    if ensure() is None:
        return None
    with tempfile.TemporaryDirectory(prefix="hdmf_zarr3_rival_") as tmp:
        params_file, out_file = Path(tmp) / "params.json", Path(tmp) / "out.json"
        params_file.write_text(json.dumps(params))
        proc = subprocess.Popen(
            [str(PYTHON), str(HERE / "_rival.py"), task, str(params_file), str(out_file)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        timed_out = False
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
        result = json.loads(out_file.read_text()) if out_file.exists() else {}
    if timed_out:
        result["timed_out"] = True
    elif proc.returncode != 0:
        tail = "\n  ".join((err or "").strip().splitlines()[-8:])
        print(f"[rival] task {task} failed (exit {proc.returncode}):\n  {tail}", flush=True)
        result["failed"] = True
    return result


# ---------------------------------------------------------------- rival side (the scratch venv)


class _Out:
    """Results of one task, rewritten to disk after every step."""

    def __init__(self, path: str) -> None:
        self.path, self.data = Path(path), {}

    def __setitem__(self, key: str, value: Any) -> None:
        self.data[key] = value
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data))
        tmp.replace(self.path)


def task_versions(p: dict[str, Any], out: _Out) -> None:
    from importlib.metadata import version

    for name in ("hdmf-zarr", "hdmf", "pynwb", "zarr", "numcodecs", "h5py", "numpy"):
        out[name] = version(name)


def task_ephys_write(p: dict[str, Any], out: _Out) -> None:
    import numpy as np
    from _data import ephys_nwbfile
    from _measure import ephys_write
    from hdmf_zarr.nwb import NWBZarrIO

    data = np.fromfile(p["raw"], dtype=np.int16).reshape(-1, p["channels"])
    ephys_write(NWBZarrIO, ephys_nwbfile(data, p["channels"]), p["path"], out.__setitem__)
    with NWBZarrIO(p["path"], mode="r") as io:
        arr = io.read().acquisition["ephys"].data
        codecs = [type(c).__name__ + str(getattr(c, "to_dict", dict)()) for c in arr.compressors]
        out["layout"] = f"chunks {tuple(arr.chunks)}, shards {arr.shards}, compressors {codecs}"


def task_ephys_read(p: dict[str, Any], out: _Out) -> None:
    from _measure import ephys_read
    from hdmf_zarr.nwb import NWBZarrIO

    ephys_read(NWBZarrIO, p["path"], [tuple(w) for w in p["windows"]], p["channel"], p["evict"], out.__setitem__)


def task_small(p: dict[str, Any], out: _Out) -> None:
    from _data import many_small
    from _measure import small_write_read
    from hdmf_zarr.nwb import NWBZarrIO

    nwb = many_small(p["series"], p["units"], p["trials"], rich=p.get("rich", False))
    small_write_read(NWBZarrIO, nwb, p["path"], p["evict"], out.__setitem__)


def task_latency(p: dict[str, Any], out: _Out) -> None:
    from _measure import latency_read
    from hdmf_zarr.nwb import NWBZarrIO

    latency_read(NWBZarrIO, p["path"], p["latency"], out.__setitem__)


def task_appends(p: dict[str, Any], out: _Out) -> None:
    from appends import measure
    from hdmf_zarr.nwb import NWBZarrIO

    for n in p["sizes"]:
        try:
            out[str(n)] = measure(
                NWBZarrIO, str(Path(p["dir"]) / f"appends_{n}_rival.nwb.zarr"), n, p["rows"], p["opens"], p["samples"]
            )
        except Exception as exc:  # an append hdmf-zarr cannot do: its columns print n/a
            out[f"{n} error"] = repr(exc)


TASKS = {
    "versions": task_versions,
    "ephys_write": task_ephys_write,
    "ephys_read": task_ephys_read,
    "small": task_small,
    "latency": task_latency,
    "appends": task_appends,
}


def _child(argv: list[str]) -> None:
    warnings.filterwarnings("ignore")
    task, params, out = argv
    TASKS[task](json.loads(Path(params).read_text()), _Out(out))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] in TASKS:
        _child(sys.argv[1:])
    else:
        print(f"hdmf-zarr 0.14 scratch venv: {ensure() or 'unavailable'} at {VENV}")
