"""The front door of a room: a package offers the names in its ``__all__``, each loaded on first use.

A door lists what its room offers as ordinary imports under ``if TYPE_CHECKING:`` (so readers and type
checkers see where each name comes from) and ends with ``__getattr__ = door(__name__, __file__)``. At run
time a name is imported from its module the first time another room asks for it (PEP 562), as
scientific Python's lazy loading does (SPEC 1). Why not import eagerly: rooms of one layer use each
other in both directions (``storage/stores`` opens through ``storage/safety``, whose locks read
documents through ``storage/stores``); an eager door would import the whole room, and such a pair of
rooms would fail at import time although no module imports itself. A lazy door imports exactly the
modules that plain imports of the modules would, so the import graph stays that of the modules.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any


def offered(init_file: str | Path) -> dict[str, tuple[str, str | None]]:
    """What a door offers, read from its ``if TYPE_CHECKING:`` imports: ``{name: (module, attribute)}``.

    ``from .handle import StoreHandle`` offers ``StoreHandle`` as ``(".handle", "StoreHandle")``;
    ``from . import nodes`` offers the module ``nodes`` as ``(".nodes", None)``.
    """
    tree = ast.parse(Path(init_file).read_text(encoding="utf-8"))
    names: dict[str, tuple[str, str | None]] = {}
    for node in tree.body:
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
            continue
        for imp in node.body:
            if not (isinstance(imp, ast.ImportFrom) and imp.level == 1):
                continue
            for alias in imp.names:
                exported = alias.asname or alias.name
                if imp.module is None:
                    names[exported] = ("." + alias.name, None)
                else:
                    names[exported] = ("." + imp.module, alias.name)
    return names


def door(package: str, init_file: str) -> Callable[[str], Any]:
    """The ``__getattr__`` of the package ``package`` whose door is the file ``init_file``."""
    names = offered(init_file)

    def __getattr__(name: str) -> Any:
        try:
            module, attribute = names[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        loaded = importlib.import_module(module, package)
        value = loaded if attribute is None else getattr(loaded, attribute)
        vars(importlib.import_module(package))[name] = value  # the next lookup is a plain attribute
        return value

    return __getattr__
