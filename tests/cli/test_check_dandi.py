"""``hdmf_zarr3.check_dandi`` / ``hdmf-zarr3 check-dandi`` say what DANDI refuses (dandi-cli's rule ids, the
array's path, the way through) and what DANDI requires of NWB content; the exit status is 1 exactly when
there is an error. (Agreement with the real dandi-cli: test_dandi_agreement.py.)"""

from __future__ import annotations

import datetime
import json

import numpy as np
import pytest
from dateutil.tz import tzutc
from nwb_factories import small_nwbfile
from pynwb import NWBHDF5IO, NWBFile, TimeSeries
from pynwb.file import Subject
from writing import write_nwb

from hdmf_zarr3 import NWBZarrIO, ZarrIO, check_dandi
from hdmf_zarr3.cli import main

SUBJECT = {"subject_id": "1", "species": "Mus musculus", "sex": "M", "age": "P30D"}


def _with_subject(**fields) -> NWBFile:
    nwbfile = small_nwbfile()
    nwbfile.subject = Subject(**{**SUBJECT, **fields})
    return nwbfile


def _rules(report, level="error"):
    return {(f.rule, f.path) for f in report.findings if f.level == level}


def test_our_default_file_is_refused_for_every_string_array_with_the_way_through(tmp_path, capsys):
    path = write_nwb(tmp_path / "sub-1" / "sub-1_ecephys.nwb.zarr")
    report = check_dandi(path)
    assert report.refused
    errors = _rules(report)
    for node in ("/identifier", "/session_description", "/units/quality", "/specifications/core/2.11.0/namespace"):
        assert ("zarr.tensorstore_cannot_open", node) in errors
    assert ("zarr.tensorstore_cannot_open", "/acquisition/ts/data") not in errors  # float64 opens
    refused = next(f for f in report.errors if f.path == "/identifier")
    assert "data type 'string'" in refused.message
    assert "--validation ignore" in refused.way_through and "dandi-cli/issues/1918" in refused.way_through
    # the lossless way first: the same file as NWB HDF5, which DANDI reads whole (issue #42, point 3)
    route = "hdmf-zarr3 convert sub-1_ecephys.nwb.zarr sub-1_ecephys.nwb, then dandi upload sub-1_ecephys.nwb"
    assert refused.way_through.startswith(route)
    unread = next(f for f in report.warnings if f.rule == "hdmf_zarr3.nwb_metadata_unread")
    assert "no subject, species" in unread.message and unread.way_through.startswith(route)
    assert ("NWBI.check_subject_exists", "/") in errors  # no Subject: what DANDI requires of NWB content

    assert main(["check-dandi", str(path)]) == 1
    out = capsys.readouterr().out
    assert "error: zarr.tensorstore_cannot_open: /identifier: " in out
    assert (
        f"way through: zarr.tensorstore_cannot_open: {route}" in out and "; or dandi upload --validation ignore" in out
    )
    assert out.strip().splitlines()[-1].startswith(f"sub-1_ecephys.nwb.zarr: {len(report.errors)} error(s)")


def test_json_output_holds_the_same_findings(tmp_path, capsys):
    path = write_nwb(tmp_path / "s.nwb.zarr", _with_subject())
    assert main(["check-dandi", "--json", str(path)]) == 1
    found = json.loads(capsys.readouterr().out)
    assert found["refused"] is True and found["errors"] == len(check_dandi(path).errors)
    first = found["findings"][0]
    assert set(first) == {"level", "rule", "path", "message", "way_through"}
    assert {f["rule"] for f in found["findings"] if f["level"] == "error"} == {"zarr.tensorstore_cannot_open"}


def test_a_complete_subject_leaves_only_tensorstore(tmp_path):
    report = check_dandi(write_nwb(tmp_path / "s.nwb.zarr", _with_subject()))
    assert {f.rule for f in report.errors} == {"zarr.tensorstore_cannot_open"}


@pytest.mark.parametrize(
    ("missing", "rule"),
    [
        ({"species": None}, "NWBI.check_subject_species_exists"),
        ({"sex": None}, "NWBI.check_subject_sex"),
        ({"age": None}, "NWBI.check_subject_age"),
        ({"subject_id": None}, "NWBI.check_subject_id_exists"),
    ],
)
def test_each_required_subject_field_is_reported(tmp_path, missing, rule):
    report = check_dandi(write_nwb(tmp_path / "s.nwb.zarr", _with_subject(**missing)))
    assert (rule, "/general/subject") in _rules(report)


def test_date_of_birth_stands_for_age(tmp_path):
    born = datetime.datetime(2023, 12, 1, tzinfo=tzutc())
    report = check_dandi(write_nwb(tmp_path / "s.nwb.zarr", _with_subject(age=None, date_of_birth=born)))
    assert {f.rule for f in report.errors} == {"zarr.tensorstore_cannot_open"}


def test_storage_rules_tree_depth_size_and_names(tmp_path, capsys):
    from dandi_ready import deep_lfp_tree
    from hdmf.build import DatasetBuilder

    path = tmp_path / "deep.zarr"  # a Zarr asset to DANDI, not an NWB one
    with ZarrIO(path, mode="w", chunk_key_separator="/") as io:  # (by default its keys would be flat)
        io.write_builder(deep_lfp_tree(big=DatasetBuilder("big", np.zeros(3))))
    doc = json.loads((path / "big" / "zarr.json").read_text())  # declare 8 GiB chunks (nothing stored)
    doc["shape"], doc["chunk_grid"]["configuration"]["chunk_shape"] = [2**30], [2**30]
    (path / "big" / "zarr.json").write_text(json.dumps(doc))
    with open(path / "big" / "c" / "0", "wb") as f:  # one stored object over 5 GiB (sparse: no disk used)
        f.truncate(5 * 2**30 + 1)
    report = check_dandi(path)
    errors, warnings = _rules(report), _rules(report, "warning")
    assert ("dandi_zarr.tree_depth_exceeded", "/processing/ecephys/LFP/ElectricalSeries/data") in errors
    assert ("hdmf_zarr3.object_too_large", "/big") in errors
    assert ("pynwb.GENERIC", "/") in errors  # a ZarrIO tree is no NWB file
    assert ("hdmf_zarr3.object_may_be_too_large", "/big") in warnings
    assert ("hdmf_zarr3.not_nwb_zarr", "/") in warnings
    assert ("DANDI.NO_DANDISET_FOUND", "/") in warnings
    depth = next(f for f in report.errors if f.rule == "dandi_zarr.tree_depth_exceeded")
    assert "8 levels deep" in depth.message and "--chunk-key-separator ." in depth.way_through


def test_a_zarr_json_dandi_cannot_parse(tmp_path):
    path = write_nwb(tmp_path / "s.nwb.zarr", _with_subject())
    (path / "stray").mkdir()
    (path / "stray" / "zarr.json").write_text('{"node_type": 3}')
    (path / "deep").mkdir()
    (path / "deep" / "zarr.json").write_text("[" * 100_000 + "]" * 100_000)  # too deep for Python's parser
    found = _rules(check_dandi(path))
    assert ("zarr.invalid_zarr_json", "/stray") in found and ("zarr.invalid_zarr_json", "/deep") in found


@pytest.mark.filterwarnings("ignore:The file path provided")
def test_zips_and_other_names_are_not_zarr_assets(tmp_path):
    zipped = write_nwb(tmp_path / "s.nwb.zarr.zip", _with_subject())
    assert ("hdmf_zarr3.not_a_zarr_asset", "/") in _rules(check_dandi(zipped))
    other = write_nwb(tmp_path / "s.nwb", _with_subject())  # a Zarr directory named like HDF5
    assert ("hdmf_zarr3.not_a_zarr_asset", "/") in _rules(check_dandi(other))


@pytest.mark.parametrize(
    ("relative", "warning"),
    [
        ("sub-1/sub-1_ses-2_ecephys.nwb.zarr", None),
        ("sub-1/session.nwb.zarr", "DANDI.NON_DANDI_FILENAME"),
        ("sub-1_ecephys.nwb.zarr", "DANDI.NON_DANDI_FOLDERNAME"),
        ("sub-2/sub-1_ecephys.nwb.zarr", "DANDI.METADATA_MISMATCH_SUBJECT"),
    ],
)
def test_dandi_layout_names_are_warnings(tmp_path, relative, warning):
    (tmp_path / "dandiset.yaml").write_text("identifier: DANDI:000000\n")
    report = check_dandi(write_nwb(tmp_path / relative, _with_subject()))
    layout = {f.rule for f in report.warnings if f.rule.startswith("DANDI.")}
    assert layout == ({warning} if warning else set())
    assert {f.rule for f in report.errors} == {"zarr.tensorstore_cannot_open"}  # never an error


def test_inspector_locations_are_node_paths_as_for_hdf5(tmp_path):
    """nwbinspector locates a message by its object's h5py.Dataset; check_dandi gives our node paths by
    the same rule, so each message has the location it has on the same file in HDF5."""
    from nwbinspector import Importance, inspect_nwbfile_object, load_config

    def nwbfile():
        f = small_nwbfile()
        f.add_acquisition(TimeSeries(name="flat", data=np.zeros(5), unit="", rate=10.0))  # flat data, no unit
        f.create_processing_module("behavior", "b").add(TimeSeries(name="t", data=np.ones(3), unit="s", rate=1.0))
        return f

    with NWBHDF5IO(str(tmp_path / "f.nwb"), mode="w") as io:
        io.write(nwbfile())
    zarr_path = write_nwb(tmp_path / "f.nwb.zarr", nwbfile())
    config = {"config": load_config("dandi"), "importance_threshold": Importance.BEST_PRACTICE_VIOLATION}
    with NWBHDF5IO(str(tmp_path / "f.nwb"), mode="r") as io:
        hdf5 = {(m.check_function_name, m.object_name, m.location) for m in inspect_nwbfile_object(io.read(), **config)}
    with NWBZarrIO(zarr_path, mode="r") as io:  # (nwbinspector alone, on our io: located by our adapter)
        plain = {
            (m.check_function_name, m.object_name): m.location for m in inspect_nwbfile_object(io.read(), **config)
        }
    # where HDF5 locates a message, the same path; where it does not (a Units table), the object's own path
    assert plain == {(check, name): where or plain[(check, name)] for check, name, where in hdf5}
    assert plain[("check_units_resolution_is_set", "units")] == "/units"
    ours = {
        (f.rule.removeprefix("NWBI."), f.message.split("'")[1], f.path)
        for f in check_dandi(zarr_path).findings
        if f.rule.startswith("NWBI.")
    }
    located = {entry for entry in hdf5 if entry[2] is not None}
    assert located and located <= ours
    assert ("check_units_resolution_is_set", "units", "/units") in ours


def test_a_consolidated_zarr_v2_file_with_pickled_objects_cannot_be_opened_by_dandi(tmp_path):
    """dandi-cli's zarr-python (3.1.5) opens a consolidated v2 group by parsing every array's metadata and has
    no data type for an object array whose codec is not vlen-utf8/vlen-bytes (hdmf-zarr 0.13's references)."""
    import zipfile
    from pathlib import Path

    asset = tmp_path / "old.nwb.zarr"
    with zipfile.ZipFile(Path(__file__).parents[1] / "fixtures" / "hdmf-zarr-0.13" / "full.nwb.zarr.zip") as z:
        z.extractall(asset)
    refused = next(f for f in check_dandi(asset).errors if f.rule == "zarr.cannot_open")
    assert refused.path == "/" and "object codec 'pickle'" in refused.message


def test_the_node_documents_are_fetched_a_batch_at_a_time(tmp_path, monkeypatch):
    """check-dandi parses every zarr.json: it holds one batch of them at a time, not the whole file's (a file
    of 100,000 nodes would otherwise hold all their bytes at once)."""
    from hdmf_zarr3.dandi import zarr_rules

    path = tmp_path / "f.nwb.zarr"
    nwbfile = _with_subject(subject_id="1", species="Mus musculus", sex="M", age="P90D")
    for i in range(40):
        nwbfile.add_acquisition(TimeSeries(name=f"ts{i}", data=np.arange(3.0), unit="m", rate=1.0))
    with NWBZarrIO(str(path), mode="w") as io:
        io.write(nwbfile)
    fetched: list[int] = []
    get_keys = zarr_rules.get_keys
    monkeypatch.setattr(zarr_rules, "get_keys", lambda store, keys: fetched.append(len(keys)) or get_keys(store, keys))
    check_dandi(str(path))
    assert sum(fetched) > 2 * zarr_rules.FETCH_BATCH and max(fetched) <= zarr_rules.FETCH_BATCH


def test_a_compound_array_is_refused_naming_the_zarr_python_versions_that_read_it(tmp_path):
    """TensorStore (dandi-cli's) cannot open a compound; zarr-python reads it from 3.1 on, not in 3.0 (issue #42,
    point 2: tests/integrations/test_older_zarr_python.py runs both)."""
    from full_nwbfile import make_full_nwbfile, make_manager

    path = tmp_path / "sub-1" / "sub-1_ophys.nwb.zarr"
    with NWBZarrIO(str(path), mode="w", manager=make_manager()) as io:
        io.write(make_full_nwbfile())
    report = check_dandi(path)
    compound = next(f for f in report.errors if f.path.endswith("/pixel_rois/pixel_mask"))
    assert compound.rule == "zarr.tensorstore_cannot_open" and "data type 'struct'" in compound.message
    assert "zarr-python reads this compound from 3.1 on" in compound.message and "3.0 has no" in compound.message
    text = next(f for f in report.errors if f.path == "/identifier")
    assert "compound" not in text.message  # (zarr-python 3.0 reads text arrays)
