"""Scalars and cached specifications are stored chunkless: the value is the 0-d array's ``fill_value``
(format/layout/chunkless.py), read by any Zarr v3 reader, and by ours without a request per scalar."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import zarr
from counting_store import CountingStore
from hdmf.build import DatasetBuilder, GroupBuilder
from writing import write_nwb
from zarr.storage import LocalStore

from hdmf_zarr3 import NWBZarrIO, ZarrIO
from hdmf_zarr3.format.dialects import Convention
from hdmf_zarr3.format.layout import chunkless
from hdmf_zarr3.format.vocabulary import dtypes as D
from hdmf_zarr3.format.vocabulary.names import CHUNKLESS_ATTR, DTYPE_ATTR

SCALARS = {
    "i8": (np.int8(-128), "int8"),
    "u64": (np.uint64(2**64 - 1), "uint64"),
    "i64": (np.int64(-(2**63)), "int64"),
    "f32": (np.float32(0.1), "float32"),
    "f64": (np.float64(1 / 3), "float64"),
    "negzero": (np.float64(-0.0), "float64"),
    "nan": (np.float64("nan"), "float64"),
    "inf": (np.float32("inf"), "float32"),
    "ninf": (np.float64("-inf"), "float64"),
    "yes": (np.bool_(True), "bool"),
    "text": ('héllo \U0001f600 "quoted"\n', "text"),
    "empty": ("", "text"),
}


def _root_with_scalars(count: int = 0) -> GroupBuilder:
    datasets = {name: DatasetBuilder(name, value, dtype=dtype) for name, (value, dtype) in SCALARS.items()}
    for i in range(count):
        datasets[f"n{i}"] = DatasetBuilder(f"n{i}", float(i), dtype="float64")
    return GroupBuilder("root", datasets=datasets)


def _same(a, b) -> bool:
    if isinstance(a, (float, np.floating)) and math.isnan(a):
        return isinstance(b, (float, np.floating)) and math.isnan(b)
    return a == b and (not isinstance(a, np.floating) or np.signbit(a) == np.signbit(b))


def test_scalars_have_no_chunk_and_zarr_python_reads_the_same_values(tmp_path):
    path = tmp_path / "f.zarr"
    with ZarrIO(path, mode="w") as io:
        io.write_builder(_root_with_scalars())
    assert not [p for p in path.rglob("c") if p.is_file()]  # no chunk object at all
    for name, (value, _) in SCALARS.items():
        doc = json.loads((path / name / "zarr.json").read_text())
        assert doc["attributes"][CHUNKLESS_ATTR] is True and doc["shape"] == []
        stored = zarr.open_array(str(path / name), mode="r")[()]
        assert _same(value, stored.item() if hasattr(stored, "item") else stored), name
    with ZarrIO(path, mode="r") as io:
        root = io.read_builder()
        for name, (value, _) in SCALARS.items():
            got = root.datasets[name].data
            assert _same(value, got), name
            assert CHUNKLESS_ATTR not in root.datasets[name].attributes
        assert root.datasets["f32"].data.dtype == np.float32


def test_fill_values_are_spelled_as_the_v3_spec_says():
    f32 = D.for_hdmf_dtype("float32", None)
    assert chunkless.fill_value_of(np.float32("nan"), f32) == "NaN"
    assert chunkless.fill_value_of(np.float32("-inf"), f32) == "-Infinity"
    odd_nan = np.array(0xFFC00001, dtype="u4").view("f4").reshape(())  # sign and payload: only as bytes
    assert chunkless.fill_value_of(odd_nan, f32) == "0xffc00001"
    back = chunkless.value_of_fill("0xffc00001", f32)
    assert back.view("u4") == 0xFFC00001
    assert chunkless.fill_value_of(np.float32(0.1), f32) == float(np.float32(0.1))
    assert chunkless.fill_value_of("x" * (chunkless.MAX_TEXT_BYTES + 1), D.for_hdmf_dtype("text", None)) is None


def test_a_nan_with_payload_reads_back_bit_for_bit(tmp_path):
    odd_nan = np.array(0x7FF0000000000001, dtype="u8").view("f8").reshape(())[()]
    path = tmp_path / "f.zarr"
    with ZarrIO(path, mode="w") as io:
        io.write_builder(GroupBuilder("root", datasets={"x": DatasetBuilder("x", odd_nan, dtype="float64")}))
    assert json.loads((path / "x" / "zarr.json").read_text())["fill_value"] == "0x7ff0000000000001"
    assert np.array(zarr.open_array(str(path / "x"), mode="r")[()]).view("u8") == 0x7FF0000000000001
    with ZarrIO(path, mode="r") as io:
        assert np.array(io.read_builder().datasets["x"].data).view("u8") == 0x7FF0000000000001


class RemoteLikeStore(CountingStore):
    """A CountingStore that, like an object store, offers no synchronous I/O (every read is a request
    through zarr's asynchronous path)."""

    def _supports_sync_io(self) -> bool:
        return False


def _requests(path, store_type) -> int:
    store = store_type(LocalStore(path, read_only=True))
    with ZarrIO(store, mode="r") as io:
        io.read_builder()
    return sum(store.gets.values()) + store.lists


@pytest.mark.parametrize("store_type", [CountingStore, RemoteLikeStore])
def test_reading_n_scalars_costs_no_request_per_scalar(tmp_path, store_type):
    counts = {}
    for n in (10, 200):
        path = tmp_path / f"f{n}.zarr"
        with ZarrIO(path, mode="w") as io:
            io.write_builder(_root_with_scalars(n))
        counts[n] = _requests(path, store_type)
    assert counts[10] == counts[200] == 1  # the consolidated root


def test_cached_specifications_are_chunkless_and_read_without_requests(tmp_path):
    path = tmp_path / "f.nwb.zarr"
    write_nwb(path)
    spec_docs = [p for p in (path / "specifications").rglob("zarr.json") if p.parent.parent.parent.name]
    arrays = [json.loads(p.read_text()) for p in spec_docs]
    arrays = [d for d in arrays if d["node_type"] == "array"]
    assert arrays and all(d["attributes"][CHUNKLESS_ATTR] is True for d in arrays)
    assert not [p for p in (path / "specifications").rglob("c") if p.is_file()]
    for store_type in (CountingStore, RemoteLikeStore):
        store = store_type(LocalStore(path, read_only=True))
        with NWBZarrIO(store, mode="r") as io:
            nwb = io.read()
            assert nwb.session_description
        assert not [k for k in store.keys if k.startswith("specifications/")]
        assert not [k for k in store.keys if k.endswith("/c") and k.count("/") == 1]  # no root scalar's chunk


@pytest.fixture
def old_writer(monkeypatch):
    """Write as before chunkless scalars: every scalar and spec document in a chunk, no marker."""
    monkeypatch.setattr(Convention, "scalar_document", lambda self, doc, storage, values: doc)
    monkeypatch.setattr(Convention, "spec_attributes", lambda self: {DTYPE_ATTR: D.TEXT})


def test_files_written_with_scalar_chunks_stay_readable(tmp_path, old_writer, monkeypatch):
    path = tmp_path / "old.zarr"
    with ZarrIO(path, mode="w") as io:
        io.write_builder(_root_with_scalars())
    nwb_path = tmp_path / "old.nwb.zarr"
    write_nwb(nwb_path)
    monkeypatch.undo()
    assert (path / "text" / "c").is_file() and CHUNKLESS_ATTR not in json.loads(
        (path / "text" / "zarr.json").read_text()
    )
    with ZarrIO(path, mode="r") as io:
        root = io.read_builder()
        for name, (value, _) in SCALARS.items():
            assert _same(value, root.datasets[name].data), name
    with NWBZarrIO(nwb_path, mode="r") as io:
        assert io.read().session_description


def test_a_fill_value_the_user_chose_keeps_the_chunk(tmp_path):
    from hdmf_zarr3 import ZarrDataIO

    path = tmp_path / "f.zarr"
    data = ZarrDataIO(np.array(2.5), fillvalue=-1.0)
    with ZarrIO(path, mode="w") as io:
        io.write_builder(GroupBuilder("root", datasets={"x": DatasetBuilder("x", data, dtype="float64")}))
    doc = json.loads((path / "x" / "zarr.json").read_text())
    assert doc["fill_value"] == -1.0 and CHUNKLESS_ATTR not in doc["attributes"]
    with ZarrIO(path, mode="r") as io:
        assert io.read_builder().datasets["x"].data == 2.5
