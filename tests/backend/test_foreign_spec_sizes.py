"""Cached specifications of other writers' files are refused by their stored sizes before any is read (#27).

Ours are in their node documents, parsed within the file's metadata budget. hdmf-zarr's (0.13: Zarr v2, JSON
codec; 0.14: Zarr v3, ``vlen-utf8`` + ``zstd``) are one text in a chunk each, and a reader fetches all of a
namespace's at once: a hostile file's chunks could each take up to what any variable-length chunk may (1 GiB)
and be read together before a text is measured. The chunks here are sparse files: reading one costs memory,
its size costs nothing.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from bounded_calls import error_within
from hostile_corpus import edit

from hdmf_zarr3 import CorruptStoreError, MetadataLimitError, NWBZarrIO
from hdmf_zarr3.backend.cached_specs.cache import MAX_STORED_SPEC_BYTES
from hdmf_zarr3.format.documents.limits import MAX_FILE_METADATA_BYTES
from hdmf_zarr3.inspection import validate

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
#: writer -> (fixture, the key of one spec document's chunk, relative to its array)
WRITERS = {
    "hdmf-zarr-0.13": ("hdmf-zarr-0.13/full-json.nwb.zarr.zip", "0"),
    "hdmf-zarr-0.14": ("hdmf-zarr-0.14/full.nwb.zarr.zip", "c"),
}
MEMORY = 48 * 2**20


def _unpacked(writer: str, where: Path) -> Path:
    path = where / "foreign.nwb.zarr"
    with zipfile.ZipFile(FIXTURES / WRITERS[writer][0]) as zf:
        zf.extractall(path)
    return path


@pytest.fixture(params=list(WRITERS))
def foreign(request, tmp_path) -> tuple[Path, str]:
    return _unpacked(request.param, tmp_path), WRITERS[request.param][1]


def _spec_chunks(path: Path, chunk: str) -> list[Path]:
    (version,) = [p for p in (path / "specifications" / "core").iterdir() if p.is_dir()]
    return sorted(p / chunk for p in version.iterdir() if (p / chunk).is_file())


def _sparse(chunk: Path, size: int) -> None:
    with open(chunk, "r+b") as f:
        f.truncate(size)


def _read(path: Path) -> None:
    with NWBZarrIO(str(path), mode="r") as io:
        io.read()


def test_a_foreign_file_reads_as_its_writer_left_it(foreign):
    path, _ = foreign
    _read(path)


def test_one_cached_specification_too_large_is_refused_by_its_size(foreign):
    path, chunk = foreign
    target = _spec_chunks(path, chunk)[0]
    _sparse(target, 4 * MAX_STORED_SPEC_BYTES)
    error = error_within(lambda: _read(path), seconds=30, memory=MEMORY)
    assert isinstance(error, MetadataLimitError), repr(error)
    assert error.path == "/" + str(target.parent.relative_to(path))
    assert str(MAX_STORED_SPEC_BYTES) in str(error)
    assert not validate(path).valid


def test_cached_specifications_too_large_together_are_refused_before_any_is_read(foreign):
    path, chunk = foreign
    chunks = _spec_chunks(path, chunk)
    each = MAX_STORED_SPEC_BYTES - 1  # each within the limit of one
    needed = MAX_FILE_METADATA_BYTES // each + 1
    assert len(chunks) >= needed
    for target in chunks[:needed]:
        _sparse(target, each)
    error = error_within(lambda: _read(path), seconds=30, memory=MEMORY)
    assert isinstance(error, MetadataLimitError), repr(error)
    assert "together" in str(error) and "/specifications/core/" in error.path
    assert not validate(path).valid


def test_a_cached_specification_of_many_values_is_refused_before_it_is_read(tmp_path):
    path = _unpacked("hdmf-zarr-0.14", tmp_path)
    (version,) = [p.name for p in (path / "specifications" / "core").iterdir() if p.is_dir()]
    node = f"/specifications/core/{version}/nwb.base"

    def many(doc):
        doc["shape"] = [2**24]
        doc["chunk_grid"]["configuration"]["chunk_shape"] = [1]

    edit(path, node, many)
    error = error_within(lambda: _read(path), seconds=10, memory=MEMORY)
    assert isinstance(error, CorruptStoreError), repr(error)
    assert error.path == node and "one text" in str(error)
    assert json.loads((path / node.lstrip("/") / "zarr.json").read_text())["shape"] == [2**24]
    assert not validate(path).valid
