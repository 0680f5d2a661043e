"""Reading the package's source with ``ast`` (nothing imported): module names and where an import points.

Shared by the source checks of ``tests/project`` (layers, no reaching back, the zarr adapter).
"""

from __future__ import annotations

import ast
from pathlib import Path

import hdmf_zarr3

PACKAGE = Path(hdmf_zarr3.__file__).parent


def module_name(path: Path) -> str:
    """The dotted name of the module at ``path`` (a package's ``__init__.py``: the package)."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_of(path: Path) -> str:
    """The package a module's relative imports start from."""
    name = module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def imported_from(node: ast.ImportFrom, package: str) -> str:
    """The absolute name of the module a ``from ... import`` statement in ``package`` imports from."""
    if not node.level:
        return node.module or ""
    base = package.split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def door_names(init_file: Path) -> dict[str, tuple[str, str | None]]:
    """What a door offers, from its own imports: ``{name: (module, attribute)}``.

    ``from .handle import StoreHandle`` offers ``StoreHandle`` as ``(".handle", "StoreHandle")``;
    ``from . import nodes`` offers the module ``nodes`` as ``(".nodes", None)``.
    """
    offered: dict[str, tuple[str, str | None]] = {}
    for node in ast.parse(init_file.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            for alias in node.names:
                name = alias.asname or alias.name
                offered[name] = ("." + alias.name, None) if node.module is None else ("." + node.module, alias.name)
    return offered
