"""Each decision made once (issue #39): opening an NWB file opens its store once, makes a store passed in
ready once and detects its dialect once, whatever the mode and the kind of store; the io hands what it
opened to nothing through class attributes."""

from __future__ import annotations

import importlib
import pkgutil
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from writing import StoreCase

import hdmf_zarr3.backend.zarrio as zarrio_room
from hdmf_zarr3 import NWBZarrIO, ZarrIO

COUNTED = ("open_store", "ready_store", "dialect_of")


@contextmanager
def counted_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Every call of ``open_store``, ``ready_store`` and ``dialect_of`` the io classes' room makes, counted by name
    (each patched in every module of ``backend/zarrio`` that holds it, to the same counter)."""
    calls: Counter[str] = Counter()
    for info in pkgutil.iter_modules(zarrio_room.__path__):
        module = importlib.import_module(f"{zarrio_room.__name__}.{info.name}")
        for name in COUNTED:
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
    assert calls == Counter({"open_store": 1, "ready_store": 1, "dialect_of": 1}), calls


@pytest.mark.parametrize("mode", ["w", "a"])
def test_a_new_nwb_file_is_opened_once(any_store: StoreCase, monkeypatch, mode):
    with counted_calls(monkeypatch) as calls:
        any_store.write(mode=mode)
    assert calls == Counter({"open_store": 1, "ready_store": 1, "dialect_of": 1}), calls


def test_the_io_classes_hand_nothing_on_through_class_attributes():
    for cls in (ZarrIO, NWBZarrIO):
        assert not [name for name in vars(cls) if name.startswith("_opened")]
