"""The command line uses only the public API, read from the source with ``ast`` (nothing imported).

The public API, for the CLI, is the package's facade (``hdmf_zarr3/__init__.py``: ``from .. import recover``) and
the doors of the layers above the backend (:data:`PUBLIC_DOORS`: ``from ..inspection import info``), each for the
names its ``__all__`` offers; and the CLI's own modules. Nothing below them: not ``storage``, ``format``,
``backend`` nor the adapters, not even through their doors, and not ``hdmf_zarr3.errors`` (the facade offers every
error the CLI reports). Imports inside functions count. A command is then what a user of the library could write.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from source_tree import PACKAGE, imported_from, package_of

import hdmf_zarr3

#: The doors of the layers above the backend, which the CLI may import.
PUBLIC_DOORS = ("hdmf_zarr3.dandi", "hdmf_zarr3.inspection", "hdmf_zarr3.hdf5", "hdmf_zarr3.view")


def _all(package: str) -> list[str]:
    init = PACKAGE.parent.joinpath(*package.split("."), "__init__.py")
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return list(ast.literal_eval(node.value))
    return []


def below_the_public_api(path: Path) -> Iterator[str]:
    """``line: what`` for every import of ``path`` reaching past the facade and the public doors."""
    package = package_of(path) if path.is_relative_to(PACKAGE) else "hdmf_zarr3.cli"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("hdmf_zarr3.") and not alias.name.startswith("hdmf_zarr3.cli"):
                    yield f"{node.lineno}: import {alias.name}"
        elif isinstance(node, ast.ImportFrom):
            module = imported_from(node, package)
            if module != "hdmf_zarr3" and not module.startswith("hdmf_zarr3."):
                continue
            if module == "hdmf_zarr3.cli" or module.startswith("hdmf_zarr3.cli."):
                continue
            if module == "hdmf_zarr3":
                offered = set(hdmf_zarr3.__all__)
            elif module in PUBLIC_DOORS:
                offered = set(_all(module))
            else:
                yield f"{node.lineno}: from {module} import ..."
                continue
            for alias in node.names:
                if alias.name not in offered:
                    yield f"{node.lineno}: {module}.{alias.name} (not in its __all__)"


def test_the_check_sees_what_it_forbids(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from .. import recover, ZarrIO\nfrom ..inspection import info\nfrom .output import say\n"
        "def run():\n    from ..storage.safety import recover\n    from ..format.data import printable\n"
        "    from ..hdf5 import nothing\n    import hdmf_zarr3.backend.zarrio\n    from .. import _version\n",
        encoding="utf-8",
    )
    assert list(below_the_public_api(sample)) == [
        "5: from hdmf_zarr3.storage.safety import ...",
        "6: from hdmf_zarr3.format.data import ...",
        "7: hdmf_zarr3.hdf5.nothing (not in its __all__)",
        "8: import hdmf_zarr3.backend.zarrio",
        "9: hdmf_zarr3._version (not in its __all__)",
    ]


def test_the_command_line_imports_only_the_public_api():
    modules = sorted((PACKAGE / "cli").rglob("*.py"))
    assert len(modules) >= 8
    wrong = [f"cli/{path.name}:{found}" for path in modules for found in below_the_public_api(path)]
    assert wrong == []
