"""One identity per file (issue #38, point 2): the write lock and the open-file registry are keyed on the file
itself, resolved to its real path, so every spelling of one directory or zip meets the same lock: a symlink to
it, a chain of symlinks, a symlink in another directory, a symlinked parent, a relative path, ``./``, ``x/../``,
a trailing slash, a ``file://`` URL, a zarr ``LocalStore`` of a symlink. Two writers of one file, however each
spells it, never both get in (one's committed append would be lost); a ``w`` through any spelling of a file
this process reads is refused."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
import zarr
from hdmf.build import DatasetBuilder, GroupBuilder
from writing import write_builder

from hdmf_zarr3 import FileLockedError, SelfOverwriteError, ZarrIO

NAMES = ("f.zarr", "f.zarr.zip")

#: How a spelling of ``tmp_path / name`` is made (the working directory is ``tmp_path``).
SPELLINGS: dict[str, Callable[[Path, str], object]] = {
    "real": lambda tmp, name: tmp / name,
    "relative": lambda tmp, name: name,
    "dot": lambda tmp, name: f"./{name}",
    "dotdot": lambda tmp, name: f"sub/../{name}",
    "slash": lambda tmp, name: f"{tmp / name}/",
    "file-url": lambda tmp, name: f"file://{tmp / name}",
    "symlink": lambda tmp, name: _link(tmp / f"link-{name}", tmp / name),
    "symlink-elsewhere": lambda tmp, name: _link(tmp / "elsewhere" / name, tmp / name),
    "relative-symlink": lambda tmp, name: _link(tmp / f"rel-{name}", Path(name)),
    "chain": lambda tmp, name: _link(tmp / f"chain-{name}", _link(tmp / f"first-{name}", tmp / name)),
    "symlinked-parent": lambda tmp, name: _link(tmp / "parent-link", tmp) / name,
    "local-store-of-symlink": lambda tmp, name: zarr.storage.LocalStore(_link(tmp / f"store-{name}", tmp / name)),
}


def _link(link: Path, target: Path) -> Path:
    link.parent.mkdir(parents=True, exist_ok=True)
    if not link.is_symlink():
        link.symlink_to(target)
    return link


def _spellings(name: str) -> list[str]:
    # zarr's LocalStore is a directory's store: a zip passed as one is no spelling of the zip
    return [s for s in SPELLINGS if not (name.endswith(".zip") and s == "local-store-of-symlink")]


def _tree() -> GroupBuilder:
    return GroupBuilder("root", datasets={"d": DatasetBuilder("d", [0, 1, 2])})


@pytest.fixture
def at(tmp_path, monkeypatch):
    """``at(name)``: the file ``tmp_path / name`` written, ``tmp_path`` the working directory."""
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)

    def make(name: str) -> Path:
        write_builder(tmp_path / name, _tree())
        return tmp_path / name

    return make


@pytest.mark.parametrize("name", NAMES)
def test_every_spelling_of_a_file_meets_the_one_lock(at, tmp_path, name):
    """A writer holding a file by its real path refuses a second writer by any spelling, and a writer holding it
    by any spelling refuses one by the real path (and by the spelling after it)."""
    at(name)
    spellings = {s: SPELLINGS[s](tmp_path, name) for s in _spellings(name)}
    order = list(spellings)
    pairs = [("real", s) for s in order] + [(s, "real") for s in order[1:]]
    pairs += [(s, order[(i + 1) % len(order)]) for i, s in enumerate(order)]
    for first_by, second_by in pairs:
        holder = ZarrIO(spellings[first_by], mode="a")
        try:
            with pytest.raises(FileLockedError, match="open for writing"):
                ZarrIO(spellings[second_by], mode="a")
                pytest.fail(f"a writer by {second_by!r} got in while one by {first_by!r} held the file")
        finally:
            holder.close()
    assert sorted(p.name for p in tmp_path.glob("*.lock")) == []


@pytest.mark.parametrize("name", NAMES)
def test_the_lock_lies_beside_the_real_file_whatever_the_spelling(at, tmp_path, name):
    """The lock of a file reached through a symlink in another directory is ``<real file>.lock``, beside the
    file itself, never beside the symlink."""
    real = at(name)
    link = SPELLINGS["symlink-elsewhere"](tmp_path, name)
    with ZarrIO(link, mode="a"):
        assert Path(f"{real}.lock").is_file()
        assert [p.name for p in (tmp_path / "elsewhere").iterdir()] == [name]


@pytest.mark.parametrize("name", NAMES)
def test_appends_through_two_spellings_both_arrive(at, tmp_path, name):
    """The harm the probe found: two writers, through a symlink and the real path, each append and both report
    success, one append lost. Now the second waits for the first (is refused, then retried)."""
    real = at(name)
    link = SPELLINGS["symlink"](tmp_path, name)
    first = ZarrIO(link, mode="a")
    first.read_builder()["d"].data.append(3)
    with pytest.raises(FileLockedError):
        ZarrIO(real, mode="a")
    first.close()
    with ZarrIO(real, mode="a") as second:
        second.read_builder()["d"].data.append(4)
    with ZarrIO(link, mode="r") as reader:
        assert list(reader.read_builder()["d"].data[:]) == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("name", NAMES)
def test_a_file_written_through_a_symlink_stays_reached_through_it(at, tmp_path, name):
    """``w`` and ``a`` through a symlink change the file it leads to; the symlink stays a symlink (a zip used to
    be packed over the link, leaving the file it pointed to as it was)."""
    real = at(name)
    link = SPELLINGS["chain"](tmp_path, name)
    write_builder(link, GroupBuilder("root", datasets={"d": DatasetBuilder("d", [7])}))
    with ZarrIO(link, mode="a") as io:
        io.read_builder()["d"].data.append(8)
    assert link.is_symlink() and os.path.realpath(link) == str(real)
    with ZarrIO(real, mode="r") as reader:
        assert list(reader.read_builder()["d"].data[:]) == [7, 8]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith((".lock", ".partial", ".appending"))) == []


@pytest.mark.parametrize("name", NAMES)
def test_w_by_any_spelling_of_a_file_this_process_reads_is_refused(at, tmp_path, name):
    real = at(name)
    spellings = {s: SPELLINGS[s](tmp_path, name) for s in _spellings(name)}
    with ZarrIO(real, mode="r") as reader:
        reader.read_builder()
        for spelling, path in spellings.items():
            with pytest.raises(SelfOverwriteError):
                ZarrIO(path, mode="w")
                pytest.fail(f"mode w by {spelling!r} was not refused")
    with ZarrIO(real, mode="r") as reader:
        assert list(reader.read_builder()["d"].data[:]) == [0, 1, 2]


@pytest.mark.parametrize("spelling", ["symlink", "chain", "symlink-elsewhere", "file-url", "dotdot"])
def test_an_unfinished_zip_update_is_seen_and_cut_back_through_every_spelling(at, tmp_path, spelling):
    """The record of an unfinished update lies beside the zip itself: a reader through a symlink is told the file
    is incomplete, and ``recover`` through it says it cut the zip back (it said "nothing to recover")."""
    from hdmf_zarr3 import IncompleteFileError, recover

    real = at("f.zarr.zip")
    before = real.read_bytes()
    Path(f"{real}.appending").write_text(f'{{"size": {len(before)}}}')
    with open(real, "ab") as f:  # more than zip readers search for an end record: the zip reads as none
        f.write(b"PK\x03\x04" + bytes(100_000))
    path = SPELLINGS[spelling](tmp_path, "f.zarr.zip")
    with pytest.raises(IncompleteFileError, match="did not finish"):
        ZarrIO(path, mode="r")
    assert recover(path).endswith("cut the zip back to what it was before a change that did not finish")
    assert real.read_bytes() == before and not Path(f"{real}.appending").exists()
