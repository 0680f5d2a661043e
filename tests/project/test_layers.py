"""The layering rules of the package, read from the source with ``ast`` (nothing is imported).

- ``hdmf_zarr3.format`` is pure rules: it imports only itself, the standard library, numpy, HDMF and
  zarr's public types, and :mod:`hdmf_zarr3.errors` (a leaf that imports nothing of ours), never a
  module above it (IO, storage, the writer, the command line). Imports inside functions count.
- Whether an array is sharded is decided in one place: only ``format/vocabulary/array_view.py`` spells the
  sharding codec's name (everything else uses its ``SHARDING_CODEC`` or asks an ``ArrayView``).
- The store layer takes the version from ``hdmf_zarr3._version``, not from the package root, so it
  never imports back through ``hdmf_zarr3/__init__.py``.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

from source_tree import PACKAGE, imported_from, package_of

import hdmf_zarr3

FORMAT = PACKAGE / "format"
#: Modules outside ``format/`` that it may import: leaves importing nothing of ours.
FORMAT_MAY_USE = {"hdmf_zarr3.errors"}  # the leaf every layer may use
THIRD_PARTY = {"numpy", "hdmf", "zarr"}


def imported(path: Path) -> Iterator[tuple[int, str]]:
    """``(line, module)`` for every import in ``path`` (at any depth), relative ones resolved."""
    package = package_of(path)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base_name = imported_from(node, package)
            if node.module is None:  # ``from .. import x``: each name may be a module
                for alias in node.names:
                    yield node.lineno, f"{base_name}.{alias.name}"
            else:
                yield node.lineno, base_name
                for alias in node.names:  # ``from ..data import dtypes``: a module of a package, too
                    if PACKAGE.parent.joinpath(*base_name.split("."), alias.name + ".py").is_file():
                        yield node.lineno, f"{base_name}.{alias.name}"


def ours(target: str) -> bool:
    return target == "hdmf_zarr3" or target.startswith("hdmf_zarr3.")


def test_the_resolver_sees_relative_and_nested_imports():
    # the checker must resolve what the format's modules actually write, or the rule proves nothing
    v3 = {m for _, m in imported(FORMAT / "dialects" / "hdmf_zarr_v3.py")}
    assert {"hdmf_zarr3.format.vocabulary.dtypes", "hdmf_zarr3.errors", "hdmf_zarr3.format.dialects.base"} <= v3
    assert "hdmf.build" in {m for _, m in imported(FORMAT / "data" / "values.py")}  # imported inside a function only
    # ``from ..format import references as R`` names the module too, not only its package
    assert "hdmf_zarr3.format.data.references" in {m for _, m in imported(PACKAGE / "backend" / "datasets" / "lazy.py")}


def test_format_imports_nothing_of_ours_from_above_it():
    modules = sorted(FORMAT.rglob("*.py"))
    assert len(modules) > 15
    wrong = [
        f"{p.relative_to(PACKAGE)}:{line} imports {target}"
        for p in modules
        for line, target in imported(p)
        if ours(target) and not target.startswith("hdmf_zarr3.format") and target not in FORMAT_MAY_USE
    ]
    assert wrong == []


def test_format_imports_only_the_standard_library_numpy_hdmf_and_zarr():
    wrong = [
        f"{p.relative_to(PACKAGE)}:{line} imports {target}"
        for p in sorted(FORMAT.rglob("*.py"))
        for line, target in imported(p)
        if not ours(target) and target.partition(".")[0] not in sys.stdlib_module_names | THIRD_PARTY
    ]
    assert wrong == []


def test_the_modules_the_format_may_use_import_nothing_of_ours():
    for name in FORMAT_MAY_USE:
        path = PACKAGE / (name.removeprefix("hdmf_zarr3.").replace(".", "/") + ".py")
        assert [t for _, t in imported(path) if ours(t)] == [], path


def test_the_store_layer_does_not_import_the_package_root():
    found = [
        (path.name, line, t)
        for path in sorted((PACKAGE / "storage").rglob("*.py"))
        for line, t in imported(path)
        if t == "hdmf_zarr3" or t.removeprefix("hdmf_zarr3.") in ("__version__", "__init__")
    ]
    assert found == []
    assert "hdmf_zarr3._version" in {t for _, t in imported(PACKAGE / "storage" / "handles" / "handle.py")}
    assert hdmf_zarr3.__version__ == importlib.import_module("hdmf_zarr3._version").__version__


def test_the_version_module_matches_the_project_metadata():
    import tomllib

    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    version = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]
    assert importlib.import_module("hdmf_zarr3._version").__version__ == version


def _string_constants(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Every string literal of ``tree`` (f-string parts included) except docstrings."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.lineno, node.value


def test_only_the_array_view_spells_the_sharding_codec():
    allowed = {FORMAT / "vocabulary" / "array_view.py"}
    wrong = [
        f"{path.relative_to(PACKAGE)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path not in allowed
        for line, text in _string_constants(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        if "sharding_indexed" in text
    ]
    assert wrong == []
    assert any(
        "sharding_indexed" in text
        for _, text in _string_constants(
            ast.parse((FORMAT / "vocabulary" / "array_view.py").read_text(encoding="utf-8"))
        )
    )
