"""Fetch and unpack the source distribution of the installed pynwb.

The pynwb wheel ships ``pynwb.testing`` but not pynwb's own test-suite nor its
``tests/back_compat/*.nwb`` files; the sdist has both.  ``pynwb_sdist_dir()``
downloads the sdist for exactly the installed pynwb version with pip (the only
network access this module does), unpacks it into a cache directory and
returns the unpacked root, e.g. ``<cache>/pynwb-sdist/pynwb-4.2.0``.

Cache location: ``$HDMF_ZARR3_CACHE/pynwb-sdist`` if that environment variable
is set, otherwise ``<repo>/.cache/pynwb-sdist`` (``.cache/`` is gitignored).

The function is idempotent, and safe to call from concurrent processes: each
caller works in its own temporary directory and publishes the finished tree
with a single atomic ``os.rename``.  Whoever loses the race uses the winner's tree.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
CACHE_ENV = "HDMF_ZARR3_CACHE"
DOWNLOAD_TIMEOUT = 900  # seconds; pip builds the sdist's metadata in an isolated env, which takes a while

# Paths that must exist in an unpacked sdist for it to be usable by our tests.
_REQUIRED = ("tests/integration/hdf5", "tests/back_compat")


def cache_dir() -> Path:
    """Directory that holds unpacked pynwb sdists (one sub-directory per version)."""
    base = os.environ.get(CACHE_ENV)
    return (Path(base) if base else REPO_ROOT / ".cache") / "pynwb-sdist"


def _is_complete(root: Path) -> bool:
    return all((root / rel).is_dir() for rel in _REQUIRED)


def _download(pynwb_version: str, dest: Path) -> Path:
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--no-binary",
        ":all:",
        f"pynwb=={pynwb_version}",
        "-d",
        str(dest),
    ]
    shown = shlex.join(cmd)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=DOWNLOAD_TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"downloading the pynwb sdist timed out after {DOWNLOAD_TIMEOUT} s: {shown}") from exc
    except OSError as exc:
        raise RuntimeError(f"downloading the pynwb sdist failed: could not run {shown}: {exc}") from exc
    if proc.returncode != 0:
        output = (proc.stdout + proc.stderr).strip().splitlines()
        tail = "\n".join(output[-20:])
        raise RuntimeError(f"downloading the pynwb sdist failed (exit code {proc.returncode}): {shown}\n{tail}")
    archives = [p for p in dest.iterdir() if p.name.endswith((".tar.gz", ".zip"))]
    if len(archives) != 1:
        found = ", ".join(p.name for p in dest.iterdir()) or "nothing"
        raise RuntimeError(f"{shown} did not produce exactly one sdist archive (found: {found})")
    return archives[0]


def pynwb_sdist_dir() -> Path:
    """Return the unpacked sdist root of the installed pynwb, downloading it on first use.

    The returned directory contains ``tests/back_compat/*.nwb`` and
    ``tests/integration/hdf5/test_*.py``.  Raises RuntimeError (naming the pip
    command) if the download fails.
    """
    pynwb_version = version("pynwb")
    cache = cache_dir()
    final = cache / f"pynwb-{pynwb_version}"
    if final.is_dir():
        if not _is_complete(final):
            raise RuntimeError(
                f"{final} exists but lacks {', '.join(_REQUIRED)}; delete it to re-download the pynwb sdist"
            )
        return final

    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".pynwb-{pynwb_version}-", dir=cache))
    try:
        download_dir = work / "download"
        download_dir.mkdir()
        archive = _download(pynwb_version, download_dir)
        unpack_dir = work / "unpacked"
        shutil.unpack_archive(archive, unpack_dir, filter="data")
        tops = list(unpack_dir.iterdir())
        if len(tops) != 1 or not tops[0].is_dir() or not _is_complete(tops[0]):
            raise RuntimeError(
                f"unexpected layout in {archive.name}: expected one top-level directory containing "
                f"{', '.join(_REQUIRED)}"
            )
        try:
            os.rename(tops[0], final)  # atomic publish; fails if a concurrent caller got there first
        except OSError:
            if not (final.is_dir() and _is_complete(final)):
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return final


def back_compat_files() -> list[Path]:
    """The ``tests/back_compat/*.nwb`` files shipped in the pynwb sdist, sorted by name."""
    return sorted((pynwb_sdist_dir() / "tests" / "back_compat").glob("*.nwb"))
