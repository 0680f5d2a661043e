"""The node documents of one open file together stay within a budget (format/documents/limits.py,
``MetadataBudget``): each document is bounded, and so is their sum, kept in memory while the file is open.

A file of many documents, each within a document's limits, whose sum is beyond the budget is refused with
``MetadataLimitError`` naming the file and the limit, before memory runs away (the peak measured as
tests/format/test_json_limits.py measures it); large legitimate files take a small part of it.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from bounded_calls import error_within
from nwb_factories import small_nwbfile
from pynwb import TimeSeries

from hdmf_zarr3 import CorruptStoreError, MetadataLimitError, NWBZarrIO, ZarrIO, validate
from hdmf_zarr3.format.documents import limits

#: The worst per value (test_json_limits): ~180 bytes per one-key object (3 values); a document of them at
#: its limit keeps ~120 MiB, and the budget three of them (with what one more takes to be refused: nothing).
MEMORY = 512 * 2**20
SECONDS = 60.0
GROUP = b'{"zarr_format":3,"node_type":"group","attributes":{"a":['
ITEM = b'{"":0}'


def _worst_document() -> bytes:
    """A group document just within a document's limits, of the values that cost the most memory."""
    n = (limits.MAX_DOCUMENT_VALUES - limits.count_values(GROUP + b"0]}}", 10**9) - 1) // 3
    raw = GROUP + b",".join([ITEM] * n) + b"]}}"
    assert limits.count_values(raw, 10**9) <= limits.MAX_DOCUMENT_VALUES and len(raw) <= limits.MAX_DOCUMENT_BYTES
    return raw


def _file_of_documents(path, count: int) -> None:
    """A Zarr v3 file (not consolidated) of ``count`` groups, each holding one worst document."""
    raw = _worst_document()
    os.makedirs(path)
    (path / "zarr.json").write_bytes(b'{"zarr_format":3,"node_type":"group","attributes":{}}')
    for i in range(count):
        os.makedirs(path / f"g{i}")
        (path / f"g{i}" / "zarr.json").write_bytes(raw)


def _measure(call):
    """``call()``'s error, checked to come in bounded time and memory."""
    return error_within(call, SECONDS, MEMORY)


def test_a_file_of_many_documents_within_their_limits_is_refused_past_the_budget(tmp_path):
    path = tmp_path / "f.zarr"
    _file_of_documents(path, 10)  # ten documents at their limits: 2.3 times the budget's values

    def read():
        with ZarrIO(path, mode="r") as io:
            io.read_builder()

    error = _measure(read)
    assert isinstance(error, MetadataLimitError) and isinstance(error, CorruptStoreError), error
    assert str(path) in str(error) and f"{limits.MAX_FILE_METADATA_VALUES} JSON values" in str(error)
    assert "metadata budget" in str(error) and error.path.startswith("/g")


def test_validate_reports_a_file_past_the_budget(tmp_path):
    path = tmp_path / "f.zarr"
    _file_of_documents(path, 4)
    found = []
    assert _measure(lambda: found.extend(validate(str(path)).problems)) is None
    assert any("metadata budget" in str(p) for p in found), found


def test_the_budget_counts_what_documents_hold_together():
    budget = limits.MetadataBudget("f.zarr", max_bytes=100, max_values=10)
    budget.charge(60, 5, "/a")
    with pytest.raises(MetadataLimitError, match="f.zarr take more than 100 bytes together") as first:
        budget.charge(60, 5, "/b")
    assert first.value.path == "/b"
    with pytest.raises(MetadataLimitError) as again:  # once over it, every document after is refused
        budget.check("/c")
    assert str(again.value) == str(first.value)
    values = limits.MetadataBudget("f.zarr", max_bytes=10**6, max_values=10)
    with pytest.raises(MetadataLimitError, match="more than 10 JSON values together"):
        limits.load_json(b"[" + b"1," * 10 + b"1]", "zarr.json", "/x", budget=values)


# --- large legitimate files --------------------------------------------------------------------------
def _spent(path) -> tuple[int, int]:
    """The bytes and values of every node document of the file at ``path`` (what reading it node by node
    charges to its budget)."""
    nbytes = values = 0
    for base, _, names in os.walk(path):
        if "zarr.json" in names:
            with open(os.path.join(base, "zarr.json"), "rb") as f:
                raw = f.read()
            nbytes += len(raw)
            values += limits.count_values(raw, 10**9)
    return nbytes, values


def test_a_file_of_a_thousand_time_series_reads_well_within_the_budget(tmp_path):
    nwbfile = small_nwbfile()
    for i in range(1000):
        nwbfile.add_acquisition(
            TimeSeries(name=f"ts{i}", data=np.arange(4.0), unit="V", rate=1.0, description=f"series {i}")
        )
    path = tmp_path / "f.nwb.zarr"
    with NWBZarrIO(path, mode="w") as io:
        io.write(nwbfile)
    nbytes, values = _spent(path)
    # read node by node, a consolidated file keeps its root's copy and every node's document: twice
    assert nbytes < limits.MAX_FILE_METADATA_BYTES / 10 and values < limits.MAX_FILE_METADATA_VALUES / 10
    for mode in ("r", "r-"):  # r-: node by node, whatever the root holds
        with NWBZarrIO(path, mode=mode) as io:
            assert len(io.read().acquisition) == 1000 + len(small_nwbfile().acquisition)


def test_a_table_of_ten_thousand_units_reads_well_within_the_budget(tmp_path):
    nwbfile = small_nwbfile()
    for i in range(10_000):
        nwbfile.add_unit(spike_times=[0.1 * i, 0.1 * i + 0.05], quality=f"unit {i}")
    path = tmp_path / "f.nwb.zarr"
    with NWBZarrIO(path, mode="w") as io:
        io.write(nwbfile, consolidate_metadata=False)
    nbytes, values = _spent(path)
    assert nbytes < limits.MAX_FILE_METADATA_BYTES / 100 and values < limits.MAX_FILE_METADATA_VALUES / 100
    with NWBZarrIO(path, mode="r") as io:
        assert len(io.read().units) == 10_000 + len(small_nwbfile().units)
