"""Every ``hdmf-zarr3`` sub-command on the 27 NWB files of the pynwb sdist, and on our own output of them.

For each ``tests/back_compat/*.nwb``: ``convert`` to Zarr, ``info`` (tree and ``--json``), ``validate``,
``check-dandi`` (the default output must pass it, and every array must open in zarr-python), ``convert``
back to HDF5, and ``convert`` Zarr → Zarr with a new layout and flat chunk keys, which must still pass
DANDI's key-depth rule. A command may report problems in a file (old files break today's schema): what
it must never do is fail on its own. Schema problems ``validate`` reports must be PyNWB's own for the
original HDF5 file.
"""

from __future__ import annotations

import json

import pytest
from _pynwb_sdist import back_compat_files
from dandi_ready import NOT_STORAGE, read_every_array
from pynwb import NWBHDF5IO, validate

from hdmf_zarr3.cli import main

FILES = back_compat_files()

pytestmark = pytest.mark.filterwarnings(
    "ignore::UserWarning",
    "ignore::DeprecationWarning",
    "ignore::FutureWarning",
)


def _run(capsys, *argv: str) -> tuple[int, str]:
    status = main(["--debug", *argv])  # a crash raises with its traceback instead of one line
    return status, capsys.readouterr().out


def _schema_messages(out: str) -> set[str]:
    return {line.split("schema: ", 1)[1].strip() for line in out.splitlines() if "schema: " in line}


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_command_on_real_files(path, tmp_path, capsys):
    zarr_path, back, tuned = tmp_path / "f.nwb.zarr", tmp_path / "back.nwb", tmp_path / "tuned.nwb.zarr"
    assert _run(capsys, "convert", "--no-progress", str(path), str(zarr_path))[0] == 0

    status, out = _run(capsys, "info", str(zarr_path))
    assert status == 0 and out.splitlines()[1].startswith("/  <core:NWBFile>"), out
    found = json.loads(_run(capsys, "info", "--json", str(zarr_path))[1])
    assert any(n["path"] == "/acquisition" for n in found["nodes"])

    status, out = _run(capsys, "validate", str(zarr_path))
    with NWBHDF5IO(str(path), mode="r") as io:
        hdf5_errors = {str(e) for e in validate(io=io)}
    assert status == (1 if hdf5_errors else 0), out
    problems = [line for line in out.splitlines()[1:-1] if line.strip() and "schema: " not in line]
    assert not problems, out  # only schema problems, no storage ones
    assert _schema_messages(out) == hdf5_errors

    # DANDI refuses only what TensorStore cannot open (and what the content misses); one run of the command,
    # whose content checks (PyNWB's validator, nwbinspector) are the slow part of this test
    status, out = _run(capsys, "check-dandi", "--json", str(zarr_path))
    report = json.loads(out)
    assert status == 1 and report["refused"], out
    errors = [f for f in report["findings"] if f["level"] == "error"]
    assert any(f["rule"] == "zarr.tensorstore_cannot_open" and f["path"] == "/identifier" for f in errors), out
    assert not [f for f in errors if not f["rule"].startswith(NOT_STORAGE)], out
    read_every_array(zarr_path)  # and another reader opens every array

    assert _run(capsys, "convert", "--no-progress", str(zarr_path), str(back))[0] == 0
    with NWBHDF5IO(str(back), mode="r") as io:
        assert io.read().identifier

    assert (
        _run(
            capsys,
            "convert",
            "--no-progress",
            str(zarr_path),
            str(tuned),
            "--codec",
            "zstd:5",
            "--chunk-key-separator",
            ".",
        )[0]
        == 0
    )
    status, out = _run(capsys, "check-dandi", str(tuned))
    assert "levels deep" not in out, out
    assert _run(capsys, "validate", str(tuned))[0] == (1 if hdf5_errors else 0)
