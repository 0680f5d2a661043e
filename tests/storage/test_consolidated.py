"""Consolidated metadata: written last, read in one request, refreshed after changes, never stale."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import zarr
from counting_store import CountingStore
from pynwb import TimeSeries
from writing import write_nwb
from zarr.storage import LocalStore

from hdmf_zarr3 import FormatError, IncompleteFileError, NWBZarrIO, ZarrIO


def _root(path):
    return json.loads((path / "zarr.json").read_text())


def test_written_file_is_consolidated_and_zarr_python_agrees(tmp_path):
    path = tmp_path / "f.nwb.zarr"
    write_nwb(path)
    block = _root(path)["consolidated_metadata"]
    assert block["kind"] == "inline" and "acquisition/ts/data" in block["metadata"]
    assert "specifications" in block["metadata"]  # written after the spec cache
    listed = {str(p.parent.relative_to(path)) for p in path.rglob("zarr.json")} - {"."}
    assert set(block["metadata"]) == listed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr-python notes that consolidated metadata is not in the v3 spec
        group = zarr.open_consolidated(str(path), mode="r")
    assert {name for name, _ in group.members(max_depth=None)} == listed


def test_opening_reads_metadata_in_one_request(tmp_path):
    path = tmp_path / "f.nwb.zarr"
    write_nwb(path)
    store = CountingStore(LocalStore(path, read_only=True))
    with NWBZarrIO(store, mode="r") as io:
        nwb = io.read()
        assert np.array_equal(nwb.acquisition["ts"].data[:10], np.arange(10.0))
    metadata_reads = sum(n for key, n in store.gets.items() if key.endswith("zarr.json"))
    assert metadata_reads == 1 and store.lists == 0


def test_append_refreshes_it_and_a_second_handle_sees_the_change(tmp_path):
    path = tmp_path / "f.nwb.zarr"
    write_nwb(path)
    with NWBZarrIO(path, mode="a") as io:
        nwb = io.read()
        nwb.add_acquisition(TimeSeries(name="later", data=[1.0, 2.0], unit="s", rate=1.0))
        nwb.units.add_unit(spike_times=[3.0], quality="good")
        io.write(nwb)
    assert "acquisition/later/data" in _root(path)["consolidated_metadata"]["metadata"]
    with NWBZarrIO(path, mode="r") as io:
        nwb = io.read()
        assert list(nwb.acquisition["later"].data[:]) == [1.0, 2.0]
        assert len(nwb.units) == 3


def test_a_change_outside_write_drops_it_until_close(tmp_path):
    path = tmp_path / "f.nwb.zarr"
    write_nwb(path)
    io = ZarrIO(path, mode="a")
    try:
        data = io.read_builder()["acquisition/ts/data"].data
        data.append(1000.0)  # held in memory until a write or the close: the file is unchanged
        assert _root(path)["consolidated_metadata"]["metadata"]["acquisition/ts/data"]["shape"] == [1000]
        data[0] = -1.0  # stored now, with the row appended before
        assert "consolidated_metadata" not in _root(path)  # a reader now lists the store: never stale
        with pytest.raises(IncompleteFileError, match="append"):  # until the change is committed
            ZarrIO(path, mode="r")
        with ZarrIO(path, mode="r", allow_incomplete=True) as other:
            assert other.read_builder()["acquisition/ts/data"].data.shape == (1001,)
    finally:
        io.close()
    assert _root(path)["consolidated_metadata"]["metadata"]["acquisition/ts/data"]["shape"] == [1001]


def test_a_file_without_it_is_read_by_listing(tmp_path):
    path = tmp_path / "f.nwb.zarr"
    write_nwb(path)
    root = _root(path)
    del root["consolidated_metadata"]
    (path / "zarr.json").write_text(json.dumps(root))
    with NWBZarrIO(path, mode="r") as io:
        assert io.read().identifier == "TEST123"


@pytest.mark.parametrize("key", ["../outside", "a//b", "", "acquisition/./ts"])
def test_member_paths_that_escape_or_are_malformed_are_refused(tmp_path, key):
    path = tmp_path / "f.nwb.zarr"
    write_nwb(path)
    root = _root(path)
    root["consolidated_metadata"]["metadata"][key] = {"zarr_format": 3, "node_type": "group", "attributes": {}}
    (path / "zarr.json").write_text(json.dumps(root))
    with pytest.raises(FormatError, match="consolidated_metadata member"):
        ZarrIO(path, mode="r")


def test_a_root_readers_would_refuse_is_not_consolidated(tmp_path, monkeypatch):
    """A file of very many nodes (~40,000 at the real limits) would consolidate into a root over the limits of
    one document, which every reader refuses: the writer stores the root without the block, and the file is
    read node by node. The limit is lowered here so that a small file reaches it."""
    from hdmf_zarr3.format.documents import limits

    small, large = tmp_path / "small.nwb.zarr", tmp_path / "large.nwb.zarr"
    write_nwb(small)
    consolidated = (small / "zarr.json").read_bytes()
    assert "consolidated_metadata" in _root(small)
    assert limits.count_values(consolidated, 2**30) > 5000
    monkeypatch.setattr(limits, "MAX_DOCUMENT_VALUES", 1000)  # more than any one node's document holds
    write_nwb(large)
    assert "consolidated_metadata" not in _root(large)
    with NWBZarrIO(str(large), mode="r") as io:
        assert list(io.read().acquisition["ts"].data[:3]) == list(
            NWBZarrIO(str(small), "r").read().acquisition["ts"].data[:3]
        )


def _nest(depth, leaf=0):
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def test_the_block_is_walked_for_depth_once_not_once_per_document(tmp_path, monkeypatch):
    # the depth of every member document and attribute is bounded by one walk of the block (the root's own
    # check leaves the members to it), not by one walk per document, per attribute and again for the root
    from hdmf_zarr3.format.documents import limits

    path = tmp_path / "f.nwb.zarr"
    write_nwb(path)
    members = len(_root(path)["consolidated_metadata"]["metadata"])
    walks = []
    original = limits.depth_exceeds
    monkeypatch.setattr(limits, "depth_exceeds", lambda value, limit: (walks.append(limit), original(value, limit))[1])
    with NWBZarrIO(path, mode="r") as io:
        assert io.read().identifier == "TEST123"
    assert members > 30 and len(walks) <= 6, (members, walks)


@pytest.mark.parametrize(
    "where, depth, refused",
    [
        ("attribute", 32, False),
        ("attribute", 33, True),
        ("attribute", 500, True),  # deeper than the block's own bound: checked document by document
        ("document", 64, False),  # a document 64 deep through a field other than its attributes
        ("document", 65, True),
    ],
)
def test_depth_limits_hold_for_documents_read_from_the_block(tmp_path, where, depth, refused):
    path = tmp_path / "f.nwb.zarr"
    write_nwb(path)
    root = _root(path)
    member = root["consolidated_metadata"]["metadata"]["acquisition/ts"]
    if where == "attribute":
        member["attributes"]["deep"] = _nest(depth - 1, [])  # a value `depth` lists deep
    else:
        member["extension_field"] = {"must_understand": False, "deep": _nest(depth - 3, [])}
    (path / "zarr.json").write_text(json.dumps(root))
    if refused:
        with pytest.raises(FormatError, match="nests deeper than") as e:
            ZarrIO(path, mode="r")
        assert e.value.path == "/acquisition/ts"
    else:
        with ZarrIO(path, mode="r") as io:
            assert io.read_builder().groups["acquisition"].groups["ts"] is not None
