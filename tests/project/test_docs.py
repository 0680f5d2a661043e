"""The documentation: the storage specification's examples are what the code writes today, and the Sphinx
site (with its tutorial gallery, every tutorial run) builds with warnings as errors."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from _pynwb_sdist import pynwb_sdist_dir

ROOT = Path(__file__).resolve().parents[2]
#: The tutorial plot_virtual_back_compat.py takes its file from the pynwb sdist unpacked here, if set; else it
#: downloads the sdist itself, as a user would.
SDIST_ENV = "HDMF_ZARR3_PYNWB_SDIST"


def test_storage_spec_examples_are_current():
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "docs" / "_examples" / "make_storage_examples.py"),
            "--check",
            str(ROOT / "docs" / "storage.md"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, (
        f"docs/storage.md is stale; regenerate with make_storage_examples.py --update\n{result.stdout}{result.stderr}"
    )


# docutils reports problems in text it parses outside Sphinx's logging as "(WARNING/2)"; -W does not see those.
_PROBLEM = re.compile(r"(?:^|: )(?:WARNING|ERROR|CRITICAL):|\((?:WARNING|ERROR|SEVERE)/\d\)")


def test_documentation_builds_without_warnings(tmp_path):
    """The Sphinx site builds with warnings as errors, and every tutorial in it runs.

    sphinx-gallery runs each ``tutorials/plot_*.py`` during the build and fails it if one raises. The build
    reads a fresh copy of ``docs/`` and ``tutorials/``: nothing is written into the repository, and no
    result cached by an earlier build (sphinx-gallery skips scripts it already ran) hides a failure. The
    back-compat tutorial gets PyNWB's sdist from the tests' cache, so it is not downloaded twice.
    """
    source = tmp_path / "source"
    generated = shutil.ignore_patterns("_build", "tutorials", "__pycache__")
    shutil.copytree(ROOT / "docs", source / "docs", ignore=generated)
    shutil.copytree(ROOT / "tutorials", source / "tutorials", ignore=shutil.ignore_patterns("__pycache__"))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-b",
            "html",
            str(source / "docs"),
            str(tmp_path / "html"),
        ],
        cwd=ROOT,
        env={**os.environ, SDIST_ENV: str(pynwb_sdist_dir())},
        capture_output=True,
        text=True,
        timeout=900,
    )
    output = f"{result.stdout}\n{result.stderr}"
    assert result.returncode == 0, f"the documentation does not build:\n{output[-30000:]}"
    problems = [line for line in output.splitlines() if _PROBLEM.search(line)]
    assert not problems, "the build printed problems:\n" + "\n".join(problems) + f"\n\n{output[-30000:]}"
    assert (tmp_path / "html" / "tutorials" / "index.html").is_file()


def test_the_back_compat_tutorial_fails_without_its_file(tmp_path):
    """Without the back-compat file, the tutorial raises (and so fails the build) instead of showing nothing."""
    empty = tmp_path / "not-an-sdist"
    empty.mkdir()
    result = subprocess.run(
        [sys.executable, str(ROOT / "tutorials" / "plot_virtual_back_compat.py")],
        cwd=tmp_path,
        env={**os.environ, SDIST_ENV: str(empty)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode != 0
    assert "FileNotFoundError" in result.stderr and SDIST_ENV in result.stderr, result.stderr[-3000:]
