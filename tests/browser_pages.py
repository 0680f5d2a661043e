"""Pages of the viewer rendered by headless Chromium for the tests: the DOM after the page's scripts ran, and a
screenshot of each page kept as a test artefact."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("CI installs chromium (.ci/run): it is missing")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return found


#: Where the screenshot of every page a test renders is kept (a test artefact; git-ignores test-artifacts/).
ARTIFACTS = Path(os.environ.get("HDMF_ZARR3_ARTIFACTS") or Path(__file__).resolve().parents[1] / "test-artifacts")
WINDOW = (1400, 900)


def render(url: str, tmp_path, *extra: str) -> str:
    """The DOM of ``url`` after its scripts ran (Chromium's virtual time lets the fetches finish); a screenshot of
    the page is kept in :data:`ARTIFACTS` ``/view/<test>-<n>.png``."""
    shot = _artefact()
    argv = [chromium(), "--headless", "--disable-gpu", f"--user-data-dir={tmp_path / 'profile'}"]
    if os.geteuid() == 0:  # Chromium's sandbox refuses to run as root (CI containers)
        argv.append("--no-sandbox")
    argv += ["--virtual-time-budget=10000", f"--window-size={WINDOW[0]},{WINDOW[1]}", f"--screenshot={shot}", *extra]
    done = subprocess.run([*argv, "--dump-dom", url], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    header = shot.read_bytes()[:24]  # a PNG of the window: its signature, then its IHDR's width and height
    assert header[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", header[16:24]) == WINDOW, shot
    return done.stdout


def _artefact() -> Path:
    """The next screenshot's path for the running test (its name from pytest, numbered from 1)."""
    test = os.environ.get("PYTEST_CURRENT_TEST", "unknown").split(" ")[0].rsplit("::", 1)[-1]
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", test)[:120]
    folder = ARTIFACTS / "view"
    folder.mkdir(parents=True, exist_ok=True)
    if name not in _SHOTS:  # the test's first page in this run: its shots of an earlier run go
        for old in folder.glob(f"{name}-*.png"):
            old.unlink()
    _SHOTS[name] = _SHOTS.get(name, 0) + 1
    return folder / f"{name}-{_SHOTS[name]}.png"


_SHOTS: dict[str, int] = {}
