"""Venvs of their own for the real tools the peer tests run (dandi-cli, neuroconv, older zarr-python), under
``.cache/``, created from the package index when missing.

A venv is made without pip (``python -m venv --without-pip``) and filled by this environment's pip pointed
at it (``pip --python``), without compiling bytecode at install (``--no-compile``): measured on zarr-python
3.1.5, 1.4 s instead of 6.7 s with the venv's own pip; dandi-cli 7.7 s instead of 18.7 s. A tool then
compiles what it imports (a fraction of what it installs) once, when first run in :func:`tool_env` (which
lets it write its bytecode, whatever ``PYTHONDONTWRITEBYTECODE`` this session has).

A venv is used only once a marker written after its last install is there; one cut short (Ctrl-C, a full
disk) is made again from scratch. One process at a time makes a venv (a lock file beside it).
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from _peer_runs import offline_env

CACHE = Path(__file__).resolve().parents[1] / ".cache"
#: Written into a venv after its last install.
COMPLETE = ".hdmf-zarr3-complete"


def peer_venv(name: str, requirements: Sequence[str]) -> Path:
    """The venv ``.cache/<name>`` with ``requirements`` installed (made once, by one process at a time: two
    test processes wanting it wait for each other); its folder."""
    CACHE.mkdir(exist_ok=True)
    with open(CACHE / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _made(CACHE / name, requirements)


def _made(venv: Path, requirements: Sequence[str]) -> Path:
    marker = venv / COMPLETE
    wanted = "\n".join(requirements)
    if marker.exists() and marker.read_text() == wanted:
        return venv
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q", "--no-compile"]
    subprocess.run([*pip, *requirements], check=True, timeout=1800)
    marker.write_text(wanted)
    return venv


def tool_env() -> dict[str, str]:
    """The environment a tool of a peer venv runs in: offline (``offline_env``), none of our paths, its bytecode
    written (see the module's description)."""
    env = offline_env()
    env["PYTHONPATH"] = ""
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env
