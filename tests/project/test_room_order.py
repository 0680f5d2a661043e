"""The rooms of each layer lean one way (issue #39). Every import counts: at the top of a module, inside a
function, under ``TYPE_CHECKING``; a name taken from a door counts as an import of the module defining it.

- every room of a layer has its place in that layer's import-linter ``layers`` contract (``pyproject.toml``),
  and docs/architecture.md writes the same order out, bottom up;
- no two rooms import each other, and a room imports only rooms below it in that order;
- doors import their names plainly: no lazy machinery of our own.

import-linter checks the same orders (``tests/project/test_static_checks.py``); this test names the offending
import in terms of rooms, without running the tool.
"""

from __future__ import annotations

import ast
import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

import hdmf_zarr3

PACKAGE = Path(hdmf_zarr3.__file__).parent
REPO = Path(__file__).resolve().parents[2]


def _name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
PACKAGES = {_name(p) for p in PACKAGE.rglob("__init__.py")}
#: layers whose modules are grouped in rooms (subpackages); the other layers' contracts order modules
LAYERS_WITH_ROOMS = sorted({name.split(".")[1] for name in PACKAGES if name.count(".") == 2})


def _target(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if module in PACKAGES else module.split(".")[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _door_names(package: str) -> dict[str, str]:
    """What a door imports: each name -> the module it comes from."""
    offered = {}
    for node in ast.walk(ast.parse(MODULES[package].read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            source = _target(package, node)
            for alias in node.names:
                full = f"{source}.{alias.name}"
                offered[alias.asname or alias.name] = full if full in MODULES else source
    return offered


DOORS = {package: _door_names(package) for package in PACKAGES}


def _imported(module: str) -> list[tuple[str, int]]:
    """(module of ours imported, line) for every import in ``module``, names from doors resolved."""
    found = []
    for node in ast.walk(ast.parse(MODULES[module].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names if alias.name.startswith("hdmf_zarr3.")]
        elif isinstance(node, ast.ImportFrom):
            source = _target(module, node)
            if not source.startswith("hdmf_zarr3"):
                continue
            for alias in node.names:
                full = f"{source}.{alias.name}"
                found.append((full if full in MODULES else DOORS.get(source, {}).get(alias.name, source), node.lineno))
    return found


def _room(module: str) -> tuple[str, str] | None:
    parts = module.split(".")
    return (parts[1], parts[2]) if len(parts) >= 3 and ".".join(parts[:3]) in PACKAGES else None


def _rooms_of(layer: str) -> set[str]:
    return {name.split(".")[2] for name in PACKAGES if name.count(".") == 2 and name.split(".")[1] == layer}


def _contracts() -> list[dict]:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]


def _order(layer: str) -> list[list[str]]:
    """The layer's contract, top first: each line a list of rooms (``|`` independent, ``:`` not)."""
    (contract,) = [c for c in _contracts() if c["type"] == "layers" and c["containers"] == [f"hdmf_zarr3.{layer}"]]
    return [[room.strip() for room in line.replace(":", "|").split("|")] for line in contract["layers"]]


def _room_imports(layer: str) -> list[tuple[str, str, str]]:
    """(room, room it imports, where) for every import between two rooms of ``layer``."""
    found = []
    for module in MODULES:
        here = _room(module)
        if here is None or here[0] != layer:
            continue
        for target, line in _imported(module):
            there = _room(target)
            if there and there[0] == layer and there != here:
                found.append((here[1], there[1], f"{module}:{line} -> {target}"))
    return found


@pytest.mark.parametrize("layer", LAYERS_WITH_ROOMS)
def test_every_room_has_its_place_in_the_order(layer):
    placed = [room for line in _order(layer) for room in line]
    assert sorted(placed) == sorted(_rooms_of(layer))


@pytest.mark.parametrize("layer", LAYERS_WITH_ROOMS)
def test_no_two_rooms_import_each_other(layer):
    arrows = defaultdict(list)
    for room, other, where in _room_imports(layer):
        arrows[(room, other)].append(where)
    both_ways = {(a, b): arrows[(a, b)] + arrows[(b, a)] for (a, b) in arrows if a < b and (b, a) in arrows}
    assert both_ways == {}


@pytest.mark.parametrize("layer", LAYERS_WITH_ROOMS)
def test_a_room_imports_only_rooms_below_it(layer):
    depth = {room: index for index, line in enumerate(_order(layer)) for room in line}
    upward = [where for room, other, where in _room_imports(layer) if depth[other] <= depth[room]]
    assert upward == []


def test_the_architecture_writes_out_every_order():
    """docs/architecture.md gives each layer's order bottom up, as ``layer: a -> b | c -> d``."""
    text = " ".join((REPO / "docs" / "architecture.md").read_text(encoding="utf-8").split())
    missing = []
    for contract in _contracts():
        containers = contract.get("containers", [])
        if contract["type"] != "layers" or containers == ["hdmf_zarr3"]:
            continue
        layer = containers[0].removeprefix("hdmf_zarr3.")
        bottom_up = " -> ".join(" | ".join(r.strip() for r in line.split("|")) for line in reversed(contract["layers"]))
        if f"{layer}: {bottom_up}" not in text:
            missing.append(f"{layer}: {bottom_up}")
    assert missing == []


def _lazy(door: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(door.read_text(encoding="utf-8"))):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            found.append("imports under TYPE_CHECKING")
        if isinstance(node, ast.Name | ast.FunctionDef) and getattr(node, "id", getattr(node, "name", "")) in (
            "__getattr__",
            "door",
        ):
            found.append("a __getattr__")
    return found


def test_the_lazy_door_check_sees_a_lazy_door(tmp_path):
    door = tmp_path / "__init__.py"
    door.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import b\n__getattr__ = door(__name__)\n",
        encoding="utf-8",
    )
    assert _lazy(door) == ["imports under TYPE_CHECKING", "a __getattr__", "a __getattr__"]


def test_every_door_imports_its_names_plainly():
    lazy = {package: _lazy(MODULES[package]) for package in sorted(PACKAGES)}
    assert {package: found for package, found in lazy.items() if found} == {}
    assert not (PACKAGE / "_doors.py").exists()
