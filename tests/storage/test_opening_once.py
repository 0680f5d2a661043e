"""Each decision of an opening made once (issue #39): ``open_store`` wraps a store of another library once
(``ready_store``), checks once that a creating mode replaces no file this process reads
(``check_replaceable``), and builds the handle with every setting it keeps (mode ``r-`` included): nothing is
changed on a handle after it is built."""

from __future__ import annotations

import pytest
from writing import write_nwb
from zarr.storage import MemoryStore

from hdmf_zarr3 import ModeError, NotZarrError, StoreError
from hdmf_zarr3.storage.handles import open_store, opening_decisions
from hdmf_zarr3.storage.handles import store_opening as opening_module
from hdmf_zarr3.storage.safety import open_files

KINDS = ["local", "zip", "memory"]


def _target(kind, tmp_path):
    return {"local": tmp_path / "f.nwb.zarr", "zip": tmp_path / "f.nwb.zarr.zip", "memory": MemoryStore()}[kind]


def _counting(monkeypatch, owner, name):
    calls = []
    original = getattr(owner, name)

    def counted(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def _write_one(target):
    handle = open_store(target, "w")
    handle.will_change()
    handle.commit()
    handle.close()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("mode", ["r", "r-", "r+", "a", "w", "w-"])
def test_a_store_is_made_ready_once_per_open(kind, mode, tmp_path, monkeypatch):
    target = _target(kind, tmp_path)
    if mode != "w-":
        _write_one(target)
    calls = _counting(monkeypatch, opening_decisions, "ready_store")
    open_store(target, mode).close()
    assert len(calls) == 1


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("mode", ["w", "w-", "x"])
def test_a_creating_mode_checks_once_that_nothing_read_is_replaced(kind, mode, tmp_path, monkeypatch):
    target = _target(kind, tmp_path)
    calls = _counting(monkeypatch, open_files, "check_replaceable")
    open_store(target, mode).close()
    assert len(calls) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_mode_r_minus_is_decided_before_the_handle_is_built(kind, tmp_path, monkeypatch):
    """``r-`` reads without the consolidated metadata: the handle is built so, its setting never flipped."""
    target = _target(kind, tmp_path)
    _write_one(target)
    built = []
    original = opening_module.StoreHandle.opened.__func__

    def recording(cls, *args, **kwargs):
        handle = original(cls, *args, **kwargs)
        built.append(handle.use_consolidated)
        return handle

    monkeypatch.setattr(opening_module.StoreHandle, "opened", classmethod(recording))
    handle = open_store(target, "r-")
    try:
        assert built == [False] and handle.use_consolidated is False and handle.mode == "r"
    finally:
        handle.close()


def test_the_decisions_of_an_opening_are_refused_before_anything_is_opened(tmp_path):
    with pytest.raises(ModeError, match="invalid mode"):
        opening_decisions.decide(tmp_path / "f.nwb.zarr", "q")
    with pytest.raises(ModeError, match="allow_incomplete"):
        opening_decisions.decide(tmp_path / "f.nwb.zarr", "a", allow_incomplete=True)
    decided = opening_decisions.decide(tmp_path / "f.nwb.zarr", "r-", external_roots=["/data"])
    assert (decided.mode, decided.use_consolidated, decided.external_roots) == ("r", False, ("/data",))


# ---- storage_options: translated once, reused by the lock; refused where nothing would use them -------------


def test_an_object_store_file_translates_its_options_once_and_its_lock_reuses_them(s3, monkeypatch):
    """A writer on S3 opens two object stores (the file's, and the one beside it holding its lock): both are
    made from one translation of ``storage_options``, the lock's with the very same obstore arguments."""
    pytest.importorskip("moto")
    from s3_server import new_bucket

    from hdmf_zarr3.storage.remote import object_stores

    translations = _counting(monkeypatch, object_stores, "to_obstore")
    made = []
    original = object_stores.remote_store

    def recording(url, mode, options):
        made.append((url, options))
        return original(url, mode, options)

    monkeypatch.setattr(opening_module, "remote_store", recording)
    url = f"s3://{new_bucket(s3)}/f.nwb.zarr"
    handle = open_store(url, "w", dict(s3["options"]))
    try:
        assert handle.lock is not None and handle.lock.place.key == "f.nwb.zarr.lock"
    finally:
        handle.close()
    assert len(translations) == 1
    assert [u for u, _ in made] == [url, url.rsplit("/", 1)[0]]  # the file's store, then its lock's
    assert made[0][1] is made[1][1]  # one translated value, handed to both


@pytest.mark.parametrize("kind", KINDS)
def test_options_nothing_would_use_are_refused_naming_them(kind, tmp_path):
    """A local directory, a local zip and a Store passed in use no ``storage_options`` (zarr-python refuses
    unused ones too): refused with our error naming each key and the file, before anything is created."""
    target = _target(kind, tmp_path)
    for mode in ("r", "w", "a"):
        with pytest.raises(StoreError, match=r"storage_options 'anon', 'region' would not be use") as caught:
            open_store(target, mode, {"anon": True, "region": "x"})
        assert caught.value.path
    assert not any(tmp_path.iterdir())
    open_store(target, "w", {}).close()  # (none given: nothing to refuse)


@pytest.mark.parametrize("kind", KINDS)
def test_breaking_a_lock_refuses_options_nothing_would_use_and_leaves_the_lock(kind, tmp_path):
    """``break_lock`` (and ``recover(..., break_lock=True)``, which breaks the lock first) refuse them as opening
    does, before the lock is touched."""
    from hdmf_zarr3 import break_lock, recover

    target = _target(kind, tmp_path)
    held = open_store(target, "w")  # a writer holding the lock
    try:
        with pytest.raises(StoreError, match=r"storage_options 'anon' would not be used"):
            break_lock(target, {"anon": True})
        with pytest.raises(StoreError, match=r"storage_options 'anon' would not be used"):
            recover(target, {"anon": True}, break_lock=True)
        assert held.lock is None or held.lock.ours()
    finally:
        held.close()


@pytest.mark.parametrize("other", ["hdf5 file", "directory of other files"])
def test_force_overwrite_checks_once_that_nothing_read_is_replaced(other, tmp_path, monkeypatch):
    """hdmf-zarr's ``force_overwrite``: what is no Zarr file at the path is checked once (not read by this
    process), deleted, and the new file opened; the io used to check it, delete it, then open_store checked
    the same path again."""
    target = tmp_path / "f.nwb.zarr"
    if other == "hdf5 file":
        target.write_bytes(b"\x89HDF\r\n\x1a\n" + bytes(504))
    else:
        target.mkdir()
        (target / "notes.txt").write_text("not zarr")
    calls = _counting(monkeypatch, open_files, "check_replaceable")
    write_nwb(target, force_overwrite=True)
    assert len(calls) == 1
    assert not (target / "notes.txt").exists()
    other_place = tmp_path / "g.nwb.zarr"  # without force_overwrite, refused and kept
    other_place.write_bytes(b"\x89HDF\r\n\x1a\n" + bytes(504))
    with pytest.raises(NotZarrError):
        open_store(other_place, "w")
    assert other_place.is_file()
