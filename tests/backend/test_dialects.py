"""Files written by hdmf-zarr 0.13 (Zarr v2) and 0.14 (its Zarr v3 convention), read by us.

The fixtures under ``tests/fixtures/`` were written by the real writers (``generate.py``), each given
the NWB file ``full_nwbfile.make_full_nwbfile()`` builds; here that file is built again and what we
read must equal it. No fixture may execute pickled code: numcodecs' own Pickle decoder is made to
fail for the whole module, and a planted malicious pickle must be refused.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import zipfile
from pathlib import Path

import numcodecs
import numpy as np
import pytest
import zarr
from full_nwbfile import (
    EXT_NAMESPACE,
    SESSION_START,
    _assert_frames_equal,
    _tables_by_path,
    extension_classes,
    make_full_nwbfile,
    make_link_target_nwbfile,
    make_manager,
)
from hdmf.testing import TestCase
from pynwb import NWBHDF5IO, validate

from hdmf_zarr3 import NWBZarrIO, ZarrIO
from hdmf_zarr3.errors import DialectError, FormatVersionError, ModeError, UnsafeDataError

pytestmark = pytest.mark.filterwarnings("ignore:EnumData is experimental:UserWarning")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MANIFEST = json.loads((FIXTURES / "manifest.json").read_text())
FULL = [entry for entry in MANIFEST if entry["name"].startswith("full")]
EXTERNAL = [entry for entry in MANIFEST if entry["name"] == "external"]


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory) -> Path:
    """Every fixture unpacked as its writer left it: ``<tmp>/<writer>/<name>.nwb.zarr``."""
    root = tmp_path_factory.mktemp("dialect_fixtures")
    for entry in MANIFEST:
        target = root / entry["path"].removesuffix(".zip")
        with zipfile.ZipFile(FIXTURES / entry["path"]) as archive:
            archive.extractall(target)
    return root


@pytest.fixture(autouse=True)
def no_unpickling(monkeypatch):
    """numcodecs' Pickle codec (which calls pickle.loads) must never be used to read a fixture."""

    def refuse(*args, **kwargs):
        raise AssertionError("numcodecs.Pickle.decode was called")

    monkeypatch.setattr(numcodecs.Pickle, "decode", refuse)
    monkeypatch.setattr(pickle, "loads", refuse)


def _path(unpacked: Path, entry: dict) -> Path:
    return unpacked / entry["path"].removesuffix(".zip")


@pytest.fixture(scope="module")
def as_hdf5(tmp_path_factory):
    """The same file written by NWBHDF5IO (per ``without``): what users get from HDF5 today."""
    cache: dict[frozenset, Path] = {}

    def path(without: frozenset) -> Path:
        if without not in cache:
            cache[without] = tmp_path_factory.mktemp("hdf5") / "f.nwb"
            with NWBHDF5IO(str(cache[without]), mode="w", manager=make_manager()) as io:
                io.write(make_full_nwbfile(without))
        return cache[without]

    return path


@pytest.mark.parametrize("entry", FULL, ids=lambda e: e["path"])
def test_fixture_reads_back_what_its_writer_was_given(unpacked, as_hdf5, entry):
    without = frozenset(entry["without"])
    expected = make_full_nwbfile(without)
    with (
        NWBZarrIO(_path(unpacked, entry), mode="r", manager=make_manager()) as io,
        NWBHDF5IO(str(as_hdf5(without)), mode="r", manager=make_manager()) as hdf5_io,
    ):
        assert io.dialect.startswith("hdmf-zarr")
        read = io.read()
        TestCase().assertContainerEqual(read, expected, ignore_hdmf_attrs=True)
        # tables cell by cell, as NWBHDF5IO reads the same file (stored types: float32, compounds)
        read_tables, hdf5_tables = _tables_by_path(read), _tables_by_path(hdf5_io.read())
        assert set(read_tables) == set(hdf5_tables) == set(_tables_by_path(expected))
        for path in sorted(read_tables):
            _assert_frames_equal(read_tables[path].to_dataframe(), hdf5_tables[path].to_dataframe(), path)
        # what assertContainerEqual treats loosely
        lab_info = read.get_lab_meta_data("lab_info")  # uint32 attribute, stored by them as a plain number
        assert type(lab_info) is extension_classes()[1]
        assert lab_info.session_number == 7 and isinstance(lab_info.session_number, np.uint32)
        assert read.session_start_time == SESSION_START
        assert list(read.keywords) == ["zarr", "round-trip", "ecephys", "ophys"]
        assert read.institution == "Université de Test"
        behavior = read.processing["behavior"]["BehavioralTimeSeries"]
        assert (
            behavior["lick_rate"].timestamps is behavior["speed"].timestamps or behavior["lick_rate"].timestamp_link
        )  # a link, not a copy
        epochs = read.epochs.to_dataframe()
        assert [ref.timeseries.name for ref in epochs["timeseries"][0]] == ["ElectricalSeries", "lfp"]
        groups = read.electrodes["group"][:]
        assert [g.name for g in groups] == ["tetrode0"] * 4 + ["tetrode1"] * 4
        if "electrode_position" not in entry["without"]:
            assert tuple(np.asarray(read.electrode_groups["tetrode1"].position)[()]) == (1.0, 2.0, 3.0)
        # _ARRAY_DIMENSIONS are dimension labels, not attributes
        builder = io.get_builder("/general/experimenter")
        assert "_ARRAY_DIMENSIONS" not in builder.attributes
        assert builder.dimension_labels == ("num_experimenters",)


@pytest.mark.parametrize("entry", FULL, ids=lambda e: e["path"])
def test_fixture_reads_with_its_cached_namespaces(unpacked, entry):
    with NWBZarrIO(_path(unpacked, entry), mode="r") as io:
        assert EXT_NAMESPACE in io.manager.namespace_catalog.namespaces
        read = io.read()
        assert type(read.acquisition["tetrode0_series"]).__name__ == "TetrodeSeries"
        assert validate(io=io) == []


@pytest.mark.parametrize("entry", EXTERNAL, ids=lambda e: e["path"])
def test_fixture_external_links_resolve_beside_the_file(unpacked, entry):
    """Their link ``source`` is relative to the store itself (``../target.nwb.zarr``)."""
    expected = make_link_target_nwbfile().acquisition["speed"]
    with NWBZarrIO(_path(unpacked, entry), mode="r") as io:
        series = io.read().acquisition["speed_again"]
        np.testing.assert_array_equal(series.data[:], expected.data)
        np.testing.assert_array_equal(series.timestamps[:], expected.timestamps)
        assert series.data.path == "/acquisition/speed/data"
        assert os.path.basename(series.data.io.source) == "target.nwb.zarr"


def test_fixture_reads_from_its_zip(tmp_path):
    entry = next(e for e in FULL if e["writer"] == "hdmf-zarr-0.13")
    with NWBZarrIO(FIXTURES / entry["path"], mode="r", manager=make_manager()) as io:
        read = io.read()
        assert [g.name for g in read.electrodes["group"][:]][:1] == ["tetrode0"]


@pytest.mark.parametrize("entry", FULL, ids=lambda e: e["path"])
def test_foreign_files_are_read_only(unpacked, entry):
    for mode in ("r+", "a"):
        with pytest.raises(ModeError, match=r"hdmf-zarr.*convert"):
            ZarrIO(_path(unpacked, entry), mode=mode)


def test_planted_malicious_pickle_is_refused(unpacked, tmp_path):
    entry = next(e for e in FULL if e["object_codec"] == "Pickle")
    copy = tmp_path / "evil.nwb.zarr"
    shutil.copytree(_path(unpacked, entry), copy)
    marker = tmp_path / "pwned"

    class Exploit:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    payload = np.empty(8, dtype=object)
    payload[:] = [Exploit()] * 8
    chunk = copy / "general/extracellular_ephys/electrodes/group/0"
    chunk.write_bytes(numcodecs.Blosc(cname="lz4").encode(pickle.dumps(payload, protocol=5)))
    with NWBZarrIO(copy, mode="r", manager=make_manager()) as io:
        with pytest.raises(UnsafeDataError, match=r"/general/extracellular_ephys/electrodes/group.*posix.system"):
            io.read()
    assert not marker.exists()


# --- stores that are none of the dialects -------------------------------------------------------


def test_plain_zarr_v3_group_is_not_an_hdmf_file(tmp_path):
    root = zarr.open_group(tmp_path / "plain.zarr", mode="w")
    root.create_array("x", shape=(3,), dtype="int32")
    root.attrs["units"] = "m"
    with pytest.raises(DialectError, match=r"plain.zarr is a Zarr v3 store but not an HDMF/NWB file.*zarr.open_group"):
        ZarrIO(tmp_path / "plain.zarr", mode="r")
    assert not ZarrIO.can_read(tmp_path / "plain.zarr")


def test_plain_zarr_array_is_not_an_hdmf_file(tmp_path):
    zarr.create_array(tmp_path / "array.zarr", shape=(3,), dtype="int32")
    with pytest.raises(DialectError, match=r"array.zarr is a Zarr v3 array, not a group.*zarr.open_array"):
        ZarrIO(tmp_path / "array.zarr", mode="r")


def test_zarr_v2_store_that_is_not_hdmf(tmp_path):
    root = zarr.open_group(tmp_path / "v2.zarr", mode="w", zarr_format=2)
    root.create_array("x", shape=(3,), dtype="int32")
    with pytest.raises(DialectError, match=r"v2.zarr is a Zarr v2 store but not an HDMF/NWB file"):
        ZarrIO(tmp_path / "v2.zarr", mode="r")


def test_future_format_version_is_refused(tmp_path):
    from full_nwbfile import make_link_target_nwbfile as small

    path = tmp_path / "future.nwb.zarr"
    with NWBZarrIO(path, mode="w") as io:
        io.write(small())
    doc = json.loads((path / "zarr.json").read_text())
    doc["attributes"]["hdmf_zarr3_format"] = "3.0"
    doc.pop("consolidated_metadata", None)
    (path / "zarr.json").write_text(json.dumps(doc))
    with pytest.raises(FormatVersionError, match=r"format version 3.0.*upgrade hdmf_zarr3"):
        ZarrIO(path, mode="r")


# --- conversion ---------------------------------------------------------------------------------


@pytest.mark.parametrize("entry", FULL, ids=lambda e: e["path"])
def test_convert_fixture_to_our_format_and_to_hdf5(unpacked, entry, tmp_path):
    from hdmf_zarr3 import convert

    without = frozenset(entry["without"])
    native, hdf5 = tmp_path / "native.nwb.zarr", tmp_path / "f.nwb"
    convert(_path(unpacked, entry), native, progress=True, manager=make_manager())
    convert(native, hdf5)
    with NWBZarrIO(native, mode="r", manager=make_manager()) as io:
        assert io.dialect == "hdmf_zarr3"
        read = io.read()
        TestCase().assertContainerEqual(read, make_full_nwbfile(without), ignore_hdmf_attrs=True)
        # what only the source knew survives: the uint32 attribute's type, the dimension labels
        assert isinstance(read.get_lab_meta_data("lab_info").session_number, np.uint32)
        assert io.get_builder("/general/experimenter").dimension_labels == ("num_experimenters",)
        doc = json.loads((native / "general/experimenter/zarr.json").read_text())
        assert doc["dimension_names"] == ["num_experimenters"] and "_ARRAY_DIMENSIONS" not in doc["attributes"]
    with NWBHDF5IO(str(hdf5), mode="r", manager=make_manager()) as io:
        TestCase().assertContainerEqual(io.read(), make_full_nwbfile(without), ignore_hdmf_attrs=True)


@pytest.mark.parametrize("entry", EXTERNAL, ids=lambda e: e["path"])
def test_convert_keeps_external_links_as_links_and_reads_zips(unpacked, entry, tmp_path):
    from hdmf_zarr3 import convert

    out = _path(unpacked, entry).parent / f"converted-{entry['name']}.nwb.zarr"
    convert(_path(unpacked, entry), out)
    zipped = next(e for e in FULL if e["writer"] == entry["writer"])
    convert(FIXTURES / zipped["path"], tmp_path / "from-zip.nwb.zarr.zip", manager=make_manager())
    with NWBZarrIO(tmp_path / "from-zip.nwb.zarr.zip", mode="r", manager=make_manager()) as io:
        assert io.dialect == "hdmf_zarr3" and len(io.read().electrodes) == 8
    links = json.loads((out / "acquisition/speed_again/zarr.json").read_text())["attributes"]["zarr_link"]
    assert {link["source"] for link in links} == {"target.nwb.zarr"}
    with NWBZarrIO(out, mode="r") as io:
        np.testing.assert_array_equal(io.read().acquisition["speed_again"].data[:], np.linspace(0.0, 1.0, 20))


def test_zarr_v2_without_consolidated_metadata_is_listed(unpacked, tmp_path):
    entry = next(e for e in FULL if e["writer"] == "hdmf-zarr-0.13")
    copy = tmp_path / "unconsolidated.nwb.zarr"
    shutil.copytree(_path(unpacked, entry), copy)
    (copy / ".zmetadata").unlink()
    with NWBZarrIO(copy, mode="r", manager=make_manager()) as io:
        read = io.read()
        TestCase().assertContainerEqual(read, make_full_nwbfile(frozenset(entry["without"])), ignore_hdmf_attrs=True)
