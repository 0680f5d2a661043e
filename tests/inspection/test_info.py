"""``hdmf_zarr3.info()``: the groups and arrays of a file as typed :class:`NodeInfo` (what ``hdmf-zarr3 info``
prints, and ``--json`` prints as :meth:`FileInfo.to_dict`)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from pynwb import TimeSeries
from writing import nwbfile_with, write_nwb

import hdmf_zarr3
from hdmf_zarr3 import FileInfo, IncompleteFileError, NodeInfo, ZarrDataIO, convert, info
from hdmf_zarr3.cli import main
from hdmf_zarr3.inspection import VirtualChunks

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(scope="module")
def f(tmp_path_factory) -> Path:
    """Chunked, sharded and text arrays, and a link (timestamps shared by two series)."""
    nwb = nwbfile_with(ZarrDataIO(np.arange(12.0), chunks=(4,)), name="chunked")
    nwb.add_acquisition(
        TimeSeries(
            name="sharded",
            unit="m",
            data=ZarrDataIO(np.arange(16, dtype="int16"), chunks=(2,), shards=(8,)),
            timestamps=np.arange(16.0),
        )
    )
    nwb.add_acquisition(
        TimeSeries(name="linked", unit="m", data=np.arange(16.0), timestamps=nwb.acquisition["sharded"])
    )
    return write_nwb(tmp_path_factory.mktemp("info") / "f.nwb.zarr", nwb)


@pytest.fixture(scope="module")
def described(f) -> FileInfo:
    return info(f)


def test_the_public_api_offers_info():
    assert hdmf_zarr3.info is info and {"info", "FileInfo", "NodeInfo"} <= set(hdmf_zarr3.__all__)


def test_the_file_and_its_groups(f, described):
    assert (described.path, described.convention, described.incomplete) == (str(f), "hdmf_zarr3", None)
    assert described.node("/") == NodeInfo("/", "group", "core:NWBFile")
    assert described.node("acquisition/sharded/") is described.node("/acquisition/sharded")
    assert described.node("/acquisition").neurodata_type is None
    paths = [n.path for n in described.nodes]
    assert paths == sorted(paths) and not any(p.startswith("/specifications") for p in paths)
    with pytest.raises(KeyError):
        described.node("/acquisition/nowhere")


def test_a_chunked_array(described):
    data = described.node("/acquisition/chunked/data")
    assert (data.kind, data.shape, data.dtype, data.chunks, data.shards) == ("array", (12,), "float64", (4,), None)
    assert data.codecs == ("bytes", "blosc") and data.virtual is None
    assert data.logical_bytes == 96 and data.stored_bytes is not None and data.stored_bytes > 0


def test_a_sharded_array(described):
    data = described.node("/acquisition/sharded/data")
    assert (data.shape, data.dtype, data.chunks, data.shards) == ((16,), "int16", (2,), (8,))
    assert data.logical_bytes == 32


def test_a_string_array(described):
    quality = described.node("/units/quality")
    assert (quality.neurodata_type, quality.dtype, quality.shape) == ("hdmf-common:VectorData", "text", (2,))
    assert quality.codecs[0] == "vlen-utf8"


def test_a_linked_dataset_is_described_where_it_is_stored(described):
    """A link is no node of its own (it is an attribute of its group): the target is described once."""
    assert described.node("/acquisition/sharded/timestamps").shape == (16,)
    with pytest.raises(KeyError):
        described.node("/acquisition/linked/timestamps")


def test_the_json_of_the_command_is_to_dict(f, described, capsys):
    assert main(["info", "--json", str(f)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == described.to_dict()
    assert printed["nodes"][0] == {"path": "/", "kind": "group", "type": "core:NWBFile"}
    data = next(n for n in printed["nodes"] if n["path"] == "/acquisition/sharded/data")
    assert list(data) == [
        "path",
        "kind",
        "shape",
        "dtype",
        "chunks",
        "shards",
        "codecs",
        "logical_bytes",
        "stored_bytes",
    ]


def test_the_cached_specifications_on_request(f, described):
    everything = info(f, specifications=True)
    extra = {n.path for n in everything.nodes} - {n.path for n in described.nodes}
    assert extra and all(p.startswith("/specifications") for p in extra)


def test_an_incomplete_file_is_described_only_when_asked(tmp_path):
    path = write_nwb(tmp_path / "f.nwb.zarr")
    root = json.loads((path / "zarr.json").read_text())
    root["attributes"]["hdmf_zarr3_incomplete"] = {"operation": "append", "started": "2026-01-01T00:00:00Z"}
    (path / "zarr.json").write_text(json.dumps(root))
    with pytest.raises(IncompleteFileError):
        info(path)
    described = info(path, allow_incomplete=True)
    assert described.incomplete is not None and described.incomplete.startswith("the file is incomplete: an append")
    assert described.node("/acquisition/ts/data").shape == (1000,)


def test_an_array_of_objects_of_hdmf_zarr_0_13_has_no_storage_to_describe():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        described = info(FIXTURES / "hdmf-zarr-0.13" / "full.nwb.zarr.zip")
    objects = [n for n in described.nodes if n.kind == "array" and n.chunks is None]
    assert objects and all("object" in (n.dtype or "") and n.stored_bytes is None for n in objects)
    assert "chunks" not in objects[0].to_dict() and "shape" in objects[0].to_dict()


def test_a_virtual_array_says_where_its_chunks_are_read(tmp_path):
    from virtual_files import hdf5_source

    (tmp_path / "data").mkdir()
    source = hdf5_source(tmp_path / "data" / "s.nwb")
    repository = tmp_path / "data" / "s.icechunk"
    convert(source, repository, virtual=True)
    described = info(repository)
    ephys = described.node("/acquisition/ephys/data")
    assert ephys.virtual == VirtualChunks(source.resolve().as_uri(), 6, 0)
    assert (ephys.shape, ephys.dtype, ephys.chunks) == ((60000, 16), "int16", (10000, 16))
    assert ephys.to_dict()["virtual"] == {"location": source.resolve().as_uri(), "chunks": 6, "copied": 0}
    assert described.node("/acquisition/small/data").virtual is None


@pytest.mark.parametrize(
    "record, expected",
    [
        ({"location": "file:///x.nwb", "chunks": 3, "copied": 1}, VirtualChunks("file:///x.nwb", 3, 1)),
        ({"location": 5, "chunks": "3", "copied": True}, VirtualChunks(None, None, None)),
        ({}, VirtualChunks(None, None, None)),
    ],
)
def test_a_virtual_record_of_another_type_is_none(record, expected):
    assert VirtualChunks.from_attribute(record) == expected
