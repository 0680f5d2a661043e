"""Rules of size and naming that hold across ``src/hdmf_zarr3``, read from the source with ``ast`` (nothing imported).

- No function (or method) over :data:`MAX_FUNCTION_LINES` lines, from its ``def`` to its last line, and no module
  over :data:`MAX_MODULE_LINES` lines: a longer piece does more than one thing, and is split.
- Every module name is used once in the package: module stems and package names (``__init__`` aside), so that
  a name in a traceback, a log or a review says which file it is.
- No one-letter module aliases (``import numpy.typing as T``, ``from ..data import dtypes as D``, ``from . import
  x as Y`` where ``x`` is a module): a module is called by its name, so a reader knows what ``D.x`` is.
"""

from __future__ import annotations

import ast
import importlib.util
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from source_tree import PACKAGE, imported_from, package_of

MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 400


def _modules() -> list[Path]:
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 50
    return modules


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def long_functions(path: Path, limit: int = MAX_FUNCTION_LINES) -> Iterator[str]:
    """``name (lines)`` of every function of ``path`` longer than ``limit`` lines (``def`` line to last line)."""
    for node in ast.walk(_tree(path)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = node.end_lineno - node.lineno + 1  # type: ignore[operator]
            if lines > limit:
                yield f"{node.name} ({lines} lines)"


def module_names(root: Path = PACKAGE) -> dict[str, list[str]]:
    """Each module stem and package name under ``root`` -> the files and folders bearing it."""
    names: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if path.name == "__init__.py":
            if path.parent != root:
                names[path.parent.name].append(relative.removesuffix("/__init__.py") + "/")
        else:
            names[path.stem].append(relative)
    return names


def _is_module(dotted: str) -> bool:
    """Whether ``dotted`` names a module (ours, read from the tree; another library's, found by its spec)."""
    if dotted == "hdmf_zarr3" or dotted.startswith("hdmf_zarr3."):
        where = PACKAGE.parent.joinpath(*dotted.split("."))
        return where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()
    try:
        return importlib.util.find_spec(dotted) is not None
    except (ImportError, ValueError):
        return False


def one_letter_module_aliases(path: Path) -> Iterator[str]:
    """``line: statement`` of every import of ``path`` binding a module to a one-letter name."""
    package = package_of(path) if path.is_relative_to(PACKAGE) else ""
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            aliased = [a for a in node.names if a.asname is not None and len(a.asname) == 1]
        elif isinstance(node, ast.ImportFrom):
            base = imported_from(node, package)
            aliased = [
                a for a in node.names if a.asname is not None and len(a.asname) == 1 and _is_module(f"{base}.{a.name}")
            ]
        else:
            continue
        for alias in aliased:
            yield f"{node.lineno}: {ast.unparse(node)} ({alias.name} as {alias.asname})"


def test_the_size_checks_see_what_they_forbid(tmp_path):
    sample = tmp_path / "sample.py"
    body = "\n".join(f"    x{i} = {i}" for i in range(59))
    sample.write_text(f"def fits():\n{body}\n\n\nasync def long():\n{body}\n    return 1\n", encoding="utf-8")
    assert list(long_functions(sample)) == ["long (61 lines)"]


def test_no_function_is_longer_than_60_lines():
    wrong = [f"{path.relative_to(PACKAGE)} {found}" for path in _modules() for found in long_functions(path)]
    assert wrong == []


def test_no_module_is_longer_than_400_lines():
    wrong = [
        f"{path.relative_to(PACKAGE)} ({lines} lines)"
        for path in _modules()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    ]
    assert wrong == []


def test_the_name_check_sees_modules_and_packages(tmp_path):
    for relative in ("a/__init__.py", "a/info.py", "b/__init__.py", "b/info/__init__.py", "b/a.py", "c.py"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("", encoding="utf-8")
    twice = {name: where for name, where in module_names(tmp_path).items() if len(where) > 1}
    assert twice == {"a": ["a/", "b/a.py"], "info": ["a/info.py", "b/info/"]}


def test_every_module_name_is_used_once():
    twice = {name: where for name, where in module_names().items() if len(where) > 1}
    assert twice == {}


def test_the_alias_check_sees_module_aliases_only(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import numpy as np\nimport numpy.typing as T\nfrom numpy import typing as U\n"
        "from numpy import ndarray as A\nfrom os import path as P\n",
        encoding="utf-8",
    )
    found = list(one_letter_module_aliases(sample))
    assert [line.partition(":")[0] for line in found] == ["2", "3", "5"]
    # our own modules are found from the tree, relative imports resolved
    assert _is_module("hdmf_zarr3.format.data") and _is_module("hdmf_zarr3.format.vocabulary.dtypes")
    assert not _is_module("hdmf_zarr3.format.data.nothing_here")


def test_no_module_is_imported_under_a_one_letter_name():
    wrong = [f"{path.relative_to(PACKAGE)}:{found}" for path in _modules() for found in one_letter_module_aliases(path)]
    assert wrong == []
