"""Rooms with front doors (issue #29): every package names its public face in ``__all__``, the command line
imports only doors, and no module imports a module below another room's door."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from source_tree import door_names

import hdmf_zarr3

PACKAGE = Path(hdmf_zarr3.__file__).parent
LEAVES = {"hdmf_zarr3.errors", "hdmf_zarr3._version"}  # modules every layer may import


def _name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_package(name: str) -> bool:
    return PACKAGE.parent.joinpath(*name.split("."), "__init__.py").is_file()


def _package_of(path: Path) -> str:
    name = _name(path)
    return name if path.name == "__init__.py" else name.rsplit(".", 1)[0]


def _all(name: str) -> list[str] | None:
    tree = ast.parse(PACKAGE.parent.joinpath(*name.split("."), "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
            return list(ast.literal_eval(node.value))
    return None


def _imports(path: Path):
    """(module imported, names taken from it or None, line) for every import of hdmf_zarr3, at any depth."""
    here = _package_of(path).split(".")
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "hdmf_zarr3":
                    yield alias.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1] + (node.module.split(".") if node.module else [])
                module = ".".join(base)
            else:
                module = node.module or ""
            if module.split(".")[0] != "hdmf_zarr3":
                continue
            names = []
            door = _all(module) or [] if _is_package(module) else []
            for alias in node.names:
                if alias.name in door:
                    names.append(alias.name)  # the door offers it, a module or not
                elif (
                    _is_package(f"{module}.{alias.name}")
                    or PACKAGE.parent.joinpath(*f"{module}.{alias.name}".split(".")).with_suffix(".py").is_file()
                ):
                    yield f"{module}.{alias.name}", None, node.lineno
                else:
                    names.append(alias.name)
            if names:
                yield module, names, node.lineno


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_every_package_names_its_door():
    missing = [_name(p) for p in _modules() if p.name == "__init__.py" and _all(_name(p)) is None]
    assert missing == []


def test_every_name_of_a_door_is_there():
    absent = []
    for path in (p for p in _modules() if p.name == "__init__.py"):
        package = importlib.import_module(_name(path))
        for n in _all(_name(path)) or []:
            try:  # a room of a layer is there once imported; anything else is an attribute of the door
                importlib.import_module(f"{_name(path)}.{n}") if _is_package(f"{_name(path)}.{n}") else getattr(
                    package, n
                )
            except (AttributeError, ImportError):
                absent.append(f"{_name(path)}.{n}")
    assert absent == []


def test_the_command_line_imports_only_doors():
    below = []
    for path in (PACKAGE / "cli").rglob("*.py"):
        for module, names, line in _imports(path):
            if module.startswith("hdmf_zarr3.cli") or module in LEAVES:
                continue
            if not _is_package(module):
                below.append(f"{_name(path)}:{line} imports {module}")
            elif names is not None:
                door = _all(module) or []
                below += [f"{_name(path)}:{line} takes {module}.{n} (not in __all__)" for n in names if n not in door]
    assert below == []


def test_no_module_imports_below_another_rooms_door():
    below = []
    for path in _modules():
        if path.parent == PACKAGE:
            continue  # the public facade, hdmf_zarr3/__init__.py, assembles the API from the doors
        here = _package_of(path)
        for module, _names, line in _imports(path):
            if module in LEAVES or _is_package(module):
                continue
            room = module.rsplit(".", 1)[0]
            if here == room or here.startswith(room + "."):
                continue  # inside its own room (or a room within it)
            below.append(f"{_name(path)}:{line} imports {module}, below the door of {room}")
    assert below == []


def test_no_door_offers_a_name_that_is_also_one_of_its_modules():
    """Once ``storage/safety/audit.py`` is imported, Python sets the package's ``audit`` to the module:
    a door offering the function ``audit`` would hand out the module instead (``'module' object is not
    callable``). Such a door offers the module, and callers name the function through it."""
    clashes = [
        f"{_name(init)}.{name}"
        for init in _modules()
        if init.name == "__init__.py"
        for name, (_module, attribute) in door_names(init).items()
        if attribute is not None and (init.parent / f"{name}.py").is_file()
    ]
    assert clashes == []


def _own_and_read(cls: ast.ClassDef) -> tuple[set[str], list[tuple[int, str]]]:
    """What a class owns (the methods it defines, the attributes it assigns on ``self`` or in its body; not
    the stubs under ``if TYPE_CHECKING:`` nor bare annotations) and the ``self._x`` it reads."""
    own: set[str] = set()
    for node in cls.body:  # (a method under ``if`` is a stub, not one the class has)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            own.add(node.name)
        elif isinstance(node, ast.Assign):
            own |= {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name):
            own.add(node.target.id)
    reads: list[tuple[int, str]] = []
    for node in ast.walk(cls):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            if isinstance(node.ctx, (ast.Store, ast.Del)):
                own.add(node.attr)
            else:
                reads.append((node.lineno, node.attr))
        elif (  # getattr(self, "_x", ...)
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) >= 2
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id == "self"
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            reads.append((node.lineno, node.args[1].value))
    private = [(line, name) for line, name in reads if name.startswith("_") and not name.startswith("__")]
    return own, private


def _private_reads_not_owned(folder: Path) -> list[str]:
    """``file:line Class reads self._x`` for every read of a private member its class (or a base class of
    the same folder: a subclass may use its base's protected members) does not own."""
    classes: dict[str, tuple[Path, ast.ClassDef]] = {}
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                classes[node.name] = (path, node)

    def owned(name: str, seen: frozenset[str] = frozenset()) -> set[str]:
        path, cls = classes[name]
        own = _own_and_read(cls)[0]
        for base in cls.bases:
            if isinstance(base, ast.Name) and base.id in classes and base.id not in seen:
                own |= owned(base.id, seen | {name})
        return own

    found = []
    for name, (path, cls) in classes.items():
        own = owned(name)
        found += [
            f"{path.name}:{line} {name} reads self.{attr}" for line, attr in _own_and_read(cls)[1] if attr not in own
        ]
    return found


def test_the_private_reads_check_sees_mixins_and_stubs():
    # the check itself: a mixin reading what another class assigns, or what a TYPE_CHECKING stub declares
    source = (
        "from typing import TYPE_CHECKING\n"
        "class Base:\n    def __init__(self):\n        self._own = 1\n"
        "class Sub(Base):\n    def f(self):\n        return self._own\n"
        "class Mixin:\n    _handle: int\n    if TYPE_CHECKING:\n        def _require_open(self): ...\n"
        "    def g(self):\n        return self._handle, self._require_open(), getattr(self, '_mode', None)\n"
    )
    tree = ast.parse(source)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    own, reads = _own_and_read(classes["Mixin"])
    assert sorted(attr for _, attr in reads if attr not in own) == ["_handle", "_mode", "_require_open"]
    own, reads = _own_and_read(classes["Sub"])
    assert [attr for _, attr in reads if attr not in own] == ["_own"]  # (inherited: see _private_reads_not_owned)


def test_no_class_of_zarrio_reads_private_state_it_does_not_own():
    # issue #29 point 4: ZarrIO's state lives in collaborators that own it, no mixin reads another's fields
    assert _private_reads_not_owned(PACKAGE / "backend" / "zarrio") == []
