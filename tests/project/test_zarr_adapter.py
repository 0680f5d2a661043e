"""zarr-python's private API stays behind one module, ``hdmf_zarr3/storage/stores/zarr_adapter.py``.

Read from the source with ``ast`` (nothing is imported): no other module of the package imports
``zarr.core`` (or a submodule of it), imports a name or module starting with ``_`` from zarr, or reaches
such a name through an imported zarr module (``zarr.core.sync.sync``, ``zarr.abc.store._x``). Imports
inside functions count. Then the adapter's wrappers, which carry no logic of their own, are checked to
behave as zarr's functions they wrap.
"""

from __future__ import annotations

import ast
import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from source_tree import PACKAGE
from zarr.storage import LocalStore, MemoryStore

from hdmf_zarr3.storage.stores import zarr_adapter

ADAPTER = PACKAGE / "storage" / "stores" / "zarr_adapter.py"


def _private(dotted: str) -> bool:
    """Whether a dotted name under ``zarr`` is private: ``zarr.core`` or below, or any part starting ``_``."""
    parts = dotted.split(".")
    if parts[0] != "zarr":
        return False
    return parts[1:2] == ["core"] or any(part.startswith("_") for part in parts[1:])


def _dotted(node: ast.expr) -> list[str] | None:
    """``["a", "b", "c"]`` for the expression ``a.b.c``, ``None`` for anything else."""
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(names)]


def private_zarr_uses(path: Path) -> Iterator[tuple[int, str]]:
    """``(line, name)`` for every private zarr name ``path`` imports or reaches by attribute."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    bound: dict[str, str] = {}  # local name -> the zarr module (or name) it was bound to, at any depth
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.partition(".")[0] != "zarr":
                    continue
                if _private(alias.name):
                    yield node.lineno, alias.name
                # ``import zarr.abc.store`` binds ``zarr``; ``import zarr.abc.store as s`` binds ``s``
                bound[alias.asname or "zarr"] = alias.name if alias.asname else "zarr"
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module.partition(".")[0] != "zarr":
                continue
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if _private(node.module) or _private(full):
                    yield node.lineno, full
                bound[alias.asname or alias.name] = full
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            names = _dotted(node)
            if names and names[0] in bound:
                full = ".".join([bound[names[0]], *names[1:]])
                if _private(full):
                    yield node.lineno, full


def test_the_checker_sees_what_it_forbids():
    # the adapter imports zarr.core and an underscore name: the rule proves nothing unless it sees them
    found = {name for _, name in private_zarr_uses(ADAPTER)}
    assert {"zarr.core.sync._get_loop", "zarr.core.metadata.v3.ArrayV3Metadata"} <= found
    assert "zarr.abc.store._store_supports_sync_io" in found


def test_the_checker_sees_attribute_paths_and_nested_imports(tmp_path):
    source = tmp_path / "sample.py"
    source.write_text(
        "import zarr\nimport zarr.abc.store as st\nfrom zarr import storage\n"
        "def f():\n    from zarr.storage._common import StorePath\n    return zarr.core.sync.sync\n"
        "x = st._store_supports_sync_io\ny = storage._local\nz = zarr.storage.LocalStore\n",
        encoding="utf-8",
    )
    assert sorted(private_zarr_uses(source)) == [
        (5, "zarr.storage._common.StorePath"),
        (6, "zarr.core"),
        (6, "zarr.core.sync"),
        (6, "zarr.core.sync.sync"),
        (7, "zarr.abc.store._store_supports_sync_io"),
        (8, "zarr.storage._local"),
    ]


def test_only_the_adapter_uses_private_zarr_api():
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 50
    wrong = [
        f"{path.relative_to(PACKAGE)}:{line} uses {name}"
        for path in modules
        if path != ADAPTER
        for line, name in private_zarr_uses(path)
    ]
    assert wrong == []


def test_sync_runs_a_coroutine_on_zarrs_loop_and_raises_its_errors():
    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    async def fail() -> None:
        raise KeyError("boom")

    assert zarr_adapter.sync(answer()) == 42
    with pytest.raises(KeyError, match="boom"):
        zarr_adapter.sync(fail())


def test_store_supports_sync_io(tmp_path):
    assert zarr_adapter.store_supports_sync_io(LocalStore(tmp_path))
    assert zarr_adapter.store_supports_sync_io(MemoryStore())
    assert not zarr_adapter.store_supports_sync_io(object())


def test_array_metadata_as_zarr_writes_it_fills_defaults_and_refuses_what_zarr_refuses():
    doc = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": [4],
        "data_type": "int16",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default"},
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "fill_value": 0,
    }
    written = json.loads(json.dumps(zarr_adapter.array_metadata_as_zarr_writes_it(json.loads(json.dumps(doc)))))
    assert written["shape"] == [4] and written["data_type"] == "int16"
    assert written["chunk_key_encoding"] == {"name": "default", "configuration": {"separator": "/"}}
    assert written["codecs"] == [{"name": "bytes", "configuration": {"endian": "little"}}]
    doc["codecs"] = [{"name": "bytes"}]  # a multi-byte type needs its byte order
    with pytest.raises(ValueError, match="endian"):
        zarr_adapter.array_metadata_as_zarr_writes_it(doc)


def test_wrapped_store_is_the_store_zarrs_wrapper_store_wraps():
    """zarr's ``WrapperStore`` keeps what it wraps as ``_store`` (no public name): if zarr renames it, this
    fails here rather than our wrappers (LivingStore, the virtual repository's reader) at a read."""
    from zarr.storage import WrapperStore

    from hdmf_zarr3.storage.safety import LivingStore

    inner = MemoryStore()
    assert zarr_adapter.wrapped_store(WrapperStore(inner)) is inner
    assert zarr_adapter.wrapped_store(inner) is None
    assert issubclass(LivingStore, WrapperStore)


def test_before_threads_stop_is_cpythons_hook_before_thread_pools_stop():
    """CPython's ``threading._register_atexit`` (no public name, used only by storage/stores/pools.py): a
    hook registered through it runs at exit before ``atexit`` hooks (and before zarr's pools refuse work)."""
    import subprocess
    import sys

    from hdmf_zarr3.storage.stores import pools

    assert callable(getattr(threading_module(), "_register_atexit", None))
    code = (
        "import atexit\n"
        "from hdmf_zarr3.storage.stores import before_threads_stop\n"
        "atexit.register(lambda: print('atexit', flush=True))\n"
        "before_threads_stop(lambda: print('before', flush=True))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and done.stdout.split() == ["before", "atexit"], done.stderr
    assert "_register_atexit" in Path(pools.__file__).read_text(encoding="utf-8")


def threading_module():
    import threading

    return threading
