"""A chunk that has gone missing is an error naming the array and the chunk, never the fill value.

Every array our writer writes whole stores every chunk (fill-valued ones too) and says so with
``hdmf_zarr3_all_chunks_stored`` (docs/storage.md §9); readers of local directories, zips and object
stores then refuse a missing chunk of such an array, and ``validate`` lists them (issue #27).
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr
from full_nwbfile import make_full_nwbfile, make_manager
from hdmf.build import DatasetBuilder, GroupBuilder
from hdmf.common import DynamicTable, VectorData, get_manager
from hdmf.data_utils import AbstractDataChunkIterator, DataChunk
from writing import StoreCase

from hdmf_zarr3 import CorruptStoreError, NWBZarrIO, ZarrDataIO, ZarrIO
from hdmf_zarr3.format.layout.stored_chunks import chunk_coords, missing_chunks, missing_is_damage
from hdmf_zarr3.format.vocabulary.names import ALL_CHUNKS_ATTR, CHUNKLESS_ATTR
from hdmf_zarr3.inspection import validate

#: Every array of the full file on each kind of store a reader opens (S3: ~50 opens over moto, about a minute).
KINDS = ("local", "zip", pytest.param("s3", marks=pytest.mark.slow))


def _case(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> StoreCase:
    if kind == "local":
        return StoreCase(kind, tmp_path / "f.nwb.zarr")
    if kind == "zip":
        return StoreCase(kind, tmp_path / "f.nwb.zarr.zip")
    from s3_server import new_bucket

    server = request.getfixturevalue("s3")
    case = StoreCase(kind, f"s3://{new_bucket(server)}/f.nwb.zarr", server["options"])
    case.client = server["client"]  # type: ignore[attr-defined]
    return case


def _root(case: StoreCase) -> dict[str, Any]:
    if case.kind == "local":
        return json.loads((Path(case.location) / "zarr.json").read_text())
    if case.kind == "zip":
        with zipfile.ZipFile(case.location) as archive:
            return json.loads(archive.read("zarr.json"))
    bucket, prefix = case.location[5:].split("/", 1)
    body = case.client().get_object(Bucket=bucket, Key=f"{prefix}/zarr.json")["Body"].read()  # type: ignore[attr-defined]
    return json.loads(body)


def _keys(case: StoreCase) -> list[str]:
    if case.kind == "local":
        root = Path(case.location)
        return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    if case.kind == "zip":
        with zipfile.ZipFile(case.location) as archive:
            return sorted(archive.namelist())
    bucket, prefix = case.location[5:].split("/", 1)
    pages = case.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix + "/")  # type: ignore[attr-defined]
    return sorted(o["Key"][len(prefix) + 1 :] for page in pages for o in page.get("Contents", []))


def _delete(case: StoreCase, keys: set[str]) -> None:
    if case.kind == "local":
        for key in keys:
            (Path(case.location) / key).unlink()
    elif case.kind == "zip":
        old = Path(case.location).with_suffix(".old")
        shutil.move(case.location, old)
        with zipfile.ZipFile(old) as src, zipfile.ZipFile(case.location, "w") as dst:
            for info in src.infolist():
                if info.filename not in keys:
                    dst.writestr(info, src.read(info))
    else:
        bucket, prefix = case.location[5:].split("/", 1)
        for key in keys:
            case.client().delete_object(Bucket=bucket, Key=f"{prefix}/{key}")  # type: ignore[attr-defined]


def _get(case: StoreCase, key: str) -> bytes:
    if case.kind == "local":
        return (Path(case.location) / key).read_bytes()
    if case.kind == "zip":
        with zipfile.ZipFile(case.location) as archive:
            return archive.read(key)
    bucket, prefix = case.location[5:].split("/", 1)
    return case.client().get_object(Bucket=bucket, Key=f"{prefix}/{key}")["Body"].read()  # type: ignore[attr-defined]


def _put(case: StoreCase, key: str, data: bytes) -> None:
    if case.kind == "local":
        (Path(case.location) / key).write_bytes(data)
    elif case.kind == "zip":
        with zipfile.ZipFile(case.location, "a") as archive:
            archive.writestr(key, data)
    else:
        bucket, prefix = case.location[5:].split("/", 1)
        case.client().put_object(Bucket=bucket, Key=f"{prefix}/{key}", Body=data)  # type: ignore[attr-defined]


def _chunks_by_array(case: StoreCase) -> dict[str, list[str]]:
    """Every stored chunk key of every array that stores every chunk, by array path."""
    documents = _root(case)["consolidated_metadata"]["metadata"]
    out: dict[str, list[str]] = {}
    for key in _keys(case):
        for path in (key.rsplit("/", n)[0] for n in range(1, key.count("/") + 1)):
            doc = documents.get(path)
            if doc is not None and doc.get("node_type") == "array":
                relative = key[len(path) + 1 :]
                if doc["attributes"].get(ALL_CHUNKS_ATTR) and chunk_coords(doc, relative) is not None:
                    out.setdefault("/" + path, []).append(key)
                break
    return out


def _dataset_builders(builder: Any, prefix: str = "") -> dict[str, Any]:
    out = {}
    for name, dataset in builder.datasets.items():
        out[f"{prefix}/{name}"] = dataset
    for name, group in builder.groups.items():
        out.update(_dataset_builders(group, f"{prefix}/{name}"))
    return out


class _Gappy(AbstractDataChunkIterator):
    """Yields the given chunks of a 100-element float array (and nothing for the rest)."""

    def __init__(self, chunks: list[DataChunk]) -> None:
        self.chunks = iter(chunks)

    def __iter__(self) -> _Gappy:
        return self

    def __next__(self) -> DataChunk:
        return next(self.chunks)

    def recommended_chunk_shape(self) -> tuple[int, ...]:
        return (10,)

    def recommended_data_shape(self) -> tuple[int, ...]:
        return (100,)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(float)

    @property
    def maxshape(self) -> tuple[int, ...]:
        return (100,)


def _delete_chunks(array: Path) -> None:
    for item in array.rglob("*"):
        if item.is_file() and item.name != "zarr.json":
            item.unlink()


def _table_file(path: Path, values: Any) -> Path:
    """A file holding a table of one column ``x`` of ``values`` (written with the defaults)."""
    column = VectorData(name="x", description="x", data=values)
    with ZarrIO(path, "w", manager=get_manager()) as io:
        io.write(DynamicTable(name="t", description="d", columns=[column]))
    return path


def _read(data: Any) -> Any:
    return np.asarray(data[()] if not getattr(data, "shape", None) else data[:])


@pytest.mark.parametrize("kind", KINDS)
def test_every_missing_chunk_is_an_error_naming_the_array_and_validate_lists_it(kind, tmp_path, request):
    case = _case(kind, tmp_path, request)
    with NWBZarrIO(case.location, mode="w", manager=make_manager(), **case.io_kwargs()) as io:
        io.write(make_full_nwbfile())
    chunks = _chunks_by_array(case)
    assert len(chunks) > 50  # every array written whole stores its chunks, zero-valued ones too
    kept = {path: _get(case, keys[-1]) for path, keys in chunks.items()}
    _delete(case, {keys[-1] for keys in chunks.values()})
    # Arrays read while the file is opened (scalars, small arrays fetched in one batch) fail the opening:
    # each is put back once named, until the file opens; every other array fails when it is read.
    named = []
    while True:
        with NWBZarrIO(case.location, mode="r", manager=make_manager(), **case.io_kwargs()) as io:
            try:
                datasets = _dataset_builders(io.read_builder())
            except CorruptStoreError as exc:
                assert exc.path in chunks and exc.path not in named, exc
                assert chunks[exc.path][-1][len(exc.path) :] in str(exc)
                named.append(exc.path)
                _put(case, chunks[exc.path][-1], kept[exc.path])
                continue
            for path in sorted(set(chunks) - set(named)):
                with pytest.raises(CorruptStoreError) as caught:
                    _read(datasets[path].data)
                assert caught.value.path == path
                assert chunks[path][-1][len(path) :] in str(caught.value)
            break
    _delete(case, {chunks[p][-1] for p in named})
    reported = str(validate(str(case.location), case.options))
    for path, keys in chunks.items():
        assert f"{path}: 1 chunk(s) missing ({keys[-1][len(path) :]})" in reported


def test_chunks_of_the_fill_value_are_stored_and_read_back(tmp_path):
    path = tmp_path / "f.zarr"
    values = np.zeros((1000, 3))
    table = DynamicTable(name="t", description="d", columns=[VectorData(name="x", description="x", data=values)])
    with ZarrIO(path, "w", manager=get_manager()) as io:
        io.write(table)
    assert (path / "x" / "zarr.json").exists()
    doc = json.loads((path / "x" / "zarr.json").read_text())
    assert doc["attributes"][ALL_CHUNKS_ATTR] is True
    stored = [k for k in _keys(StoreCase("local", path)) if k.startswith("x/c")]
    assert stored and missing_chunks(doc, [k[2:] for k in stored]) == (0, [])
    with ZarrIO(path, "r", manager=get_manager()) as io:
        np.testing.assert_array_equal(io.read()["x"].data[:], values)
    assert [p for p in validate(str(path)).problems if "missing" in p.message] == []


def test_a_selection_beside_the_missing_chunk_still_reads(tmp_path):
    path = tmp_path / "f.zarr"
    values = np.arange(1.0, 101.0)
    column = VectorData(name="x", description="x", data=ZarrDataIO(values, chunks=(10,)))
    with ZarrIO(path, "w", manager=get_manager()) as io:
        io.write(DynamicTable(name="t", description="d", columns=[column]))
    (path / "x" / "c" / "3").unlink()
    with ZarrIO(path, "r", manager=get_manager()) as io:
        x = io.read()["x"].data
        np.testing.assert_array_equal(x[:30], values[:30])
        np.testing.assert_array_equal(x[40:], values[40:])
        with pytest.raises(CorruptStoreError, match="chunk c/3 is missing"):
            x[25:45]


def test_an_iterator_that_leaves_gaps_makes_no_promise(tmp_path):
    """Chunks an iterator never gave are not stored; the array then promises nothing, and reads the fill value."""

    path = tmp_path / "f.zarr"
    iterator = _Gappy([DataChunk(np.arange(10.0), selection=np.s_[0:10]), DataChunk(np.arange(10.0), np.s_[90:100])])
    root = GroupBuilder("root", datasets={"x": DatasetBuilder("x", ZarrDataIO(iterator, chunks=(10,)))})
    with ZarrIO(path, "w", manager=get_manager()) as io:
        io.write_builder(root)
    doc = json.loads((path / "x" / "zarr.json").read_text())
    assert ALL_CHUNKS_ATTR not in doc["attributes"]
    with ZarrIO(path, "r", manager=get_manager()) as io:
        x = io.read_builder()["x"].data[:]
    assert (x[10:90] == 0).all() and (x[:10] == np.arange(10.0)).all()
    assert not [p for p in validate(str(path)).problems if "missing" in p.message]


def test_an_edit_to_the_fill_value_keeps_the_chunk(tmp_path):
    """zarr deletes a chunk set to the fill value; in an array that stores every chunk it is kept."""
    path = _table_file(tmp_path / "f.zarr", np.arange(1.0, 11.0))
    with ZarrIO(path, "r+", manager=get_manager()) as io:
        io.read()["x"].data[:] = 0.0
    with ZarrIO(path, "r", manager=get_manager()) as io:
        assert (io.read()["x"].data[:] == 0).all()
    assert [k for k in _keys(StoreCase("local", path)) if k.startswith("x/c")]


def test_zarr_python_users_get_the_same_check(tmp_path):
    """``array.read_missing_chunks = False`` makes zarr-python refuse the missing chunks of our arrays."""
    path = _table_file(tmp_path / "f.zarr", np.zeros(10))
    _delete_chunks(path / "x")
    with zarr.config.set({"array.read_missing_chunks": False}):
        with pytest.raises(zarr.errors.ChunkNotFoundError):
            zarr.open_array(str(path / "x"), mode="r")[:]


def test_arrays_without_the_promise_read_missing_chunks_as_the_fill_value(tmp_path):
    """Files written before format 1.2, and other writers' files: Zarr's rule, as before."""
    path = _table_file(tmp_path / "f.zarr", np.arange(1.0, 11.0))
    array = json.loads((path / "x" / "zarr.json").read_text())
    del array["attributes"][ALL_CHUNKS_ATTR]
    (path / "x" / "zarr.json").write_text(json.dumps(array))
    root = json.loads((path / "zarr.json").read_text())
    root["consolidated_metadata"]["metadata"]["x"] = array
    (path / "zarr.json").write_text(json.dumps(root))
    _delete_chunks(path / "x")
    with ZarrIO(path, "r", manager=get_manager()) as io:
        assert (io.read()["x"].data[:] == 0).all()


def test_the_rule_in_the_format_layer():
    doc = {
        "node_type": "array",
        "shape": [25, 4],
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [10, 4]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "attributes": {ALL_CHUNKS_ATTR: True},
    }
    assert missing_is_damage(doc, "c/2/0")
    assert not missing_is_damage(doc, "c/3/0")  # outside the grid
    assert not missing_is_damage(doc, "c/0")  # not a key of this array's dimensions
    assert not missing_is_damage(doc, "zarr.json")
    assert not missing_is_damage({**doc, "attributes": {}}, "c/0/0")
    assert not missing_is_damage({**doc, "attributes": {ALL_CHUNKS_ATTR: 1}}, "c/0/0")  # only true promises
    assert missing_chunks(doc, ["c/0/0", "c/2/0", "zarr.json", "c/9/9"]) == (1, ["c/1/0"])
    huge = {**doc, "shape": [2**40, 4], "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1, 4]}}}
    count, first = missing_chunks(huge, ["c/0/0"])  # proportional to what is stored, not to the grid
    assert count == 2**40 - 1 and first == ["c/1/0", "c/2/0", "c/3/0"]
    scalar = {**doc, "shape": [], "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": []}}}
    assert missing_is_damage(scalar, "c")
    assert CHUNKLESS_ATTR != ALL_CHUNKS_ATTR
