"""Hostile chunks and store entries: every read path fails with a typed error naming the node; nothing hangs.

A companion of ``test_hostile.py`` (same guarded reader, :mod:`hostile_corpus`), for what a file holds
besides its metadata: chunks that are garbage, empty, truncated, padded or zeroed, on every read path
(the direct decoder of chunked and sharded numbers, zarr's pipeline, the scalars read at open, dask);
store entries that are not regular files inside the file (a FIFO, ``/dev/zero``, a directory, symlinks
out, symlink loops) or larger than their array's metadata allows; damaged zip files; and hdmf-zarr
0.13's object chunks. Each is read with ``ZarrIO`` (builders and values) and with ``NWBZarrIO``
(``read()``, then ``data[:]``, slices, ``len``, iteration), with and without ``dask=True``.
"""

from __future__ import annotations

import os
import re
import shutil
import warnings
import zipfile

import numpy as np
import pytest
from hostile_corpus import (
    deconsolidate,
    fresh_case,
    read_everything,
    read_values,
    zip_directory,
)

from hdmf_zarr3 import CorruptStoreError, NotZarrError, UnsafeDataError, UnsupportedCodecError, ZarrIO

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "hdmf-zarr-0.13")


@pytest.fixture
def f(tmp_path, hostile_bases):
    return fresh_case(hostile_bases / "layouts.zarr", tmp_path)


@pytest.fixture
def nwb(tmp_path, hostile_bases):
    return fresh_case(hostile_bases / "layouts.nwb.zarr", tmp_path)


FIRST_CHUNK = {
    "blosc": "c/0",
    "sharded": "c/0",
    "raw": "c/0",
    "zstd": "c/0",
    "gzip": "c/0",
    "text": "c/0",
    "grid": "c/0/0",
    "scalar": "c",
    "single": "c.0",
}
DAMAGE = {
    "garbage": lambda raw: b"garbage",
    "empty": lambda raw: b"",
    "truncated": lambda raw: raw[: len(raw) // 2],
    "one-byte-short": lambda raw: raw[:-1],
    "trailing-bytes": lambda raw: raw + b"\x01" * 8,
    "zeroed": lambda raw: bytes(len(raw)),
}
UNDETECTABLE = {("raw", "zeroed")}  # zeros are valid uncompressed values
READERS = {
    "builders": lambda path: read_everything(path),
    "values": lambda path: read_values(path),
    "dask": lambda path: read_values(path, dask=True),
}


def _damage(f, array, damage):
    chunk = f / array / FIRST_CHUNK[array]
    chunk.write_bytes(DAMAGE[damage](chunk.read_bytes()))


CHUNK_CASES = [
    pytest.param(a, d, r, id=f"{a}-{d}-{r}")
    for a in FIRST_CHUNK
    for d in DAMAGE
    for r in READERS
    if (a, d) not in UNDETECTABLE and (r == "builders" or d in ("garbage", "truncated"))
]


@pytest.mark.parametrize("array,damage,reader", CHUNK_CASES)
def test_a_damaged_chunk_is_a_corrupt_store_error_naming_array_and_chunk(f, array, damage, reader):
    _damage(f, array, damage)
    with pytest.raises(CorruptStoreError, match=rf"^/{array}: (chunk|shard index of) {FIRST_CHUNK[array]}\b") as raised:
        READERS[reader](f)
    assert raised.value.path == f"/{array}"


NWB_CHUNKS = {
    "single-chunk": "acquisition/ts/data/c.0",
    "chunked": "acquisition/chunked/data/c/1",
    "sharded": "acquisition/sharded/data/c/1",
    "strings": "units/quality/c.0",
    "table-column": "intervals/trials/start_time/c.0",
}


NWB_CASES = [
    pytest.param(where, dask, zarrio, id=f"{where}-{'dask' if dask else 'lazy'}-{'ZarrIO' if zarrio else 'NWBZarrIO'}")
    for where in NWB_CHUNKS
    for dask in (False, True)
    for zarrio in (False, True)
    if not dask or "data" in NWB_CHUNKS[where]
]  # dask=True swaps in TimeSeries data, not table columns


@pytest.mark.parametrize("where,dask,zarrio", NWB_CASES)
def test_a_damaged_chunk_of_an_nwb_file_fails_when_its_values_are_read(nwb, where, dask, zarrio):
    chunk = nwb / NWB_CHUNKS[where]
    chunk.write_bytes(DAMAGE["garbage"](chunk.read_bytes()))
    node = "/" + re.sub(r"/c([./]\d+)+$", "", NWB_CHUNKS[where])
    with pytest.raises(CorruptStoreError, match=r"^/\S+: (chunk|shard index of) c[/.]\d") as raised:
        read_values(nwb, nwb=True, dask=dask, zarrio=zarrio)
    assert raised.value.path == node


def test_a_short_zstd_chunk_never_reads_another_chunks_values(f):
    """A valid zstd frame of fewer bytes than a chunk: decoded into the reused chunk buffer it used to leave
    the previous chunk's values in place, silently."""
    import numcodecs

    (f / "zstd" / "c" / "1").write_bytes(numcodecs.Zstd(level=1).encode(np.arange(2, dtype="<i4").tobytes()))
    with pytest.raises(CorruptStoreError, match="^/zstd: chunk c/1 cannot be decoded"):
        read_values(f)


def test_a_truncated_blosc_chunk_never_reads_past_its_end(f):
    """numcodecs decodes a blosc frame by the size its header declares: cut short, the chunk read whatever
    memory followed it."""
    chunk = f / "blosc" / "c" / "1"
    chunk.write_bytes(chunk.read_bytes()[:-8])
    with pytest.raises(CorruptStoreError, match="header declares"):
        read_values(f)


def test_a_shard_index_pointing_past_the_end_is_a_corrupt_store_error(f):
    import numcodecs

    shard = f / "sharded" / "c" / "0"
    raw = shard.read_bytes()
    index = np.frombuffer(raw[-(16 * 4 + 4) : -4], dtype="<u8").reshape(4, 2).copy()
    index[1] = (len(raw) * 4, 64)
    shard.write_bytes(raw[: -(16 * 4 + 4)] + bytes(numcodecs.CRC32C().encode(index.tobytes())))
    with ZarrIO(f, mode="r") as io:
        data = io.read_builder()["sharded"].data
        with pytest.raises(CorruptStoreError, match="points past the end") as raised:
            data[2:3]  # one inner chunk: read by its byte range
    assert raised.value.path == "/sharded"


# --- 5. store entries that are not regular files inside the file, or too large -------------------------
def _fifo(path, tmp):
    os.mkfifo(path)


def _symlink(target):
    def plant(path, tmp):
        os.symlink(target(path, tmp) if callable(target) else target, path)

    return plant


def _copy_outside(path, tmp):
    outside = tmp / "outside.bin"
    shutil.copyfile(path.with_name(path.name + ".orig"), outside)
    return outside


def _sparse(size):
    def plant(path, tmp):
        with open(path, "wb") as out:
            out.truncate(size)

    return plant


ENTRIES = {  # how an entry is planted in place of a chunk or document, and the error it gives
    "fifo": (_fifo, CorruptStoreError, "named pipe"),
    "symlink-to-dev-zero": (_symlink("/dev/zero"), UnsafeDataError, "outside the file"),
    "directory": (lambda path, tmp: path.mkdir(), CorruptStoreError, "directory"),
    "symlink-to-etc-passwd": (_symlink("/etc/passwd"), UnsafeDataError, "outside the file"),
    "symlink-out-to-a-valid-copy": (_symlink(_copy_outside), UnsafeDataError, "outside the file"),
    "symlink-loop": (_symlink(lambda path, tmp: path), CorruptStoreError, "loop of symlinks"),
    "sparse-1-TiB": (_sparse(2**40), CorruptStoreError, "more than the"),
}
CHUNK_ENTRIES = {
    "chunked": "blosc/c/1",
    "sharded": "sharded/c/1",
    "single-chunk": "single/c.0",
    "scalar": "scalar/c",
    "strings": "text/c/1",
}


def _plant(f, tmp_path, key, entry):
    path = f / key
    path.rename(path.with_name(path.name + ".orig"))
    ENTRIES[entry][0](path, tmp_path)


@pytest.mark.parametrize("reader", ["builders", "dask"])
@pytest.mark.parametrize("where", CHUNK_ENTRIES)
@pytest.mark.parametrize("entry", ENTRIES)
def test_a_chunk_that_is_no_regular_file_inside_the_file_is_refused(f, tmp_path, entry, where, reader):
    _plant(f, tmp_path, CHUNK_ENTRIES[where], entry)
    _, error, message = ENTRIES[entry]
    with pytest.raises(error, match=message) as raised:
        READERS[reader](f)
    assert raised.value.path == "/" + CHUNK_ENTRIES[where].split("/")[0]


DOCUMENT_ENTRIES = {
    **{k: v for k, v in ENTRIES.items() if k != "sparse-1-TiB"},
    "sparse-1-GiB": (_sparse(2**30), CorruptStoreError, "more than the"),
}  # documents: 256 MiB


@pytest.mark.parametrize("entry", DOCUMENT_ENTRIES)
@pytest.mark.parametrize("node", ["/", "/blosc"])
def test_a_node_document_that_is_no_regular_file_inside_the_file_is_refused(f, tmp_path, entry, node):
    deconsolidate(f)  # every node's own zarr.json is listed and read
    path = f / ("zarr.json" if node == "/" else "blosc/zarr.json")
    path.rename(path.with_name(path.name + ".orig"))
    plant, error, message = DOCUMENT_ENTRIES[entry]
    plant(path, tmp_path)
    with pytest.raises(error, match=message) as raised:
        read_everything(f)
    assert raised.value.path == node


def test_a_directory_symlinked_out_of_the_file_is_refused(f, tmp_path):
    shutil.copytree(f / "blosc" / "c", tmp_path / "chunks")
    shutil.rmtree(f / "blosc" / "c")
    (f / "blosc" / "c").symlink_to(tmp_path / "chunks", target_is_directory=True)
    with pytest.raises(UnsafeDataError, match=r"^/blosc: chunk c/\d is a symlink to .*outside the file"):
        read_everything(f)


def test_symlinks_inside_the_file_are_followed(f):
    os.rename(f / "blosc" / "c" / "1", f / "blosc" / "c" / "1.real")
    os.symlink("1.real", f / "blosc" / "c" / "1")
    np.testing.assert_array_equal(read_everything(f)["/blosc"], np.arange(12.0))


def test_an_uncompressed_chunk_may_take_exactly_its_size(f):
    chunk = f / "raw" / "c" / "1"
    chunk.write_bytes(chunk.read_bytes() + b"\0")
    with pytest.raises(CorruptStoreError, match="^/raw: chunk c/1 is 17 bytes, more than the 16 its metadata allows"):
        read_everything(f)


# --- zip files -----------------------------------------------------------------------------------------
def _zipped(f, replace=None, method=zipfile.ZIP_STORED):
    target = f.parent / "f.zarr.zip"
    zip_directory(f, target, replace, method)
    return target


ZIP_CASES = {
    "member-larger-than-its-array-allows": (
        lambda f: _zipped(f, {"raw/c/1": bytes(2**20)}, zipfile.ZIP_DEFLATED),
        CorruptStoreError,
        "more than the",
    ),
    "member-compressed-with-bzip2": (
        lambda f: _zipped(f, method=zipfile.ZIP_BZIP2),
        UnsupportedCodecError,
        "zip method 12",
    ),
    # refused when opened: the path says zip, the bytes do not (NotZarrError, a StoreError naming the path)
    "not-a-zip": (lambda f: _write(f.parent / "f.zarr.zip", b"PK\x05\x06 not a zip"), NotZarrError, "not a zip file"),
    "truncated-zip": (lambda f: _truncate(_zipped(f)), NotZarrError, "not a zip file"),
    "member-crc-mismatch": (lambda f: _flip_member(_zipped(f), "blosc/c/1"), CorruptStoreError, "CRC|cannot be read"),
}


def _write(path, data):
    path.write_bytes(data)
    return path


def _truncate(path):
    path.write_bytes(path.read_bytes()[:-100])
    return path


def _flip_member(path, name):
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(name)
        start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    raw = bytearray(path.read_bytes())
    raw[start] ^= 0xFF
    path.write_bytes(bytes(raw))
    return path


@pytest.mark.parametrize("case", ZIP_CASES)
def test_a_damaged_zip_gives_a_typed_error(f, case):
    make, error, message = ZIP_CASES[case]
    target = make(f)
    shutil.rmtree(f)
    with pytest.raises(error, match=message):
        read_everything(target)


def test_a_zip_with_deflated_members_reads(f):
    target = _zipped(f, method=zipfile.ZIP_DEFLATED)
    np.testing.assert_array_equal(read_everything(target)["/grid"], np.arange(24.0).reshape(4, 6))


# --- hdmf-zarr 0.13 (Zarr v2) object chunks --------------------------------------------------------------
@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_damaged_object_chunk_of_a_zarr_v2_file_names_its_array(tmp_path, damage):
    source = os.path.join(FIXTURES, "full.nwb.zarr.zip")
    (tmp_path / "here").mkdir()
    target = tmp_path / "here" / "f.nwb.zarr.zip"
    key = "intervals/epochs/timeseries/0"
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info)
            dst.writestr(info.filename, DAMAGE[damage](data) if info.filename == key else data)
    with pytest.raises(CorruptStoreError, match="chunk 0 cannot be decoded") as raised:
        read_values(target, nwb=True)
    assert raised.value.path == "/intervals/epochs/timeseries"


# --- issue #38: a member twice -----------------------------------------------------------------------------
def _with_a_second(path, name, data):
    """``path`` with one more member named ``name`` (zipfile warns of the duplicate, and writes it)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with zipfile.ZipFile(path, "a") as archive:
            archive.writestr(name, data)
    return path


@pytest.mark.parametrize("member", ["blosc/c/1", "zarr.json", "raw/zarr.json"])
@pytest.mark.parametrize("mode", ["r", "r-", "a", "r+"])
def test_a_zip_holding_a_member_twice_is_refused_and_never_carried_forward(f, member, mode):
    """zipfile and zarr read the last of two members of one name: a hidden copy that ``validate`` called valid
    and an append kept. Refused when the zip is opened, in every mode, naming the member; the zip stays
    byte for byte and nothing is left beside it."""
    target = _zipped(f)
    shutil.rmtree(f)
    with zipfile.ZipFile(target) as archive:
        _with_a_second(target, member, archive.read(member)[:-1] + b"x")
    before = target.read_bytes()
    with pytest.raises(CorruptStoreError, match=f"two members named '{member}'"):
        if mode == "r":
            read_everything(target)  # (validate reports it too)
        else:
            with ZarrIO(target, mode=mode) as io:
                io.read_builder()
    assert target.read_bytes() == before
    assert sorted(p.name for p in target.parent.iterdir()) == ["f.zarr.zip"]
