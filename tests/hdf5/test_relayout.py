"""Conversions keep each array's layout, or change it (``--chunks/--shards/--codec``); flat chunk keys."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import numpy as np
import pytest
import zarr
from pynwb import NWBFile, TimeSeries
from writing import write_nwb

from hdmf_zarr3 import NWBZarrIO, UnsupportedDataError, ZarrDataIO, ZarrIO, convert
from hdmf_zarr3.cli import main
from hdmf_zarr3.cli.convert_command import parse_rule
from hdmf_zarr3.format.layout.relayout import Relayout, kept_layout
from hdmf_zarr3.format.layout.relayout_text import parse_codec, parse_shape
from hdmf_zarr3.format.layout.types import ZarrLayout
from hdmf_zarr3.format.vocabulary import dtypes as D

DATA = "/acquisition/ts/data"
ZSTD9 = {"name": "zstd", "configuration": {"level": 9, "checksum": False}}


def _nwbfile() -> NWBFile:
    f = NWBFile(
        session_description="d", identifier="i", session_start_time=datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)
    )
    data = np.arange(4000, dtype="int16").reshape(1000, 4)
    f.add_acquisition(
        TimeSeries(name="ts", data=ZarrDataIO(data, chunks=(7, 4), compressors=[ZSTD9]), unit="m", rate=1.0)
    )
    f.add_acquisition(TimeSeries(name="plain", data=np.arange(50.0), unit="m", rate=1.0))
    return f


@pytest.fixture
def source(tmp_path) -> Path:
    return write_nwb(tmp_path / "a.nwb.zarr", _nwbfile())


def _doc(path: Path, node: str = DATA) -> dict:
    return json.loads((path / node.strip("/") / "zarr.json").read_text())


def _chunks_and_codecs(doc: dict) -> tuple[list, list]:
    return doc["chunk_grid"]["configuration"]["chunk_shape"], doc["codecs"]


def _values(path: Path, node: str = DATA) -> np.ndarray:
    with NWBZarrIO(path, mode="r") as io:
        return io.read().acquisition[node.split("/")[2]].data[:]


# --- pure rules ------------------------------------------------------------------------------------
def test_text_forms_parse():
    assert parse_rule("/a/b=30000,64") == ("/a/b", "30000,64")
    assert parse_rule("auto") == ("*", "auto")
    assert parse_shape("30000, 64") == (30000, 64) and parse_shape("AUTO") == "auto"
    assert parse_shape("none", ("auto", "none")) is None
    assert parse_codec("zstd:5") == [{"name": "zstd", "configuration": {"level": 5, "checksum": False}}]
    assert parse_codec("none") == [] and parse_codec("auto") == "auto"
    assert parse_codec("blosc-zstd:3")[0]["configuration"]["cname"] == "zstd"
    assert parse_codec('{"name": "gzip", "configuration": {"level": 1}}') == [
        {"name": "gzip", "configuration": {"level": 1}}
    ]
    for bad in ("lz5", "zstd:high", "[1]", "{nope"):
        with pytest.raises(UnsupportedDataError):
            parse_codec(bad)
    for bad in ("0,3", "a,b", ""):
        with pytest.raises(UnsupportedDataError):
            parse_shape(bad)


def test_relayout_changes_only_what_it_names():
    storage = D.for_hdmf_dtype("int16", None)
    kept = kept_layout(_sharded_doc(), storage)
    assert kept.chunks == (100, 4) and kept.codecs[0]["configuration"]["chunk_shape"] == [10, 4]
    same = Relayout(codec={"/other": []}).apply("/x", storage, (1000, 4), kept)
    assert same is kept
    rechunked = Relayout(chunks={"*": (20, 4)}).apply("/x", storage, (1000, 4), kept)
    assert rechunked.chunks == (100, 4)  # kept shards still hold whole new chunks
    assert rechunked.codecs[0]["configuration"]["chunk_shape"] == [20, 4]
    odd = Relayout(chunks={"*": (30, 4)}).apply("/x", storage, (1000, 4), kept)
    assert odd.chunks == (30, 4)  # kept shards no longer fit: the policy (no shards for 8 kB) decides
    assert [c["name"] for c in odd.codecs] == ["bytes", "zstd"]
    unsharded = Relayout(shards={"*": None}, codec={"*": []}).apply("/x", storage, (1000, 4), kept)
    assert unsharded == ZarrLayout((10, 4), [{"name": "bytes", "configuration": {"endian": "little"}}])
    blosc = Relayout(codec={"*": parse_codec("blosc")}).apply("/x", storage, (1000, 4), kept)
    assert blosc.codecs[0]["configuration"]["codecs"][1]["configuration"]["typesize"] == 2
    with pytest.raises(UnsupportedDataError, match="whole multiples"):
        Relayout(shards={"/x": (15, 4)}).apply("/x", storage, (1000, 4), kept)
    with pytest.raises(UnsupportedDataError, match="scalar"):
        Relayout(chunks={"/x": (1,)}).apply("/x", storage, (), ZarrLayout(None, None))


def _sharded_doc() -> dict:
    inner = [{"name": "bytes", "configuration": {"endian": "little"}}, ZSTD9]
    return {
        "zarr_format": 3,
        "shape": [1000, 4],
        "chunk_grid": {"configuration": {"chunk_shape": [100, 4]}},
        "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [10, 4], "codecs": inner}}],
    }


# --- convert ---------------------------------------------------------------------------------------
def test_zarr_to_zarr_keeps_chunks_and_codecs(source, tmp_path):
    dst = tmp_path / "b.nwb.zarr"
    convert(source, dst)
    assert _chunks_and_codecs(_doc(dst)) == _chunks_and_codecs(_doc(source))
    assert _chunks_and_codecs(_doc(dst))[1][1] == ZSTD9
    np.testing.assert_array_equal(_values(dst), _values(source))


def test_convert_rechunks_reshards_and_recompresses(source, tmp_path):
    dst = tmp_path / "b.nwb.zarr"
    convert(source, dst, chunks={DATA: (100, 2)}, shards={DATA: (500, 4)}, codec="gzip:2")
    chunks, codecs = _chunks_and_codecs(_doc(dst))
    assert chunks == [500, 4] and codecs[0]["name"] == "sharding_indexed"
    assert codecs[0]["configuration"]["chunk_shape"] == [100, 2]
    assert codecs[0]["configuration"]["codecs"][1] == {"name": "gzip", "configuration": {"level": 2}}
    assert _chunks_and_codecs(_doc(dst, "/acquisition/plain/data"))[1][1]["name"] == "gzip"  # "every array"
    np.testing.assert_array_equal(_values(dst), _values(source))
    assert np.asarray(zarr.open_array(dst / DATA.strip("/"))[:]).sum() == _values(source).sum()


def test_convert_auto_repacks_into_the_default_layout(source, tmp_path):
    dst, fresh = tmp_path / "b.nwb.zarr", tmp_path / "fresh.nwb.zarr"
    convert(source, dst, chunks="auto", shards="auto", codec="auto")
    with NWBZarrIO(fresh, mode="w") as io:
        f = _nwbfile()
        f.acquisition["ts"].fields["data"] = _values(source)  # the same data, no ZarrDataIO
        io.write(f)
    for node in (DATA, "/acquisition/plain/data", "/session_description"):
        assert _chunks_and_codecs(_doc(dst, node)) == _chunks_and_codecs(_doc(fresh, node)), node
    assert _chunks_and_codecs(_doc(dst))[1][1]["configuration"]["typesize"] == 2


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"chunks": {"/acquisition/nope/data": (3,)}}, "/acquisition/nope/data: no dataset"),
        ({"chunks": {DATA: (3,)}}, "do not fit a 2-d dataset"),
        ({"codec": "lz5"}, "unknown codec"),
        ({"codec": [{"name": "transpose", "configuration": {"order": [1, 0]}}]}, "not a BytesBytesCodec"),
    ],
)
def test_convert_refuses_bad_layouts_and_writes_nothing(source, tmp_path, kwargs, message):
    dst = tmp_path / "b.nwb.zarr"
    with pytest.raises(UnsupportedDataError, match=message):
        convert(source, dst, **kwargs)
    assert not dst.exists()


def test_layout_options_need_a_zarr_destination(source, tmp_path):
    with pytest.raises(ValueError, match="Zarr destination"):
        convert(source, tmp_path / "b.nwb", codec="zstd")


def test_cli_convert_layout_options(source, tmp_path, capsys):
    dst = tmp_path / "b.nwb.zarr"
    assert (
        main(
            [
                "convert",
                "--no-progress",
                str(source),
                str(dst),
                "--chunks",
                f"{DATA}=50,4",
                "--codec",
                "zstd:7",
                "--codec",
                f"{DATA}=blosc-zstd:2",
                "--shards",
                "none",
                "--chunk-key-separator",
                ".",
            ]
        )
        == 0
    )
    chunks, codecs = _chunks_and_codecs(_doc(dst))
    assert chunks == [50, 4] and codecs[1]["configuration"]["cname"] == "zstd"
    assert _chunks_and_codecs(_doc(dst, "/acquisition/plain/data"))[1][1]["configuration"]["level"] == 7
    assert (dst / DATA.strip("/") / "c.0.0").is_file()
    np.testing.assert_array_equal(_values(dst), _values(source))
    assert main(["convert", str(source), str(tmp_path / "c.nwb.zarr"), "--shards", "big"]) == 1
    assert "expected a shape like 30000,64" in capsys.readouterr().err


# --- flat chunk keys -------------------------------------------------------------------------------
@pytest.mark.parametrize("dataio", [{}, {"chunks": (100, 2)}, {"chunks": (100, 2), "shards": (500, 4)}])
def test_dot_separator_writes_flat_keys_every_reader_follows(tmp_path, dataio):
    path = tmp_path / "f.nwb.zarr"
    values = np.arange(4000, dtype="int16").reshape(1000, 4)
    f = _nwbfile()
    f.add_acquisition(TimeSeries(name="x", data=ZarrDataIO(values, **dataio) if dataio else values, unit="m", rate=1.0))
    with NWBZarrIO(path, mode="w", chunk_key_separator=".") as io:
        io.write(f)
    keys = sorted(p.name for p in (path / "acquisition" / "x" / "data").iterdir())
    assert keys[0] == "c.0.0" and all("/" not in k and not (path / "acquisition/x/data" / k).is_dir() for k in keys)
    scalar = _doc(path, "/acquisition/x/starting_time")  # stored in its document, no chunk (storage.md §3)
    assert scalar["chunk_key_encoding"]["configuration"]["separator"] == "."
    assert not (path / "acquisition" / "x" / "starting_time" / "c").exists()
    assert _doc(path, "/acquisition/x/data")["chunk_key_encoding"]["configuration"]["separator"] == "."
    with NWBZarrIO(path, mode="r") as io:
        series = io.read().acquisition["x"]
        np.testing.assert_array_equal(series.data[:], values)
        np.testing.assert_array_equal(series.data[5:900, 1], values[5:900, 1])
    with NWBZarrIO(path, mode="r") as io:
        assert float(io.read(dask=True).acquisition["x"].data[:].sum()) == values.sum()
    np.testing.assert_array_equal(zarr.open_array(path / "acquisition/x/data")[:], values)


def test_dot_separator_passes_dandis_depth_rule(tmp_path, capsys):
    from dandi_ready import deep_lfp_tree

    tree = deep_lfp_tree()  # (not an NWB file: check-dandi's content checks refuse it either way)
    for separator in ("/", "."):
        path = tmp_path / f"deep{separator == '.'}.nwb.zarr"
        with ZarrIO(path, mode="w", chunk_key_separator=separator) as io:
            io.write_builder(tree)
        main(["check-dandi", str(path)])
        out = capsys.readouterr().out
        assert ("dandi_zarr.tree_depth_exceeded" in out) == (separator == "/"), out
        if separator == "/":
            assert "--chunk-key-separator ." in out


def test_unknown_separator_is_refused(tmp_path):
    with pytest.raises(ValueError, match="chunk_key_separator"):
        ZarrIO(tmp_path / "x.zarr", mode="w", chunk_key_separator="-")


def test_auto_chunks_of_a_large_series_are_the_default_layouts_own_when_it_is_sharded():
    """chunks="auto" on a series large enough to be sharded gives the default layout's smaller chunks
    (what a fresh write of the same shape gets), not the unsharded default."""
    from hdmf_zarr3.backend.settings.layout_choice import with_default_shards

    storage = D.for_hdmf_dtype("int16", None)
    shape = (1_398_000, 384)  # 1 GiB: sharded by default
    fresh = with_default_shards(ZarrLayout(None, None), storage, shape)
    plain = ZarrLayout((65536, 64), [{"name": "bytes", "configuration": {"endian": "little"}}])
    repacked = Relayout(chunks={"*": "auto"}, shards={"*": "auto"}).apply("/x", storage, shape, plain)
    assert repacked.chunks == fresh.chunks
    assert repacked.codecs[0]["configuration"]["chunk_shape"] == fresh.codecs[0]["configuration"]["chunk_shape"]
