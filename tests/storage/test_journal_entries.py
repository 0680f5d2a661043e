"""The append journal's entries in a local directory: a kept file is a hard link (its bytes survive the
rewrite that follows), names are flat, journals of the earlier nested form still apply, and a name that
points outside the file is refused before anything is written."""

from __future__ import annotations

import os

import pytest
from zarr.buffer import default_buffer_prototype
from zarr.core.sync import sync
from zarr.storage import LocalStore, MemoryStore

from hdmf_zarr3 import CorruptStoreError
from hdmf_zarr3.storage.safety import journal
from hdmf_zarr3.storage.safety.journal import Journal


def _put(store, key: str, raw: bytes) -> None:
    sync(store.set(key, default_buffer_prototype().buffer.from_bytes(raw)))


def _local(tmp_path) -> LocalStore:
    store = LocalStore(tmp_path / "f.zarr")
    _put(store, "zarr.json", b'{"zarr_format": 3, "node_type": "group"}')
    _put(store, "a/b/c/0", b"old chunk")
    _put(store, "50%/zarr.json", b"old doc")
    return store


def test_a_kept_local_file_is_a_hard_link_whose_bytes_survive_the_rewrite(tmp_path):
    store = _local(tmp_path)
    entries = Journal.begin(store)
    entries.keep(["a/b/c/0", "50%/zarr.json", "a/b/c/1"])
    root = tmp_path / "f.zarr" / journal.PREFIX
    kept = root / "saved" / "a%2Fb%2Fc%2F0"
    assert os.stat(kept).st_ino == os.stat(tmp_path / "f.zarr/a/b/c/0").st_ino  # a link, no copy
    assert (root / "saved" / "50%25%2Fzarr.json").read_bytes() == b"old doc"
    assert (root / "absent" / "a%2Fb%2Fc%2F1").exists()  # did not exist: deleted on undo
    assert sorted(p.name for p in (root / "saved").iterdir()) == ["50%25%2Fzarr.json", "a%2Fb%2Fc%2F0"]  # flat
    _put(store, "a/b/c/0", b"new chunk")
    _put(store, "a/b/c/1", b"new key")
    _put(store, "50%/zarr.json", b"new doc")
    assert kept.read_bytes() == b"old chunk"
    entries.undo()
    assert (tmp_path / "f.zarr/a/b/c/0").read_bytes() == b"old chunk"
    assert (tmp_path / "f.zarr/50%/zarr.json").read_bytes() == b"old doc"
    assert not (tmp_path / "f.zarr/a/b/c/1").exists() and not root.exists()


def test_a_finished_journal_leaves_nothing(tmp_path):
    store = _local(tmp_path)
    entries = Journal.begin(store)
    entries.keep(["a/b/c/0"])
    entries.finish()
    assert not (tmp_path / "f.zarr" / journal.PREFIX).exists()
    assert (tmp_path / "f.zarr/a/b/c/0").read_bytes() == b"old chunk"


def test_a_journal_in_another_store_is_kept_by_copy():
    store, side = MemoryStore(), MemoryStore()
    _put(store, "zarr.json", b"{}")
    _put(store, "x/c/0", b"old")
    entries = Journal.begin(store, side=side)
    entries.keep(["x/c/0"])
    _put(store, "x/c/0", b"new")
    entries.undo()
    assert sync(store.get("x/c/0", default_buffer_prototype())).to_bytes() == b"old"


def test_a_journal_of_the_nested_form_still_applies(tmp_path):
    """Journals written before entry names were flat (``saved/<key>``) are undone as before."""
    store = _local(tmp_path)
    _put(store, f"{journal.ROOT}", b'{"zarr_format": 3, "node_type": "group", "attributes": {"v": 1}}')
    _put(store, f"{journal.SAVED}a/b/c/0", b"older chunk")
    _put(store, f"{journal.ABSENT}a/b/c/9", b"")
    _put(store, "a/b/c/9", b"added")
    assert journal.undo(store)
    assert (tmp_path / "f.zarr/a/b/c/0").read_bytes() == b"older chunk"
    assert not (tmp_path / "f.zarr/a/b/c/9").exists()
    assert b'"v": 1' in (tmp_path / "f.zarr/zarr.json").read_bytes()


@pytest.mark.parametrize("name", ["..%2F..%2Foutside", "%2Fetc%2Fpasswd", "a%2F..%2F..%2Fx", "__hdmf_zarr3_lock"])
def test_an_entry_naming_a_key_outside_the_file_is_refused_and_nothing_is_written(tmp_path, name):
    store = _local(tmp_path)
    _put(store, journal.ROOT, b'{"zarr_format": 3, "node_type": "group"}')
    _put(store, journal.SAVED + name, b"hostile")
    before = sorted(p for p in tmp_path.rglob("*"))
    with pytest.raises(CorruptStoreError, match="not a key inside the file") as err:
        journal.undo(store)
    assert err.value.path
    assert sorted(p for p in tmp_path.rglob("*")) == before
    assert (tmp_path / "f.zarr/a/b/c/0").read_bytes() == b"old chunk"


def test_a_key_too_long_for_a_flat_name_is_kept_nested(tmp_path):
    store = _local(tmp_path)
    deep = "/".join(["d" * 40] * 6) + "/c/0"
    _put(store, deep, b"deep chunk")
    entries = Journal.begin(store)
    entries.keep([deep])
    assert journal.entry_name(deep) == deep
    _put(store, deep, b"rewritten")
    entries.undo()
    assert (tmp_path / "f.zarr" / deep).read_bytes() == b"deep chunk"


def test_a_symlink_in_place_of_a_chunk_is_not_linked(tmp_path):
    """Only regular files are kept as links; anything else goes through the store, which refuses it or
    copies what it reads."""
    store = _local(tmp_path)
    (tmp_path / "secret").write_bytes(b"secret")
    os.symlink(tmp_path / "secret", tmp_path / "f.zarr/a/b/c/5")
    entries = Journal.begin(store)
    entries.keep(["a/b/c/5"])
    kept = tmp_path / "f.zarr" / journal.PREFIX / "saved" / "a%2Fb%2Fc%2F5"
    assert not kept.is_symlink()


def test_a_local_journal_needs_no_store_round(tmp_path, monkeypatch):
    """Kept keys, present or absent, are journaled in the writer's thread: a writer never closed stores its
    held rows at exit, when no new thread can start (zarr's store calls would need one)."""
    store = _local(tmp_path)

    async def no_store_round(*args):
        raise AssertionError("kept through the store")

    monkeypatch.setattr(journal, "_keep", no_store_round)
    entries = Journal.begin(store)
    entries.keep(["a/b/c/0", "a/b/c/7"])
    root = tmp_path / "f.zarr" / journal.PREFIX
    assert (root / "saved" / "a%2Fb%2Fc%2F0").is_file() and (root / "absent" / "a%2Fb%2Fc%2F7").is_file()
