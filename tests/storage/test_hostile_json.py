"""Every JSON this package reads from a file is parsed within limits (format/documents/limits.py): the write
lock, the append journal's entries, the record of a zip update, a zip writer's working root, Zarr v2
JSON-encoded chunks and the documents check-dandi reads.

Each is given the same hostile inputs: far larger than any such file (a sparse file: its bytes are never
all read), nested too deeply for Python's parser, ten million empty lists (30 MB: within a node document's
bytes, far beyond its values), not JSON, and JSON of the wrong type. Each gives our typed error naming the
file or key (a lock: ``FileLockedError``, never broken silently), in bounded time and memory (the peak
measured as tests/format/test_json_limits.py measures it).
"""

from __future__ import annotations

import os
import zipfile

import numpy as np
import pytest
import zarr
from bounded_calls import error_within
from hdmf.build import DatasetBuilder, GroupBuilder
from writing import write_builder
from zarr.buffer import default_buffer_prototype
from zarr.core.sync import sync
from zarr.storage import LocalStore

from hdmf_zarr3 import CorruptStoreError, FileLockedError, MetadataLimitError, ZarrIO, break_lock
from hdmf_zarr3.dandi.zarr_rules import zarr_findings
from hdmf_zarr3.storage.safety import journal
from hdmf_zarr3.storage.stores import v2
from hdmf_zarr3.storage.zip import zipped

MEMORY = 128 * 2**20  # the largest read is one node document's limit (32 MiB), copied once or twice
SECONDS = 10.0
HUGE = 2**29  # a sparse file: reading it whole would take 512 MiB
HOSTILE = {
    "huge": None,  # written as a sparse file of HUGE bytes (zeros)
    "deeply nested": b"[" * 200_000 + b"]" * 200_000,
    "ten million empty lists": b"[" + b"[]," * 10_000_000 + b"[]]",
    "not JSON": b"\xff\xfe{not json",
}


def _write(path, content: bytes | None) -> None:
    if content is None:
        with open(path, "wb") as f:
            f.truncate(HUGE)
    else:
        with open(path, "wb") as f:
            f.write(content)


def _bounded(call):
    """``call()``'s error, checked to come in bounded time and memory."""
    return error_within(call, SECONDS, MEMORY)


def _tree() -> GroupBuilder:
    return GroupBuilder("root", datasets={"d": DatasetBuilder("d", [0, 1, 2])})


# --- the write lock ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", [*HOSTILE, "wrong type"])
def test_a_hostile_lock_file_is_reported_never_broken(tmp_path, name):
    path = tmp_path / "f.zarr"
    write_builder(path, _tree())
    lock = tmp_path / "f.zarr.lock"
    _write(lock, HOSTILE.get(name, b"[1, 2]"))
    before = lock.stat().st_size
    error = _bounded(lambda: ZarrIO(path, mode="a"))
    assert isinstance(error, FileLockedError), error
    assert error.path == str(path) and f"write lock {lock} is unreadable" in str(error)
    assert "break_lock" in str(error)
    assert lock.stat().st_size == before  # still there: a writer that may be alive is never locked out silently
    found: list = []
    assert _bounded(lambda: found.append(break_lock(path))) is None
    assert "corrupt" in found[0] and not lock.exists()


def test_a_hostile_lock_inside_a_store_is_reported():
    store = zarr.storage.MemoryStore()
    write_builder(store, _tree())
    raw = HOSTILE["ten million empty lists"]
    sync(store.set("hdmf_zarr3.lock", default_buffer_prototype().buffer.from_bytes(raw)))
    error = _bounded(lambda: ZarrIO(store, mode="a"))
    assert isinstance(error, FileLockedError) and "larger than any lock" in str(error), error


def test_a_huge_lock_object_is_read_no_further_than_a_lock(s3):
    from s3_server import new_bucket

    bucket = new_bucket(s3)
    url, options = f"s3://{bucket}/f.zarr", s3["options"]
    write_builder(url, _tree(), storage_options=options)
    s3["client"]().put_object(Bucket=bucket, Key="f.zarr.lock", Body=HOSTILE["ten million empty lists"])
    error = _bounded(lambda: ZarrIO(url, mode="a", storage_options=options))
    assert isinstance(error, FileLockedError) and "larger than any lock" in str(error), error
    assert "corrupt" in break_lock(url, storage_options=options)


# --- the append journal ------------------------------------------------------------------------------
def _put(store, key: str, raw: bytes) -> None:
    sync(store.set(key, default_buffer_prototype().buffer.from_bytes(raw)))


@pytest.mark.parametrize("name", [*HOSTILE, "wrong type"])
def test_a_hostile_journal_entry_is_refused_and_nothing_is_undone(tmp_path, name):
    store = LocalStore(tmp_path / "f.zarr")
    _put(store, "zarr.json", b'{"zarr_format": 3, "node_type": "group", "attributes": {"v": 2}}')
    _put(store, "a/zarr.json", b'{"zarr_format": 3, "node_type": "group"}')
    _put(store, journal.ROOT, b'{"zarr_format": 3, "node_type": "group", "attributes": {"v": 1}}')
    entry = f"{journal.NEW}0"
    os.makedirs(tmp_path / "f.zarr" / journal.NEW, exist_ok=True)
    _write(tmp_path / "f.zarr" / entry, HOSTILE.get(name, b'{"a": 1}'))
    error = _bounded(lambda: journal.undo(store))
    assert isinstance(error, CorruptStoreError), error
    assert error.path == entry and "journal entry" in str(error)
    # nothing undone, nothing lost: the file and the whole journal are as they were
    assert (tmp_path / "f.zarr/zarr.json").read_bytes().endswith(b'{"v": 2}}')
    assert (tmp_path / "f.zarr/a/zarr.json").exists() and journal.exists(store)


# --- a zip update's record, a zip writer's working root -----------------------------------------------
@pytest.mark.parametrize("name", [*HOSTILE, "wrong type", "a boolean size", "a negative size"])
def test_a_hostile_record_of_a_zip_update_is_refused_and_the_zip_kept(tmp_path, name):
    path = tmp_path / "f.zarr.zip"
    write_builder(path, _tree())
    with open(path, "ab") as f:  # as a killed update leaves it: the zip does not end complete
        f.write(b"PK\x03\x04 half a member")
    before = path.read_bytes()
    record = tmp_path / ("f.zarr.zip" + zipped.APPENDING)
    content = {"wrong type": b"[1]", "a boolean size": b'{"size": true}', "a negative size": b'{"size": -1}'}
    _write(record, HOSTILE.get(name, content.get(name)))
    error = _bounded(lambda: ZarrIO(path, mode="a"))
    assert isinstance(error, CorruptStoreError), error
    assert error.path == str(record) and "record of an unfinished zip update" in str(error)
    assert path.read_bytes() == before and record.exists()  # nothing cut: the record may be checked by hand


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_zip_writers_hostile_working_root_counts_as_unfinished(tmp_path, name):
    path = tmp_path / "f.zarr.zip"
    write_builder(path, _tree())
    before = path.read_bytes()
    working = tmp_path / "f.zarr.zip.abc.partial"
    working.mkdir()
    _write(working / "zarr.json", HOSTILE[name])
    assert _bounded(lambda: zipped.abandon(str(working), str(path))) is None
    assert path.read_bytes() == before and not working.exists()
    assert zipfile.ZipFile(path).testzip() is None


# --- Zarr v2 JSON-encoded chunks ---------------------------------------------------------------------
V2_JSON_ARRAY = {"zarr_format": 2, "dtype": "|O", "compressor": None, "filters": [{"id": "json2"}]}


@pytest.mark.parametrize("name", [n for n in HOSTILE if n != "huge"] + ["huge"])
def test_a_hostile_json_encoded_chunk_is_refused_naming_the_array(tmp_path, name):
    raw = bytes(2**26) if name == "huge" else HOSTILE[name]  # (64 MiB of zeros: over a document's limit)
    error = _bounded(lambda: v2.decode_object_chunk(V2_JSON_ARRAY, raw, "/table/col"))
    assert isinstance(error, CorruptStoreError), error
    assert error.path == "/table/col" and "JSON-encoded chunk" in str(error)


def test_a_json_encoded_chunk_still_decodes():
    raw = b'["a", "bc", "|O", [2]]'
    assert v2.decode_object_chunk(V2_JSON_ARRAY, raw, "/t").tolist() == ["a", "bc"]
    assert isinstance(v2.decode_object_chunk(V2_JSON_ARRAY, raw, "/t"), np.ndarray)


# --- check-dandi -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("huge", "hdmf_zarr3.zarr_json_too_large"),
        ("ten million empty lists", "hdmf_zarr3.zarr_json_too_large"),
        ("deeply nested", "zarr.invalid_zarr_json"),
        ("not JSON", "zarr.invalid_zarr_json"),
    ],
)
def test_check_dandi_reads_a_hostile_zarr_json_within_the_limits(tmp_path, name, rule):
    store = LocalStore(tmp_path / "f.zarr")
    _put(store, "zarr.json", b'{"zarr_format": 3, "node_type": "group"}')
    os.makedirs(tmp_path / "f.zarr/stray")
    raw = bytes(40 * 2**20) if name == "huge" else HOSTILE[name]  # (40 MiB: a zarr.json over its limit)
    _write(tmp_path / "f.zarr/stray/zarr.json", raw)
    found = []
    assert _bounded(lambda: found.extend(zarr_findings(store, local=False))) is None
    assert [(f.rule, f.path) for f in found] == [(rule, "/stray")]
    if rule.startswith("hdmf_zarr3"):
        assert "more than" in found[0].message


def test_the_limits_are_metadata_limit_errors():
    """Beyond a limit (bytes, values) is a MetadataLimitError, a CorruptStoreError: callers may tell a file
    too large for this reader from a damaged one."""
    error = _bounded(lambda: v2.decode_object_chunk(V2_JSON_ARRAY, HOSTILE["ten million empty lists"], "/t"))
    assert isinstance(error, MetadataLimitError) and isinstance(error, CorruptStoreError)
