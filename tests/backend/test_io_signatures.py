"""ZarrIO is split by noun (issue #39): ``backend/zarrio/io_file.py`` owns the file, ``backend/zarrio/zarr_io.py``
adds the tree; the collaborators they delegate to take what a call asked for, and no signature is written twice."""

from __future__ import annotations

import ast
from pathlib import Path

import hdmf_zarr3

BACKEND = Path(hdmf_zarr3.__file__).parent / "backend"


def _functions(path: Path) -> list[ast.FunctionDef]:
    return [n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.FunctionDef)]


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
