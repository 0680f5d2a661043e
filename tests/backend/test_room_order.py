"""The backend's rooms lean one way (issue #39): contexts -> settings -> cached_specs -> datasets -> read, write
-> zarrio. import-linter keeps the order (pyproject.toml, run by tests/project/test_static_checks.py); these
tests keep what follows from it: plain doors, and module names that say what they hold, once."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import hdmf_zarr3

PACKAGE = Path(hdmf_zarr3.__file__).parent
BACKEND = PACKAGE / "backend"
ROOMS_BOTTOM_UP = ["contexts", "settings", "cached_specs", "datasets", "read | write", "zarrio"]


def test_every_backend_door_imports_its_names_plainly():
    lazy = []
    for door in sorted(BACKEND.glob("*/__init__.py")):
        tree = ast.parse(door.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                lazy.append(f"{door.parent.name}: imports under TYPE_CHECKING")
            targets = node.targets if isinstance(node, ast.Assign) else []
            if any(isinstance(t, ast.Name) and t.id == "__getattr__" for t in targets):
                lazy.append(f"{door.parent.name}: a lazy __getattr__")
            if isinstance(node, ast.ImportFrom) and node.module and "_doors" in node.module:
                lazy.append(f"{door.parent.name}: imports _doors")
    assert lazy == []


def test_the_import_contract_orders_every_room_of_the_backend():
    config = tomllib.loads((PACKAGE.parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = [
        c for c in config["tool"]["importlinter"]["contracts"] if c.get("containers") == ["hdmf_zarr3.backend"]
    ]
    assert len(contracts) == 1 and contracts[0]["type"] == "layers"
    assert list(reversed(contracts[0]["layers"])) == ROOMS_BOTTOM_UP
    rooms = {p.parent.name for p in BACKEND.glob("*/__init__.py")}
    named = {room.strip() for layer in ROOMS_BOTTOM_UP for room in layer.split("|")}
    assert rooms == named  # a new room is placed in the order


def test_no_backend_module_shares_its_name_with_another_module_or_package():
    names: dict[str, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE)
        if path.name == "__init__.py":
            if rel.parent != Path("."):
                names.setdefault(rel.parent.name, []).append(str(rel.parent))
        else:
            names.setdefault(path.stem, []).append(str(rel))
    twice = {n: sorted(p) for n, p in names.items() if len(p) > 1 and any(x.startswith("backend") for x in p)}
    assert twice == {}


def test_no_backend_module_is_imported_under_a_one_letter_alias():
    short = []
    for path in sorted(BACKEND.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                short += [
                    f"{path.relative_to(PACKAGE)}: {a.name} as {a.asname}"
                    for a in node.names
                    if a.asname and len(a.asname) == 1
                ]
    assert short == []


def _functions(path: Path) -> list[ast.FunctionDef]:
    return [n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.FunctionDef)]


def test_no_backend_function_over_60_lines_nor_module_over_400():
    long = []
    for path in sorted(BACKEND.rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > 400:
            long.append(f"{path.relative_to(PACKAGE)}: {lines} lines")
        long += [
            f"{path.relative_to(PACKAGE)}:{f.lineno} {f.name}: {f.end_lineno - f.lineno + 1} lines"
            for f in _functions(path)
            if f.end_lineno is not None and f.end_lineno - f.lineno + 1 > 60
        ]
    assert long == []


def test_no_method_of_the_io_classes_has_its_signature_written_twice():
    # ZarrIO's collaborators take what a call asked for (an object, a dict), not a copy of its parameters
    def parameters(function: ast.FunctionDef) -> tuple[str, ...]:
        names = [a.arg for a in function.args.args + function.args.kwonlyargs]
        return tuple(n for n in names if n != "self")

    zarrio = BACKEND / "zarrio"
    io_methods = {
        (f.name, parameters(f))
        for module in ("zarr_io.py", "io_file.py")
        if (zarrio / module).is_file()
        for f in _functions(zarrio / module)
        if len(parameters(f)) >= 3
    }
    twice = [
        f"{path.name}:{f.lineno} {f.name}{parameters(f)}"
        for path in sorted(zarrio.glob("*.py"))
        if path.name not in ("zarr_io.py", "io_file.py", "nwb.py")
        for f in _functions(path)
        for name, params in io_methods
        if f.name == name and set(params) - {"path"} <= set(parameters(f))
    ]
    assert twice == []
