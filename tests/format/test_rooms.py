"""The rooms of the format lean one way (issue #39), read from the source with ``ast`` (nothing imported).

- import-linter's "format rooms" contract (``pyproject.toml``) orders every room of ``hdmf_zarr3.format``;
  the import graph of the rooms follows that order, so no two rooms import each other (imports inside
  functions and under ``TYPE_CHECKING`` count);
- every door of the format imports its names plainly (no lazy ``__getattr__``, no ``TYPE_CHECKING`` block);
- no module of the format takes a one-letter alias for a module (``from ..data import dtypes as D``);
- no module or room of the format has the name of another module or package of ``hdmf_zarr3``;
- no function of the format is longer than 60 lines, no module longer than 400.
"""

from __future__ import annotations

import ast
import tomllib
from collections import defaultdict
from pathlib import Path

from source_tree import PACKAGE, imported_from, module_name, package_of

FORMAT = PACKAGE / "format"
PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 400


def _rooms() -> set[str]:
    return {p.name for p in FORMAT.iterdir() if (p / "__init__.py").is_file()}


def _contract_layers() -> list[set[str]]:
    """The layers of the contract over ``hdmf_zarr3.format``, top first, each a set of rooms."""
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    found = [c for c in contracts if c.get("type") == "layers" and c.get("containers") == ["hdmf_zarr3.format"]]
    assert len(found) == 1, "one layers contract over the rooms of hdmf_zarr3.format"
    return [{room.strip() for room in layer.split("|")} for layer in found[0]["layers"]]


def _room_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["hdmf_zarr3", "format"] else None


def _room_imports() -> dict[tuple[str, str], list[str]]:
    """``{(room, room it imports): [module:line, ...]}`` over every import of the format, at any depth."""
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(FORMAT.rglob("*.py")):
        here = _room_of(module_name(path))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                targets = [imported_from(node, package_of(path))]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                continue
            for target in targets:
                there = _room_of(target)
                if here and there and there != here:
                    edges[(here, there)].append(f"{module_name(path)}:{node.lineno}")
    return edges


def test_the_contract_orders_every_room_of_the_format():
    layers = _contract_layers()
    listed = [room for layer in layers for room in layer]
    assert sorted(listed) == sorted(_rooms())  # each room once
    assert layers[-1] == {"vocabulary"}  # the bottom room: what every rule is written in


def test_the_rooms_import_only_rooms_below_them():
    level = {room: depth for depth, layer in enumerate(_contract_layers()) for room in layer}
    upward = [
        f"{here} imports {there} ({', '.join(where)})"
        for (here, there), where in sorted(_room_imports().items())
        if level[there] <= level[here]  # same level: siblings (``|``) are independent
    ]
    assert upward == []


def test_no_two_rooms_of_the_format_import_each_other():
    edges = _room_imports()
    assert edges  # the checker sees the imports between rooms (dialects -> data, ...)
    both_ways = sorted(f"{a} <-> {b}" for a, b in edges if (b, a) in edges and a < b)
    assert both_ways == []


def _door_problems(path: Path, label: str) -> list[str]:
    """What keeps the door at ``path`` (named ``label`` in messages) from being plain."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    problems = []
    bound = {p.name for p in path.parent.iterdir() if (p / "__init__.py").is_file()}  # its rooms, if a layer
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            problems.append(f"{label}:{node.lineno} imports under TYPE_CHECKING")
        elif isinstance(node, (ast.Assign, ast.FunctionDef)) and "__getattr__" in (
            [t.id for t in node.targets if isinstance(t, ast.Name)] if isinstance(node, ast.Assign) else [node.name]
        ):
            problems.append(f"{label}:{node.lineno} loads names lazily (__getattr__)")
        elif isinstance(node, ast.ImportFrom):
            bound |= {alias.asname or alias.name for alias in node.names}
            if (node.module or "").split(".")[-1] == "_doors":
                problems.append(f"{label}:{node.lineno} imports the lazy doors")
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
    offered = next(
        (
            ast.literal_eval(node.value)
            for node in tree.body
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
        ),
        [],
    )
    return problems + [f"{label} offers {name} without importing it" for name in offered if name not in bound]


def test_every_door_of_the_format_imports_its_names_plainly():
    doors = sorted(FORMAT.rglob("__init__.py"))
    assert len(doors) == len(_rooms()) + 1  # the layer's own, and one per room
    assert [problem for door in doors for problem in _door_problems(door, module_name(door))] == []


def test_the_door_check_sees_a_lazy_door(tmp_path):
    # the check itself: a door of the kind the format had until issue #39 fails it three ways
    lazy = tmp_path / "__init__.py"
    lazy.write_text(
        "from typing import TYPE_CHECKING\n\nfrom ..._doors import door\n\nif TYPE_CHECKING:\n"
        "    from .names import SAME_FILE\n\n__all__ = ['SAME_FILE']\n__getattr__ = door(__name__, __file__)\n",
        encoding="utf-8",
    )
    problems = _door_problems(lazy, "lazy")
    assert [p.split(" ", 1)[1] for p in problems] == [
        "imports the lazy doors",
        "imports under TYPE_CHECKING",
        "loads names lazily (__getattr__)",
        "offers SAME_FILE without importing it",
    ]


def test_no_module_of_the_format_takes_a_one_letter_alias():
    aliases = [
        f"{path.relative_to(PACKAGE)}:{node.lineno} {alias.name} as {alias.asname}"
        for path in sorted(FORMAT.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
        if alias.asname is not None and len(alias.asname.strip("_")) == 1
    ]
    assert aliases == []


def _names_outside_format() -> set[str]:
    """The stems of the modules and the names of the packages of hdmf_zarr3 outside the format."""
    names = set()
    for path in PACKAGE.rglob("*.py"):
        if FORMAT in path.parents:
            continue
        names.add(path.parent.name if path.name == "__init__.py" else path.stem)
    return names


#: Names the format keeps although a module or package outside it has them too, until that one is renamed:
#: ``backend/specs`` (the format keeps ``format/specs``; the backend renames its room).
SHARED_FOR_NOW = {"specs"}


def _format_names() -> dict[str, list[str]]:
    seen: dict[str, list[str]] = defaultdict(list)
    for path in FORMAT.rglob("*.py"):
        name = path.parent.name if path.name == "__init__.py" else path.stem
        seen[name].append(str(path.relative_to(PACKAGE)))
    return seen


def test_no_module_or_room_of_the_format_shares_a_name_in_the_package():
    seen = _format_names()
    twice = {name: where for name, where in seen.items() if len(where) > 1}
    elsewhere = sorted(set(seen) & _names_outside_format() - SHARED_FOR_NOW)
    assert twice == {}
    assert elsewhere == []


def test_every_name_shared_for_now_is_still_shared():
    # a stale entry would silently allow that name twice again later
    assert sorted(SHARED_FOR_NOW - (set(_format_names()) & _names_outside_format())) == []


def test_the_functions_and_modules_of_the_format_are_small():
    too_long = []
    for path in sorted(FORMAT.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > MAX_MODULE_LINES:
            too_long.append(f"{path.relative_to(PACKAGE)}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    too_long.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}: {length} lines")
    assert too_long == []
