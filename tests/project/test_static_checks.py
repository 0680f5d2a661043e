"""Static checks of ``src/hdmf_zarr3``, run as tests so CI (``scripts/test.sh``) runs them.

- ``lint-imports``: the import-linter contracts in ``pyproject.toml`` (``[tool.importlinter]``): the layers
  (cli > hdf5.conversion > backend > integrations | h5py_adapters > storage > format > errors | _version; no
  module imports a layer above its own, directly or through others), the
  integrations independent of each other, storage and format free of pynwb, h5py and dask, and the rooms of
  the format in one order (vocabulary < layout < documents < data < dialects | specs).
- ``mypy``: the settings in ``pyproject.toml`` (``[tool.mypy]``); the package ships ``py.typed``.

Both tools come with the ``test`` extra; they are run from the interpreter's own ``bin`` directory, on the
source tree of this checkout (``src/``), and their whole output is shown when they fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
#: For every import-linter contract in pyproject.toml: a module and what, appended to it, breaks the contract.
#: Each kind of import counts: at module level, inside a function, under ``if TYPE_CHECKING:``.
BREAKERS = {
    "layers: cli > conversion > backend > adapters > storage > format > errors": (
        "storage/safety/audit.py",
        "from ..backend import integrity\n",  # a layer reaching up (as it once did)
    ),
    "the integrations (dask, hdmf shims, html) are independent of each other": (
        "integrations/html.py",
        "from . import dask_arrays\n",
    ),
    "storage and format know neither NWB, HDF5 nor dask": ("format/vocabulary/names.py", "import h5py\n"),
    "format rooms: dialects | specs > data > documents > layout > vocabulary": (
        "format/vocabulary/dtypes.py",
        "from ..data import values\n",
    ),
    "backend's rooms: io classes > read | write > datasets > cached specs > settings > contexts": (
        "backend/contexts/io_contexts.py",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..datasets import ZarrDataset\n",
    ),
    "storage: handles > virtual > remote | zip > codecs | writes > safety > stores > paths": (
        "storage/stores/nodes.py",
        "def _reaching_up():\n    from ..handles import open_store\n",
    ),
    "cli: the command line > its commands > arguments, output": (
        "cli/arguments.py",
        "def _up():\n    from . import convert_command\n",
    ),
    "view: server > view models > the viewed file and the budget": (
        "view/budget.py",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import server\n",
    ),
    "dandi: checks > zarr rules, content > findings": ("dandi/content.py", "from . import zarr_rules\n"),
    "inspection: validation and file info, independent": ("inspection/file_info.py", "from . import validation\n"),
    "hdf5: conversion > virtual conversion": ("hdf5/virtual_conversion.py", "def f():\n    from . import conversion\n"),
    "integrations: every adapter independent": ("integrations/hdmf_private.py", "from . import h5py_lock\n"),
    "h5py_adapters: destination, source > the other adapters": ("h5py_adapters/regions.py", "from . import source\n"),
}


def _tool(name: str) -> Path:
    exe = Path(sys.executable).with_name(name)
    if not exe.exists():
        pytest.fail(
            f"{name} is not installed next to {sys.executable}: install the 'test' extra (pip install -e '.[test]')"
        )
    return exe


def _run(argv: list[str | Path], src: Path = SRC) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    return subprocess.run(
        [str(a) for a in argv], cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def _lint_imports(src: Path = SRC) -> subprocess.CompletedProcess[str]:
    return _run([_tool("lint-imports"), "--config", REPO / "pyproject.toml", "--no-logo", "--no-cache"], src)


def _contract_names() -> list[str]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return [contract["name"] for contract in config["tool"]["importlinter"]["contracts"]]


def _said(proc: subprocess.CompletedProcess[str]) -> str:
    return " ".join(proc.stdout.split())  # import-linter wraps long contract names


def test_every_contract_has_an_import_that_breaks_it():
    assert sorted(_contract_names()) == sorted(BREAKERS)


def test_import_contracts_are_kept():
    proc = _lint_imports()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in _contract_names():
        assert f"{name} KEPT" in _said(proc), proc.stdout


def test_the_import_contracts_catch_what_they_forbid(tmp_path):
    """A copy of the package with one import breaking each contract fails each of them: the contracts bite."""
    copy = tmp_path / "src" / "hdmf_zarr3"
    shutil.copytree(SRC / "hdmf_zarr3", copy, ignore=shutil.ignore_patterns("__pycache__"))
    for module, lines in BREAKERS.values():
        path = copy / module
        path.write_text(path.read_text(encoding="utf-8") + "\n\n" + lines, encoding="utf-8")
    proc = _lint_imports(tmp_path / "src")
    assert proc.returncode != 0, proc.stdout
    for name in BREAKERS:
        assert f"{name} BROKEN" in _said(proc), proc.stdout


def test_mypy_passes():
    proc = _run([_tool("mypy"), "--config-file", REPO / "pyproject.toml"])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_package_says_it_is_typed():
    assert (SRC / "hdmf_zarr3" / "py.typed").is_file()
