"""LINDI, measured beside our virtual copies (part g) in a scratch venv of its own: it needs zarr < 3.

In our venv, :func:`measure` creates ``.cache/venv-lindi`` when missing (``pip install lindi``; from the
same base Python as ``.venv``) and runs this file there as ``python _lindi.py PARAMS.json OUT.json``:
it writes the LINDI file of an HDF5 file (its JSON references, the same idea as our virtual
repository) and reads a window and a channel through it, returning the seconds and the sums of what it
read (checked by the caller). Everything is "n/a" when the venv cannot be made.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
VENV = HERE.parent / ".cache" / "venv-lindi"
PYTHON = VENV / "bin" / "python"
DATA = "acquisition/ephys/data"


def _ready() -> bool:
    if PYTHON.exists():
        probe = subprocess.run([str(PYTHON), "-c", "import lindi"], capture_output=True)
        if probe.returncode == 0:
            return True
    print(f"[lindi] creating {VENV.name} (pip install lindi; it needs zarr < 3, so not in .venv)...", flush=True)
    base = getattr(sys, "_base_executable", sys.executable)
    try:
        subprocess.run([base, "-m", "venv", "--clear", str(VENV)], check=True, capture_output=True, timeout=120)
        subprocess.run(
            [str(PYTHON), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "lindi"],
            capture_output=True,
            timeout=600,
        )
    except (subprocess.SubprocessError, OSError) as exc:
        print(f"[lindi] could not create the venv: {exc}", flush=True)
        return False
    return subprocess.run([str(PYTHON), "-c", "import lindi"], capture_output=True).returncode == 0


def measure(src: Path, selections: dict[str, Any], evict: Any) -> dict[str, Any]:
    """LINDI's make and read times for ``src`` (``selections``: name -> [[start, stop] or index, ...])."""
    if not _ready():
        return {}
    out_dir = Path(tempfile.mkdtemp(prefix="lindi_"))
    params = {"src": str(src), "lindi": str(out_dir / "f.lindi.json"), "selections": selections}
    (out_dir / "params.json").write_text(json.dumps(params))
    results: dict[str, Any] = {}
    for step in ("make", "window", "channel"):
        if step != "make":
            evict(src)
        run = subprocess.run(
            [str(PYTHON), __file__, step, str(out_dir / "params.json"), str(out_dir / "out.json")],
            capture_output=True,
            text=True,
            timeout=900,
        )
        if run.returncode != 0:
            print(f"[lindi] {step} failed: {run.stderr.strip().splitlines()[-1:]}", flush=True)
            return results
        results.update(json.loads((out_dir / "out.json").read_text()))
    return results


def _task(step: str, params_path: str, out_path: str) -> None:
    import lindi
    import numpy as np

    params = json.loads(Path(params_path).read_text())
    out: dict[str, Any] = {}
    if step == "make":
        start = time.perf_counter()
        with lindi.LindiH5pyFile.from_hdf5_file(params["src"], url=params["src"]) as f:
            f.write_lindi_file(params["lindi"])
        out["make"] = time.perf_counter() - start
        out["written"] = os.path.getsize(params["lindi"])
    else:
        key = tuple(slice(*s) if isinstance(s, list) else s for s in params["selections"][step])
        f = lindi.LindiH5pyFile.from_lindi_file(params["lindi"])
        data = f[DATA]
        start = time.perf_counter()
        values = np.asarray(data[key])
        out[step] = time.perf_counter() - start
        out[step + "_sum"] = int(values.astype(np.int64).sum())
    Path(out_path).write_text(json.dumps(out))


if __name__ == "__main__":
    _task(*sys.argv[1:4])
