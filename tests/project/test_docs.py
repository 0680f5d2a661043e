"""The documentation: the storage specification's examples are what the code writes today, and the Sphinx
site (with its tutorial gallery, every tutorial run) builds with warnings as errors."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


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
    result cached by an earlier build (sphinx-gallery skips scripts it already ran) hides a failure.
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
        capture_output=True,
        text=True,
        timeout=900,
    )
    output = f"{result.stdout}\n{result.stderr}"
    assert result.returncode == 0, f"the documentation does not build:\n{output[-30000:]}"
    problems = [line for line in output.splitlines() if _PROBLEM.search(line)]
    assert not problems, "the build printed problems:\n" + "\n".join(problems) + f"\n\n{output[-30000:]}"
    assert (tmp_path / "html" / "tutorials" / "index.html").is_file()
