"""Modules talk through public names and explicit contexts, read from the source with ``ast`` (nothing
is imported).

- No module reads another object's private attributes: ``x._name`` (one leading underscore, not a
  dunder; also ``getattr(x, "_name")`` and the like) appears only on ``self``, ``cls`` or ``super()``,
  except for the third-party privates listed in :data:`THIRD_PARTY_PRIVATES`, each with its reason.
- The modules of ``hdmf_zarr3`` import each other without a cycle: imports at module level, inside
  functions and under ``if TYPE_CHECKING:`` all count (issue #29: a type-only cycle is still two modules
  that cannot be read one before the other). A name taken from a room's door counts as an import of the
  module the door takes it from.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from source_tree import PACKAGE, door_names, imported_from, module_name, package_of

#: (file relative to the package, expression) -> why reaching into that private is unavoidable.
THIRD_PARTY_PRIVATES = {
    ("integrations/hdmf_private.py", "iterator._get_data"): "hdmf GenericDataChunkIterator's contract for subclasses",
    ("integrations/dask_arrays.py", "array._meta"): "dask's array metadata (the chunk type); no public name",
    ("integrations/h5py_lock.py", "lock._is_owned"): "ownership test of h5py's global RLock; no public name",
    ("integrations/hdmf_shims.py", "DynamicTableRegion._check_indices_in_bounds"): (
        "the hdmf method the region shim replaces (it reads a region whole); its name and parameters checked first"
    ),
    ("integrations/hdmf_private.py", "io._file"): "hdmf HDF5IO's open h5py.File; HDF5IO has no public name for it",
    ("h5py_adapters/h5py_private.py", "dset._filters"): "h5py Dataset's filter settings (plugin ids); no public name",
    ("storage/stores/decoding.py", "decode._hdmf_zarr3_checked"): "our marker on numcodecs' patched Blosc.decode",
    ("storage/stores/decoding.py", "original._hdmf_zarr3_checked"): "our marker on numcodecs' patched Blosc.decode",
    ("storage/safety/guarded.py", "store._documents"): "a new store of its own class taking over its state (storage/)",
    ("storage/safety/guarded.py", "store._bounds"): "a new store of its own class taking over its state (storage/)",
    ("storage/stores/pools.py", "threading._register_atexit"): "CPython's one hook at exit before thread pools stop",
    ("storage/stores/zarr_adapter.py", "store._store"): "the store a zarr WrapperStore wraps; zarr has no public name",
    ("storage/stores/zarr_adapter.py", "target._chunk_grid"): "the grid zarr's own setters index with; no public name",
    ("storage/stores/zarr_adapter.py", "target._set_selection"): "zarr's assignment coroutine; no public async setter",
}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _accesses(tree: ast.AST) -> Iterator[tuple[int, ast.expr, str]]:
    """``(line, owner, name)`` of every ``owner.name``, and of every ``getattr``/``hasattr``/``setattr``/
    ``delattr`` of an owner and a constant name."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            yield node.lineno, node.value, node.attr
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr", "setattr", "delattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            yield node.lineno, node.args[0], node.args[1].value


def _private_reads(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for line, owner, name in _accesses(tree):
        if not _private(name):
            continue
        if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
            continue
        if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super":
            continue
        yield line, f"{ast.unparse(owner)}.{name}"


def private_reads(root: Path = PACKAGE) -> list[str]:
    """``file:line: expression`` for every private attribute read on something other than self/cls."""
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        for line, expression in _private_reads(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if (relative, expression) not in THIRD_PARTY_PRIVATES:
                found.append(f"{relative}:{line}: {expression}")
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, type_only: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement at any depth; those under ``if TYPE_CHECKING:`` only when ``type_only``."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        if isinstance(node, ast.If) and _is_type_checking(node.test) and not type_only:
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _door_targets(paths: dict[str, Path]) -> dict[str, dict[str, str]]:
    """Package -> {name its door offers: the module it comes from}."""
    doors: dict[str, dict[str, str]] = {}
    for name, path in paths.items():
        if path.name == "__init__.py":
            doors[name] = {n: f"{name}{module}" for n, (module, _attr) in door_names(path).items()}
    return doors


def import_graph(root: Path = PACKAGE, type_only: bool = True) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (``from . import x`` imports module ``x``; a name
    imported from a module that is not a module counts as that module, one offered by a door as the
    module behind the door)."""
    paths = {module_name(p): p for p in sorted(root.rglob("*.py"))}
    doors = _door_targets(paths)
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        package = package_of(path)
        targets: set[str] = set()
        is_door = path.name == "__init__.py"
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path)), type_only and not is_door):
            if isinstance(node, ast.Import):
                candidates = [alias.name for alias in node.names]
            else:
                base_name = imported_from(node, package)
                door = doors.get(base_name, {})
                candidates = [door.get(a.name, f"{base_name}.{a.name}") for a in node.names]
                candidates = [c if c in paths else base_name for c in candidates]
            targets.update(c for c in candidates if c in paths and c != name)
        graph[name] = targets
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (its modules, the first repeated at the end), or ``None``."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return path[path.index(target) :] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def test_the_checkers_see_what_they_look_for():
    # each checker must catch its own kind of breach, or the rules below prove nothing
    source = (
        "def f(io, self):\n    io._handle\n    self._ok\n    super()._ok\n    io.__class__\n    getattr(io, '_root')\n"
    )
    assert sorted(e for _, e in _private_reads(ast.parse(source))) == ["io._handle", "io._root"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    graph = import_graph()
    assert "hdmf_zarr3.backend.zarrio.zarr_io" in graph["hdmf_zarr3.backend.zarrio.nwb"]
    assert (
        "hdmf_zarr3.backend.cached_specs.cache" in graph["hdmf_zarr3.backend.zarrio.io_file"]
    )  # ``from . import spec_cache``
    # imported inside a function
    assert "hdmf_zarr3.format.specs.attribute_types" in graph["hdmf_zarr3.backend.read.reader"]


def test_no_module_reads_the_private_attributes_of_another_object():
    assert private_reads() == []


def test_every_allowed_private_is_still_read():
    # a stale entry would silently allow that read again later
    seen = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        seen.update((relative, e) for _, e in _private_reads(ast.parse(path.read_text(encoding="utf-8"))))
    assert sorted(set(THIRD_PARTY_PRIVATES) - seen) == []


def test_the_modules_import_each_other_without_a_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def private_imports(root: Path = PACKAGE) -> list[str]:
    """``from .module import _name`` of our own modules: a private name taken across modules (issue #29)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            ours = isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("hdmf_zarr3"))
            if ours and node.module != "_version":
                found += [f"{path.relative_to(root)}:{node.lineno} {a.name}" for a in node.names if _private(a.name)]
    return found


def test_no_module_imports_the_private_names_of_another():
    assert private_imports() == []
