"""Storage's rooms lean one way (issue #39): no two rooms import each other, every import of a room goes to a
room below it in the order ``pyproject.toml`` gives import-linter, and storage's doors import their names
plainly. Every import counts: at the top of a module, inside a function, under ``TYPE_CHECKING``."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import hdmf_zarr3

REPO = Path(__file__).resolve().parents[2]
STORAGE = Path(hdmf_zarr3.__file__).parent / "storage"
CONTRACT = "storage: handles > virtual > remote | zip > codecs | writes > safety > stores > paths"


def _rooms() -> list[str]:
    return sorted(p.name for p in STORAGE.iterdir() if (p / "__init__.py").is_file())


def _order() -> list[set[str]]:
    """The storage contract's layers, top first, each a set of rooms."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["name"] == CONTRACT]
    assert contract["containers"] == ["hdmf_zarr3.storage"]
    return [{room.strip() for room in layer.split("|")} for layer in contract["layers"]]


def _room_imports() -> set[tuple[str, str, str]]:
    """(room, room imported, where) for every import between two storage rooms, at any depth of a module."""
    found = set()
    for room in _rooms():
        for path in sorted((STORAGE / room).rglob("*.py")):
            package = ["storage", room]
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.level >= 2:
                    target = (package[: len(package) - node.level + 1] + (node.module or "").split("."))[1:]
                elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hdmf_zarr3.storage."):
                    target = node.module.split(".")[2:]  # type: ignore[union-attr]
                else:
                    continue
                if target and target[0] in _rooms() and target[0] != room:
                    found.add((room, target[0], f"{path.relative_to(STORAGE)}:{node.lineno}"))
    return found


def test_every_storage_room_is_in_the_order():
    placed = set().union(*_order())
    assert placed == set(_rooms())


def test_no_two_storage_rooms_import_each_other():
    pairs = {(room, other) for room, other, _ in _room_imports()}
    assert sorted((a, b) for a, b in pairs if (b, a) in pairs) == []


def test_every_storage_room_imports_only_rooms_below_it():
    level = {room: depth for depth, layer in enumerate(_order()) for room in layer}
    upward = sorted(
        f"{where}: {room} imports {other}" for room, other, where in _room_imports() if level[other] <= level[room]
    )
    assert upward == []


def test_storage_doors_import_their_names_plainly():
    """No lazy door (``__getattr__ = door(...)``) and no names imported only for type checkers: a door imports
    what its ``__all__`` offers, and each name is there once the door is imported."""
    lazy = []
    for room in _rooms():
        door = STORAGE / room / "__init__.py"
        tree = ast.parse(door.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
                lazy.append(f"{room}: TYPE_CHECKING")
            if isinstance(node, ast.Name) and node.id in ("door", "__getattr__"):
                lazy.append(f"{room}: {node.id}")
        module = __import__(f"hdmf_zarr3.storage.{room}", fromlist=["__all__"])
        missing = [name for name in module.__all__ if name not in vars(module)]
        lazy += [f"{room}: {name} not imported" for name in missing]
    assert lazy == []


def _lint_imports(src: Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("lint-imports")
    if not exe.exists():
        pytest.fail(f"lint-imports is not installed next to {sys.executable}: install the 'test' extra")
    env = {**os.environ, "PYTHONPATH": str(src)}
    argv = [str(exe), "--config", str(REPO / "pyproject.toml"), "--no-logo", "--no-cache"]
    return subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False)


def test_the_storage_contract_is_kept_and_counts_imports_inside_functions(tmp_path):
    assert f"{CONTRACT} KEPT" in " ".join(_lint_imports(REPO / "src").stdout.split())
    copy = tmp_path / "src" / "hdmf_zarr3"
    shutil.copytree(STORAGE.parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    nodes = copy / "storage" / "stores" / "nodes.py"  # a low room reaching up to the top one, inside a function
    nodes.write_text(
        nodes.read_text(encoding="utf-8") + "\n\ndef _reaching_up():  # noqa\n    from ..handles import open_store\n",
        encoding="utf-8",
    )
    proc = _lint_imports(tmp_path / "src")
    assert f"{CONTRACT} BROKEN" in " ".join(proc.stdout.split()), proc.stdout


def test_storage_has_no_function_over_60_lines_and_no_module_over_400():
    """Small pieces (issue #39): a function's lines counted from its ``def`` (decorators aside) to its end."""
    too_long = []
    for path in sorted(STORAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        where = path.relative_to(STORAGE)
        if len(text.splitlines()) > 400:
            too_long.append(f"{where}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > 60:
                    too_long.append(f"{where}: {node.name} {length} lines")
    assert too_long == []
