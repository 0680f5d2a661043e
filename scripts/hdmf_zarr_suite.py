"""Run hdmf-zarr 0.14's own unit tests with its ZarrIO, NWBZarrIO and ZarrDataIO bound to ours.

    .venv/bin/python scripts/hdmf_zarr_suite.py [--theirs] [--exclusions | --no-exclusions] [pytest options...]

The sdist is fetched from PyPI once into ``.cache/hdmf-zarr-sdist`` (``$HDMF_ZARR3_CACHE`` overrides
``.cache``); nothing of it is committed. ``--theirs`` runs the same tests on hdmf-zarr itself, for
comparison. On our classes the tests listed in ``tests/peer/hdmf_zarr_exclusions.txt`` (hdmf-zarr's private
API, its on-disk names and class names, our deliberate differences, tests failing on hdmf-zarr itself or
needing what this machine lacks) are deselected (``--no-exclusions`` runs them too; ``--exclusions`` also
applies the list to ``--theirs``); every other test must pass. Prints pytest's summary line; the exit
status is pytest's. The test suite runs the same (tests/suites/test_hdmf_zarr_suite.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

VERSION = "0.14.0"
REPO = Path(__file__).resolve().parents[1]


def sdist_dir() -> Path:
    cache = Path(os.environ.get("HDMF_ZARR3_CACHE", REPO / ".cache")) / "hdmf-zarr-sdist"
    root = cache / f"hdmf_zarr-{VERSION}"
    if (root / "tests" / "unit").is_dir():
        return root
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--no-binary",
                ":all:",
                f"hdmf-zarr=={VERSION}",
                "-d",
                tmp,
            ],
            check=True,
            timeout=900,
        )
        archive = next(Path(tmp).glob("*.tar.gz"))
        with tarfile.open(archive) as tar:
            tar.extractall(cache, filter="data")
    return root


def main(argv: list[str]) -> int:
    theirs = "--theirs" in argv
    exclusions = "--exclusions" in argv or (not theirs and "--no-exclusions" not in argv)
    args = [a for a in argv if a not in ("--theirs", "--exclusions", "--no-exclusions")]
    root = sdist_dir()
    env = dict(os.environ)
    plugin = [] if theirs else ["-p", "bind_hdmf_zarr3"]
    if exclusions:
        plugin += ["-p", "exclude_hdmf_zarr"]
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "tests" / "peer"), env.get("PYTHONPATH", "")])
    with tempfile.TemporaryDirectory() as work:  # its tests write relative paths: keep them out of the cache
        command = [
            sys.executable,
            "-m",
            "pytest",
            str(root / "tests" / "unit"),
            "-q",
            "-p",
            "no:cacheprovider",
            "-c",
            str(root / "pyproject.toml"),
            "--rootdir",
            str(root),
            *plugin,
            *args,
        ]
        return subprocess.run(command, env=env, cwd=work).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
