"""Each decision made once (issue #39): opening an NWB file decides its opening once (``decide``: the mode,
a store of another library made ready), opens its store once with that decision (``open_decided``, never a
second ``open_store``) and detects its dialect once, whatever the mode and the kind of store; the io hands
what it opened to nothing through class attributes."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from writing import StoreCase

import hdmf_zarr3.backend.zarrio as zarrio_room
from hdmf_zarr3 import NWBZarrIO, ZarrIO
from hdmf_zarr3.storage.handles import opening_decisions

COUNTED = ("decide", "open_decided", "open_store", "dialect_of")
ONCE = Counter({"decide": 1, "open_decided": 1, "ready_store": 1, "dialect_of": 1})


@contextmanager
def counted_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Every call of ``decide``, ``open_decided``, ``open_store`` and ``dialect_of`` the io classes' room makes,
    counted by name (each patched in every module of ``backend/zarrio`` that holds it, to the same counter), and
    every ``ready_store`` (made only by ``decide``)."""
    calls: Counter[str] = Counter()
    modules = [
        importlib.import_module(f"{zarrio_room.__name__}.{i.name}") for i in pkgutil.iter_modules(zarrio_room.__path__)
    ]
    for module in [*modules, opening_decisions]:
        for name in (*COUNTED, "ready_store") if module is opening_decisions else COUNTED:
            original = getattr(module, name, None)
            if original is None:
                continue

            def counting(*args: Any, _original: Any = original, _name: str = name, **kwargs: Any) -> Any:
                calls[_name] += 1
                return _original(*args, **kwargs)

            monkeypatch.setattr(module, name, counting)
    yield calls


@pytest.mark.parametrize("mode", ["r", "r+", "a", "r-"])
def test_an_nwb_file_is_opened_once_with_its_dialect_detected_once(any_store: StoreCase, monkeypatch, mode):
    any_store.write()
    with counted_calls(monkeypatch) as calls:
        io = any_store.open(mode)
        try:
            assert io.read().session_description
        finally:
            io.close()
    assert calls == ONCE, calls


@pytest.mark.parametrize("mode", ["w", "a"])
def test_a_new_nwb_file_is_opened_once(any_store: StoreCase, monkeypatch, mode):
    with counted_calls(monkeypatch) as calls:
        any_store.write(mode=mode)
    assert calls == ONCE, calls


def test_the_io_classes_hand_nothing_on_through_class_attributes():
    for cls in (ZarrIO, NWBZarrIO):
        assert not [name for name in vars(cls) if name.startswith("_opened")]


def _array() -> Any:
    import numpy as np

    return np.arange(4000, dtype="float64").reshape(1000, 4)


def _iterator() -> Any:
    from hdmf.data_utils import DataChunkIterator

    return DataChunkIterator(data=_array(), buffer_size=100)


def _generic_iterator() -> Any:
    from parallel_iterators import ArrayIterator

    return ArrayIterator(_array(), buffer_shape=(250, 4), chunk_shape=(50, 4))


@pytest.mark.parametrize(
    ("data", "write_args"),
    [
        (_array, {}),
        (_iterator, {}),
        (_generic_iterator, {}),
        (_generic_iterator, {"number_of_jobs": 2}),
    ],
    ids=["array", "iterator", "generic-iterator", "generic-iterator-in-workers"],
)
def test_a_datasets_layout_is_checked_once_per_write(tmp_path, monkeypatch, data, write_args):
    from writing import nwbfile_with

    from hdmf_zarr3 import ZarrDataIO
    from hdmf_zarr3.backend.settings import layout_choice

    checks: list[str | None] = []
    original = layout_choice.checked

    def counting(path: str | None, *args: Any) -> Any:
        checks.append(path)
        return original(path, *args)

    for name, module in list(sys.modules.items()):  # wherever the check is imported (ZarrDataIO, the writer...)
        if name.startswith("hdmf_zarr3.backend") and getattr(module, "checked", None) is original:
            monkeypatch.setattr(module, "checked", counting)
    wrapped = ZarrDataIO(data(), chunks=(100, 4), shards=(200, 4), fill_value=-1.0)
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="w") as io:
        io.write(nwbfile_with(wrapped), **write_args)
    assert len(checks) == 1, checks
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="r") as io:
        stored = io.read().acquisition["x"].data
        assert stored.chunks == (100, 4) and stored.shape == (1000, 4)


def test_the_backend_sets_no_flag_on_a_store_handle_after_it_is_built():
    # consolidate_metadata and the convention's dimension names are arguments of what uses them
    # (StoreHandle.commit, StoreHandle.put_documents), not flags flipped on an open handle
    import ast
    from dataclasses import fields
    from pathlib import Path

    import hdmf_zarr3
    from hdmf_zarr3.storage.handles import StoreHandle

    assert not {"consolidate", "names_dimensions"} & {f.name for f in fields(StoreHandle)}
    flipped = []
    backend = Path(hdmf_zarr3.__file__).parent / "backend"
    for path in sorted(backend.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else []
            flipped += [
                f"{path.name}:{node.lineno} {ast.unparse(t)}"
                for t in targets
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and "handle" in t.value.id
            ]
    assert flipped == []


def test_the_backend_decides_what_a_mode_means_in_one_module():
    # backend/zarrio/file_modes.py FileMode: created, read only, replaced; nowhere else is a mode compared
    import ast
    from pathlib import Path

    import hdmf_zarr3

    def is_mode(node: ast.expr) -> bool:
        return (isinstance(node, ast.Name) and node.id == "mode") or (
            isinstance(node, ast.Attribute) and node.attr == "mode"
        )

    def is_mode_value(node: ast.expr) -> bool:
        if isinstance(node, ast.Constant):
            return isinstance(node.value, str)
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts)
        return isinstance(node, (ast.Name, ast.Attribute)) and ast.unparse(node).endswith("MODES")

    compared = []
    backend = Path(hdmf_zarr3.__file__).parent / "backend"
    for path in sorted(backend.rglob("*.py")):
        if path.name == "file_modes.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                if any(is_mode(s) for s in sides) and any(is_mode_value(s) for s in sides):
                    compared.append(f"{path.relative_to(backend)}:{node.lineno} {ast.unparse(node)}")
    assert compared == []
