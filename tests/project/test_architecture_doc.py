"""docs/architecture.md matches the tree: every module it names exists, and its tree shows every package."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import hdmf_zarr3

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(hdmf_zarr3.__file__).parent
PAGE = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def test_every_module_the_page_names_exists():
    named = set(re.findall(r"`([\w/]+\.py)`", PAGE))
    assert len(named) > 30
    missing = sorted(name for name in named if not (PACKAGE / name).is_file() and not (ROOT / name).is_file())
    assert missing == []


def test_the_tree_shows_every_package_and_top_level_module():
    tree = PAGE.split("```text", 1)[1].split("```", 1)[0]
    shown = set(re.findall(r"^  ([\w.]+/?)", tree, flags=re.M))
    packages = {p.name + "/" for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    modules = {p.name for p in PACKAGE.glob("*.py") if p.name != "_version.py"}
    assert packages | modules <= shown


def _tree() -> str:
    return PAGE.split("```text", 1)[1].split("```", 1)[0]


def test_the_tree_shows_every_room_under_its_layer():
    shown = {(len(indent) // 2, name) for indent, name in re.findall(r"^( +)(\w+)/", _tree(), flags=re.M)}
    rooms = {
        (len(p.relative_to(PACKAGE).parts), p.name)
        for p in PACKAGE.rglob("*")
        if p.is_dir() and (p / "__init__.py").is_file()
    }
    assert rooms <= shown


def test_every_name_the_tree_gives_a_door_is_in_its_all():
    wrong = []
    layer = ""
    for indent, name, door in re.findall(r"^( +)(\w+)/.*?(?:door: (.*))?$", _tree(), flags=re.M):
        if len(indent) == 2:
            layer = name
            continue
        package = importlib.import_module(f"hdmf_zarr3.{layer}.{name}")
        offered = set(package.__all__)
        wrong += [f"{layer}/{name}: {n}" for n in (x.strip() for x in door.split(",")) if n and n not in offered]
    assert wrong == []
