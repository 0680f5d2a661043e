"""check-dandi agrees with the real dandi-cli: ``dandi validate -f json_pp`` (dandi-cli 0.81.0, in its own venv
under ``.cache/venv-dandi``, created from the package index when missing) runs on files we write, and every
error it reports is one check-dandi reports (same rule id, same node), and no Zarr rule error of ours is
one dandi-cli does not report. When a dandi-cli release accepts string arrays, this test is what tells us.

Offline: the venv is installed with pip (package index only); ``dandi validate`` runs with every HTTP(S) proxy
pointing at a dead port and ``DANDI_NO_ET`` set (no update check); it reads nothing from the network for a
Zarr asset (the dandischema models are in the package).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from _peer_runs import offline_env
from nwb_factories import small_nwbfile
from peer_venvs import peer_venv, tool_env
from pynwb.ecephys import LFP
from pynwb.file import Subject
from pynwb.testing.mock.ecephys import mock_ElectricalSeries

from hdmf_zarr3 import NWBZarrIO, check_dandi

pytestmark = [pytest.mark.peer, pytest.mark.filterwarnings("ignore:The linked table for DynamicTableRegion")]

DANDI = "dandi==0.81.0"
VENV = Path(__file__).resolve().parents[2] / ".cache" / "venv-dandi"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
#: dandi-cli's ids for the rules of its Zarr validation (content rules are ours: dandi-cli skips them for Zarr)
ZARR_RULES = ("zarr.", "dandi_zarr.")


def _dandi() -> Path:
    return peer_venv(VENV.name, [DANDI]) / "bin" / "dandi"  # (Python >= 3.10: this test's own base Python)


def _validate(assets: list[Path]) -> tuple[int, dict[Path, list[dict]]]:
    """One ``dandi validate`` of all ``assets`` (each start of dandi-cli costs seconds): its exit status and
    each asset's results."""
    env = tool_env()
    env.update(DANDI_NO_ET="1", XDG_STATE_HOME=str(assets[0].parents[2] / "state"))
    done = subprocess.run(
        [str(_dandi()), "validate", "-f", "json_pp", *map(str, assets)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    results = json.loads(done.stdout or "[]")
    return done.returncode, {asset: [r for r in results if _within(r["path"], asset)] for asset in assets}


def _within(path: str, asset: Path) -> bool:
    return os.path.commonpath([os.path.abspath(path), str(asset)]) == str(asset)


def _node(result: dict, asset: Path) -> str:
    relative = os.path.relpath(result["path"], asset)
    return "/" if relative == "." else "/" + relative.replace(os.sep, "/")


def _subject() -> Subject:
    return Subject(subject_id="1", species="Mus musculus", sex="M", age="P30D")


def _deep_lfp(**io_kwargs):
    nwbfile = small_nwbfile()
    nwbfile.subject = _subject()
    series = mock_ElectricalSeries(name="lfp", data=np.arange(300.0).reshape(60, 5), nwbfile=nwbfile)
    nwbfile.acquisition.pop("lfp")
    series.parent = None
    nwbfile.create_processing_module("ecephys", "LFP").add(LFP(electrical_series=series))
    return nwbfile, io_kwargs


def _defaults():
    return small_nwbfile(), {}


def _hdmf_zarr_convention():
    return small_nwbfile(), {"convention": "hdmf-zarr"}


def _with_subject():
    nwbfile = small_nwbfile()
    nwbfile.subject = _subject()
    return nwbfile, {}


FILES = {
    "defaults, no Subject": _defaults,
    "hdmf-zarr convention": _hdmf_zarr_convention,
    "accepted apart from TensorStore": _with_subject,
    "deep LFP": _deep_lfp,
    "deep LFP, nested keys": lambda: _deep_lfp(chunk_key_separator="/"),
}


#: The hdmf-zarr 0.13 file: dandi-cli opens Zarr v2 with its zarr-python (3.1.5), which has no data type for
#: hdmf-zarr 0.13's pickled object arrays (references): zarr.cannot_open for the whole file, as check-dandi says.
ZARR_V2 = "hdmf-zarr 0.13, Zarr v2"


@pytest.fixture(scope="module")
def validated(tmp_path_factory) -> dict[str, tuple[Path, list[dict]]]:
    """Every file of this module, each an asset of one dandiset, validated by one run of dandi-cli; its exit
    status is an error exactly when one of them has an error."""
    dandiset = tmp_path_factory.mktemp("dandi") / "dandiset"
    dandiset.mkdir()
    (dandiset / "dandiset.yaml").write_text("identifier: DANDI:000000\n")
    assets = {name: dandiset / f"sub-{n}" / f"sub-{n}_ecephys.nwb.zarr" for n, name in enumerate([*FILES, ZARR_V2])}
    for name, make in FILES.items():
        assets[name].parent.mkdir()
        nwbfile, io_kwargs = make()
        with NWBZarrIO(assets[name], mode="w", **io_kwargs) as io:
            io.write(nwbfile)
    assets[ZARR_V2].parent.mkdir()
    with zipfile.ZipFile(FIXTURES / "hdmf-zarr-0.13" / "full.nwb.zarr.zip") as z:
        z.extractall(assets[ZARR_V2])
    status, results = _validate(list(assets.values()))
    errors = [r for found in results.values() for r in found if r["severity"] in ("ERROR", "CRITICAL")]
    assert (status != 0) == bool(errors), (status, errors)
    return {name: (asset, results[asset]) for name, asset in assets.items()}


@pytest.mark.parametrize("name", FILES)
def test_check_dandi_reports_every_error_dandi_validate_reports(validated, name):
    asset, results = validated[name]
    _agree(asset, results)
    theirs = {(r["id"], _node(r, asset)) for r in results}
    assert ("zarr.tensorstore_cannot_open", "/identifier") in theirs  # today: DANDI refuses every NWB Zarr file


def test_agreement_on_a_zarr_v2_file_of_hdmf_zarr_0_13(validated):
    """dandi-cli opens Zarr v2 with its zarr-python (3.1.5), which has no data type for hdmf-zarr 0.13's
    pickled object arrays (references): zarr.cannot_open for the whole file, as check-dandi says."""
    asset, results = validated[ZARR_V2]
    _agree(asset, results)
    assert {r["id"] for r in results if r["id"].startswith(ZARR_RULES)} == {"zarr.cannot_open"}


def _agree(asset: Path, results: list[dict]) -> None:
    theirs = {(r["id"], _node(r, asset)) for r in results if r["severity"] in ("ERROR", "CRITICAL")}
    report = check_dandi(asset)
    ours = {(f.rule, f.path) for f in report.errors}
    for rule, node in theirs:
        if node == "/":  # a rule dandi-cli reports for the whole asset (tree depth): ours names the arrays
            assert any(r == rule for r, _ in ours), (rule, sorted(ours))
        else:
            assert (rule, node) in ours, (rule, node)
    ours_zarr = {(r, n) for r, n in ours if r.startswith(ZARR_RULES)}
    assert {r for r, _ in ours_zarr} == {r for r, _ in theirs}
    assert {(r, n) for r, n in ours_zarr if r != "dandi_zarr.tree_depth_exceeded"} == {
        (r, n) for r, n in theirs if r != "dandi_zarr.tree_depth_exceeded"
    }
    # (dandi-cli's status is an error exactly when some asset has one: the fixture holds that)
    assert report.refused == (bool(theirs) or any(not r.startswith(ZARR_RULES) for r, _ in ours))


def test_the_tutorials_lossless_route_gives_a_file_dandi_validate_passes(tmp_path):
    """check-dandi's way through named only ``--validation ignore`` (issue #42, point 3): the tutorial converts an
    NWB Zarr file DANDI refuses into NWB HDF5, and the real dandi-cli validates the result with no error."""
    tutorial = Path(__file__).resolve().parents[2] / "tutorials" / "plot_dandi_upload.py"
    env = offline_env()
    env.update(DANDI_NO_ET="1", XDG_STATE_HOME=str(tmp_path / "state"), HDMF_ZARR3_DANDI=str(_dandi()))
    done = subprocess.run(
        [sys.executable, "-W", "ignore", str(tutorial)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (
        "way through: zarr.tensorstore_cannot_open: hdmf-zarr3 convert sub-mouse7_ses-1_ecephys.nwb.zarr" in done.stdout
    )
    assert "dandi validate exit status: 0" in done.stdout, done.stdout[-3000:]
    assert (tmp_path / "dandiset" / "sub-mouse7" / "sub-mouse7_ses-1_ecephys.nwb").is_file()


def test_dandi_organize_leaves_out_an_nwb_zarr_file_as_check_dandi_warns(tmp_path):
    """check-dandi's warning ``hdmf_zarr3.nwb_metadata_unread`` says dandi-cli reads no NWB metadata from a
    ``.nwb.zarr`` and ``dandi organize`` leaves it out: the real dandi-cli does."""
    nwbfile = small_nwbfile()
    nwbfile.subject = _subject()
    source = tmp_path / "src" / "x.nwb.zarr"
    with NWBZarrIO(source, mode="w") as io:
        io.write(nwbfile)
    dandiset = tmp_path / "dandiset"
    dandiset.mkdir()
    (dandiset / "dandiset.yaml").write_text("identifier: DANDI:000000\n")
    env = tool_env()
    env.update(DANDI_NO_ET="1", XDG_STATE_HOME=str(tmp_path / "state"))
    done = subprocess.run(
        [str(_dandi()), "organize", "-f", "dry", str(source.parent)],
        cwd=dandiset,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0 and "Organized 0 paths" in done.stderr + done.stdout, done.stderr[-2000:]
    assert any(f.rule == "hdmf_zarr3.nwb_metadata_unread" for f in check_dandi(source).warnings)
