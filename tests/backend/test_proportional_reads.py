"""Reads cost what they return (issue #27, point 7): a strided, integer-array or boolean selection reads
only the chunks holding a selected element, on the direct reader and on zarr's path (strings), never
visiting (or sizing a mask by) the chunks in between."""

from __future__ import annotations

import json
import time
import tracemalloc

import numpy as np
import pytest
from counting_store import CountingStore
from hdmf.build import DatasetBuilder, GroupBuilder
from writing import nwbfile_with, write_builder, write_nwb
from zarr.storage import LocalStore

from hdmf_zarr3 import NWBZarrIO, ZarrDataIO, ZarrIO

HUGE = 2**39  # one-row chunks: 2**39 of them


def _file(tmp_path, values, text, **layout):
    """A file with a numeric dataset ``num`` and a string dataset ``text`` (read by zarr, not directly)."""
    root = GroupBuilder(
        "root",
        datasets={
            "num": DatasetBuilder("num", ZarrDataIO(values, **layout)),
            "text": DatasetBuilder("text", ZarrDataIO(np.array(text, dtype=object), **layout), dtype="text"),
        },
    )
    return write_builder(tmp_path / "f.zarr", root)


def _grow(path, names, length):
    """Make the arrays ``names`` ``length`` long (their rows past the stored ones read as the fill value)."""
    root = json.loads((path / "zarr.json").read_text())
    for name in names:
        doc_path = path / name / "zarr.json"
        doc = json.loads(doc_path.read_text())
        doc["shape"] = [length, *doc["shape"][1:]]
        doc_path.write_text(json.dumps(doc))
        root["consolidated_metadata"]["metadata"][name]["shape"] = doc["shape"]
    (path / "zarr.json").write_text(json.dumps(root))


@pytest.fixture
def huge(tmp_path):
    path = _file(tmp_path, np.arange(1, 5, dtype="int16"), ["a", "b", "c", "d"], chunks=(1,), shards=None)
    _grow(path, ["num", "text"], HUGE)
    store = CountingStore(LocalStore(path, read_only=True))
    with ZarrIO(store, mode="r") as io:
        yield io.read_builder(), store


def _chunk_gets(store, name):
    return sorted(k for k in store.gets if k.startswith(f"{name}/c"))


@pytest.mark.parametrize("name", ["num", "text"])
def test_strided_read_over_2_39_chunks_reads_512(huge, name):
    builder, store = huge
    data = builder.datasets[name].data
    started = time.monotonic()
    values = data[:: 2**30]
    assert time.monotonic() - started < 60
    assert values.shape == (512,)
    assert values[0] == (1 if name == "num" else "a") and not values[1]
    assert set(_chunk_gets(store, name)) == {f"{name}/c/{i * 2**30}" for i in range(512)}


@pytest.mark.parametrize("name", ["num", "text"])
def test_indices_far_apart_read_their_chunks_only(huge, name):
    builder, store = huge
    data = builder.datasets[name].data
    values = data[[3, 2**38, 0, -1]]  # unsorted, negative: in the order asked, as zarr's oindex
    expected = [4, 0, 1, 0] if name == "num" else ["d", "", "a", ""]
    assert list(values) == expected
    assert set(_chunk_gets(store, name)) == {f"{name}/c/{i}" for i in (0, 3, 2**38, HUGE - 1)}


def test_negative_step_reads_only_what_it_selects(huge):
    builder, store = huge
    assert builder.datasets["num"].data[3::-1].tolist() == [4, 3, 2, 1]
    values = builder.datasets["num"].data[HUGE - 1 :: -(2**36)]
    assert values.shape == (8,) and not values.any()
    assert len(_chunk_gets(store, "num")) == 12


def test_picking_costs_the_selection_not_the_grid():
    """Grouping a selection by chunk holds nothing the size of the chunk grid (2**39 chunks here)."""
    from hdmf_zarr3.format.data.selection import orthogonal_picks

    tracemalloc.start()
    try:
        picks = orthogonal_picks((slice(None, None, 2**30), [5, 2**38]), (HUGE, HUGE), (1, 1))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert picks is not None and picks.shape == (512, 2) and len(list(picks.cells())) == 1024
    assert peak < 2**20


def test_boolean_mask_reads_the_chunks_of_its_true_elements(tmp_path):
    n = 1 << 20
    path = _file(tmp_path, np.arange(8, dtype="int32"), list("abcdefgh"), chunks=(4,), shards=None)
    _grow(path, ["num", "text"], n)
    store = CountingStore(LocalStore(path, read_only=True))
    mask = np.zeros(n, dtype=bool)
    mask[[1, 2, 4000, n - 1]] = True
    with ZarrIO(store, mode="r") as io:
        builder = io.read_builder()
        assert builder.datasets["num"].data[mask].tolist() == [1, 2, 0, 0]
        assert builder.datasets["text"].data[mask].tolist() == ["b", "c", "", ""]
    for name in ("num", "text"):
        assert set(_chunk_gets(store, name)) == {f"{name}/c/{i}" for i in (0, 1000, n // 4 - 1)}


def _orthogonal(values, key):
    """numpy's result of an orthogonal selection (each axis indexed on its own, as zarr's oindex)."""
    key = key if isinstance(key, tuple) else (key,)
    key = key + (slice(None),) * (values.ndim - len(key))
    dropped = tuple(i for i, k in enumerate(key) if isinstance(k, int))
    for axis, part in enumerate(key):
        values = values[(slice(None),) * axis + ([part] if isinstance(part, int) else part,)]
    return values.squeeze(dropped) if dropped else values


KEYS = [
    (slice(None, None, 7), 3),
    (slice(None, None, -3),),
    ([5, 3, 99, 5, -1], slice(2, 30, 5)),
    (np.arange(100) % 3 == 0, [1, 39, 0]),
    (slice(90, 2, -17), np.array([True] * 20 + [False] * 20)),
    (7, [0, 1]),
    ([], slice(None)),
    (Ellipsis, slice(None, None, 9)),
    (np.array([4, 8]), np.array([-2, 3])),
]


@pytest.mark.parametrize("shards", [None, (16, 8)], ids=["chunks", "shards"])
@pytest.mark.parametrize("key", KEYS, ids=range(len(KEYS)))
def test_strided_and_fancy_selections_equal_numpys(tmp_path, shards, key):
    num = np.arange(4000, dtype="float64").reshape(100, 40)
    text = np.array([[f"{i}:{j}" for j in range(40)] for i in range(100)], dtype=object)
    path = _file(tmp_path, num, text, chunks=(8, 4), shards=shards)
    with ZarrIO(path, mode="r") as io:
        builder = io.read_builder()
        np.testing.assert_array_equal(builder.datasets["num"].data[key], _orthogonal(num, key))
        np.testing.assert_array_equal(builder.datasets["text"].data[key], _orthogonal(text, key))


def test_dask_arrays_of_2_39_chunks_are_made_and_sliced_in_proportion(tmp_path):
    """``read(dask=True)`` of an array of 2**39 one-row chunks: at most MAX_BLOCKS dask blocks (not one
    per chunk), and a strided selection computed reads its 512 chunks."""
    da = pytest.importorskip("dask.array")
    path = write_nwb(
        tmp_path / "f.nwb.zarr", nwbfile_with(ZarrDataIO(np.arange(1, 5, dtype="int16"), chunks=(1,), shards=None))
    )
    _grow(path, ["acquisition/x/data"], HUGE)
    store = CountingStore(LocalStore(path, read_only=True))
    with NWBZarrIO(store, mode="r") as io:
        data = io.read(dask=True).acquisition["x"].data
        assert isinstance(data, da.Array) and data.shape == (HUGE,) and data.numblocks[0] <= 2**16
        started = time.monotonic()
        values = data[:: 2**30].compute(scheduler="sync")
        assert time.monotonic() - started < 60
    assert values.shape == (512,) and values[0] == 1 and not values[1:].any()
    assert len(_chunk_gets(store, "acquisition/x/data")) == 512


def _datasets(builder):
    stack = [builder]
    while stack:
        group = stack.pop()
        stack.extend(group.groups.values())
        yield from group.datasets.values()


@pytest.mark.parametrize("writer", ["hdmf-zarr-0.13", "hdmf-zarr-0.14"])
def test_other_writers_files_read_strided_and_fancy_selections_by_their_chunks(tmp_path, writer):
    """hdmf-zarr's files (Zarr v2 for 0.13, read by zarr; 0.14's dialect): every 1-d or 2-d numeric or
    string dataset read by strided, fancy and masked selections equals numpy's selection of its whole
    content; the first and last elements read exactly the first and last chunks."""
    import zipfile
    from pathlib import Path

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / writer / "full.nwb.zarr.zip"
    with zipfile.ZipFile(fixture) as archive:
        archive.extractall(tmp_path / "f.nwb.zarr")
    store = CountingStore(LocalStore(tmp_path / "f.nwb.zarr", read_only=True))
    checked = 0
    with ZarrIO(store, mode="r") as io:
        for dataset in _datasets(io.read_builder()):
            data = dataset.data
            if not hasattr(data, "chunks") or data.ndim not in (1, 2) or data.shape[0] < 3:
                continue
            if getattr(data, "storage", None) is None or data.storage.kind not in ("numeric", "string"):
                continue
            if data.layout.objects:
                continue
            whole = np.asarray(data[...])
            mask = np.arange(data.shape[0]) % 2 == 1
            for key in [slice(None, None, 2), slice(None, None, -1), [2, 0, -1], mask]:
                np.testing.assert_array_equal(data[key], whole[key])
            store.keys.clear()
            data[[0, -1]]
            last = (data.shape[0] - 1) // data.chunks[0]
            touched = {
                k.rsplit("/", 1)[-1].split(".")[0] for k in store.keys if not k.endswith((".zarray", "zarr.json"))
            }
            assert touched <= {"0", str(last)}, (dataset.name, store.keys)
            checked += 1
    assert checked >= 3
