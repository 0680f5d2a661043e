"""The ``hdmf-zarr3`` command: sub-commands, help, one-line errors, and the console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from nwb_factories import small_nwbfile
from pynwb import NWBHDF5IO

from hdmf_zarr3 import NWBZarrIO
from hdmf_zarr3.cli import main

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def zarr_file(tmp_path):
    path = tmp_path / "s.nwb.zarr"
    with NWBZarrIO(path, mode="w") as io:
        io.write(small_nwbfile())
    return path


def test_info_shows_the_tree_with_types_and_storage(zarr_file, capsys):
    assert main(["info", str(zarr_file)]) == 0
    out = capsys.readouterr().out
    assert "(hdmf_zarr3)" in out.splitlines()[0]
    assert "ts/  <core:TimeSeries>" in out
    data = next(line for line in out.splitlines() if line.strip().startswith("data "))
    assert "float64 (1000,)" in data and "chunks (1000,)" in data and "bytes+blosc" in data and "stored" in data
    assert "specifications" not in out


def test_info_json_is_complete(zarr_file, capsys):
    assert main(["info", "--json", "--specifications", str(zarr_file)]) == 0
    found = json.loads(capsys.readouterr().out)
    nodes = {n["path"]: n for n in found["nodes"]}
    data = nodes["/acquisition/ts/data"]
    assert data["shape"] == [1000] and data["dtype"] == "float64" and data["chunks"] == [1000]
    assert data["logical_bytes"] == 8000 and 0 < data["stored_bytes"] < 8000
    assert nodes["/acquisition/ts"]["type"] == "core:TimeSeries"
    assert any(p.startswith("/specifications/") for p in nodes)


def test_info_reads_other_writers_files(tmp_path, capsys):
    assert main(["info", str(FIXTURES / "hdmf-zarr-0.14" / "full.nwb.zarr.zip")]) == 0
    assert "hdmf-zarr 0.14" in capsys.readouterr().out.splitlines()[0]


def test_convert_hdf5_to_zarr_and_back(tmp_path, capsys):
    h5 = tmp_path / "s.nwb"
    with NWBHDF5IO(str(h5), mode="w") as io:
        io.write(small_nwbfile())
    assert main(["convert", "--no-progress", str(h5), str(tmp_path / "s.nwb.zarr")]) == 0
    assert main(["convert", "--no-progress", str(tmp_path / "s.nwb.zarr"), str(tmp_path / "back.nwb")]) == 0
    assert main(["convert", "--no-progress", "--convention", "hdmf-zarr", str(h5), str(tmp_path / "h.nwb.zarr")]) == 0
    with NWBHDF5IO(str(tmp_path / "back.nwb"), mode="r") as io:
        assert io.read().acquisition["ts"].data[:].sum() == sum(range(1000))
    with NWBZarrIO(tmp_path / "h.nwb.zarr", mode="r") as io:
        assert io.dialect == "hdmf-zarr 0.14"


def test_errors_are_one_line_without_traceback(tmp_path, capsys):
    assert main(["info", str(tmp_path / "missing.nwb.zarr")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("hdmf-zarr3 info: ") and "missing.nwb.zarr" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    with pytest.raises(Exception, match="missing.nwb.zarr"):
        main(["--debug", "info", str(tmp_path / "missing.nwb.zarr")])


def test_incomplete_files_are_reported(zarr_file, capsys):
    root = json.loads((zarr_file / "zarr.json").read_text())
    root["attributes"]["hdmf_zarr3_incomplete"] = {"operation": "append", "started": "2026-01-01T00:00:00Z"}
    (zarr_file / "zarr.json").write_text(json.dumps(root))
    assert main(["info", str(zarr_file)]) == 1
    assert "IncompleteFileError" in capsys.readouterr().err


@pytest.mark.parametrize("command", [[], ["convert"], ["info"], ["validate"], ["check-dandi"]])
def test_every_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as done:
        main([*command, "--help"])
    assert done.value.code == 0
    assert "usage: hdmf-zarr3" in capsys.readouterr().out


def test_the_console_script_is_installed(zarr_file):
    script = Path(sys.executable).parent / "hdmf-zarr3"  # installed with the package (pyproject's scripts)
    done = subprocess.run([str(script), "info", "--json", str(zarr_file)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["convention"] == "hdmf_zarr3"


def _unconsolidate(path: Path) -> None:
    root = json.loads((path / "zarr.json").read_text())
    root.pop("consolidated_metadata", None)
    (path / "zarr.json").write_text(json.dumps(root))


def test_validate_passes_a_valid_file(zarr_file, capsys):
    assert main(["validate", str(zarr_file)]) == 0
    assert capsys.readouterr().out.strip().endswith(": valid")


def test_validate_reports_schema_and_storage_problems(zarr_file, capsys):
    import shutil

    _unconsolidate(zarr_file)
    shutil.rmtree(zarr_file / "session_description")  # a required dataset
    (zarr_file / "acquisition" / "ts" / "data" / "c" / "0").write_bytes(b"not blosc")  # a damaged chunk
    assert main(["validate", str(zarr_file)]) == 1
    out = capsys.readouterr().out
    assert "schema:" in out and "session_description" in out
    assert "/acquisition/ts/data: cannot be read" in out
    assert out.strip().endswith("2 problem(s)")


def _deep_file(path: Path) -> None:
    """A 2-D array as deep as an LFP series in a processing module: its chunk keys are 8 levels deep."""
    import numpy as np
    from hdmf.build import DatasetBuilder, GroupBuilder

    from hdmf_zarr3 import ZarrIO

    data = DatasetBuilder("data", np.zeros((4, 3)))
    series = GroupBuilder("ElectricalSeries", datasets={"data": data})
    tree = GroupBuilder("root", groups={"processing": GroupBuilder("processing", groups={
        "ecephys": GroupBuilder("ecephys", groups={"LFP": GroupBuilder("LFP", groups={"ElectricalSeries": series})})})},
        datasets={"big": DatasetBuilder("big", np.zeros(3))})
    with ZarrIO(path, mode="w") as io:
        io.write_builder(tree)
    doc = json.loads((path / "big" / "zarr.json").read_text())  # declare 8 GiB chunks (nothing stored)
    doc["shape"] = [2**30]
    doc["chunk_grid"]["configuration"]["chunk_shape"] = [2**30]
    (path / "big" / "zarr.json").write_text(json.dumps(doc))
    _unconsolidate(path)


def test_check_dandi_passes_our_files(zarr_file, capsys):
    assert main(["check-dandi", str(zarr_file)]) == 0
    out = capsys.readouterr().out
    assert "ready for DANDI" in out and "error" not in out
    assert "data type 'string'" in out  # TensorStore's limits are reported as warnings


def test_check_dandi_reports_what_dandi_refuses(tmp_path, capsys):
    path = tmp_path / "deep.zarr"  # not *.nwb.zarr
    _deep_file(path)
    assert main(["check-dandi", str(path)]) == 1
    out = capsys.readouterr().out
    assert "error: deep.zarr: an NWB Zarr asset must be named *.nwb.zarr" in out
    assert "error: /processing/ecephys/LFP/ElectricalSeries/data: chunk keys are 8 levels deep" in out
    assert "error: /big: each chunk or shard holds 8.0 GiB uncompressed" in out
    assert out.strip().endswith("3 error(s): DANDI will refuse it (0 warning(s))")


def test_check_dandi_refuses_zips(tmp_path, capsys):
    path = tmp_path / "s.nwb.zarr.zip"
    with NWBZarrIO(path, mode="w") as io:
        io.write(small_nwbfile())
    assert main(["check-dandi", str(path)]) == 1
    assert "not zip files" in capsys.readouterr().out


@pytest.mark.parametrize("command", [["info"], ["info", "--json"], ["validate"], ["check-dandi"], ["--help"]])
def test_a_closed_output_ends_the_command_quietly(zarr_file, command):
    """``hdmf-zarr3 info | head``: the reader is gone before the command writes; no BrokenPipeError."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # every write to the pipe now fails with EPIPE (Python ignores SIGPIPE)
    args = command if command == ["--help"] else [*command, str(zarr_file)]
    try:
        done = subprocess.run([sys.executable, "-m", "hdmf_zarr3.cli", *args], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=120,
                              env={**os.environ, "PYTHONWARNINGS": "ignore"})
    finally:
        os.close(write_end)
    assert done.stderr == ""
    # 1 as Python's documentation recommends for EPIPE; argparse itself ignores a failed write of --help
    assert done.returncode == (0 if command == ["--help"] else 1)
