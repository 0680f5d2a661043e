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
from writing import write_nwb

from hdmf_zarr3 import NWBZarrIO
from hdmf_zarr3.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture
def zarr_file(tmp_path):
    return write_nwb(tmp_path / "s.nwb.zarr")


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


def _mark_incomplete(path: Path) -> None:
    root = json.loads((path / "zarr.json").read_text())
    root["attributes"]["hdmf_zarr3_incomplete"] = {"operation": "append", "started": "2026-01-01T00:00:00Z"}
    (path / "zarr.json").write_text(json.dumps(root))


def test_incomplete_files_are_reported(zarr_file, capsys):
    _mark_incomplete(zarr_file)
    assert main(["info", str(zarr_file)]) == 1
    err = capsys.readouterr().err
    assert "IncompleteFileError" in err and "run with --allow-incomplete" in err and "allow_incomplete=" not in err


def test_allow_incomplete_shows_and_checks_what_is_there(zarr_file, capsys):
    _mark_incomplete(zarr_file)
    assert main(["info", "--allow-incomplete", str(zarr_file)]) == 0
    out = capsys.readouterr().out
    assert "the file is incomplete: an append started at 2026-01-01T00:00:00Z" in out
    assert "ts/  <core:TimeSeries>" in out
    assert main(["info", "--allow-incomplete", "--json", str(zarr_file)]) == 0
    assert json.loads(capsys.readouterr().out)["incomplete"].startswith("the file is incomplete")
    assert main(["validate", str(zarr_file)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("/: the file is incomplete") and "run with --allow-incomplete" in out[0]
    assert out[-1].endswith("1 problem(s)")
    (zarr_file / "acquisition" / "ts" / "data" / "c.0").write_bytes(b"not blosc")  # only a full check sees it
    assert main(["validate", "--allow-incomplete", str(zarr_file)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("/: the file is incomplete") and "--allow-incomplete" not in out[0]
    assert any(line.startswith("/acquisition/ts/data: chunk c.0 cannot be decoded") for line in out)


@pytest.mark.parametrize("command", [[], ["convert"], ["info"], ["validate"], ["check-dandi"]])
def test_every_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as done:
        main([*command, "--help"])
    assert done.value.code == 0
    assert "usage: hdmf-zarr3" in capsys.readouterr().out


def test_the_console_script_is_installed(zarr_file):
    script = Path(sys.executable).parent / "hdmf-zarr3"  # installed with the package (pyproject's scripts)
    done = subprocess.run(
        [str(script), "info", "--json", str(zarr_file)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
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
    (zarr_file / "acquisition" / "ts" / "data" / "c.0").write_bytes(b"not blosc")  # a damaged chunk
    assert main(["validate", str(zarr_file)]) == 1
    out = capsys.readouterr().out
    assert "schema:" in out and "session_description" in out
    assert "/acquisition/ts/data: chunk c.0 cannot be decoded" in out
    assert "/: HDMF cannot build a NWBFile" in out  # what read() raises (issue #38)
    assert out.strip().endswith("3 problem(s)")


# --- validate agrees with reading: whatever read() or reading a dataset fails on (or leaves out) is reported --
def _edit(path: Path, node: str, change) -> None:
    key = path / node.strip("/") / "zarr.json"
    doc = json.loads(key.read_text())
    change(doc)
    key.write_text(json.dumps(doc))


def _link(node: str, name: str, target: str):
    record = {"name": name, "source": ".", "path": target, "object_id": None, "source_object_id": None}
    return lambda p: _edit(p, node, lambda d: d["attributes"].__setitem__("zarr_link", [record]))


def _set_attribute(node: str, key: str, value):
    return lambda p: _edit(p, node, lambda d: d["attributes"].__setitem__(key, value))


def _appended_by_zarr(p: Path) -> None:
    """A plain zarr append: the array's own zarr.json grows, the root's consolidated copy does not."""
    import numpy as np
    import zarr

    zarr.open_array(p / "acquisition" / "ts" / "data", mode="a", use_consolidated=False).append(np.arange(500.0))


def _huge(p: Path) -> None:
    def change(doc):
        doc["shape"] = [2**38]
        doc["chunk_grid"]["configuration"]["chunk_shape"] = [2**20]

    _edit(p, "/acquisition/ts/data", change)


def _directory_for_document(p: Path) -> None:
    (p / "acquisition" / "ts" / "zarr.json").unlink()
    (p / "acquisition" / "ts" / "zarr.json").mkdir()


def _element(p: Path, target: str) -> None:
    """The first element of the electrodes table's column of references to electrode groups, re-aimed."""
    import numpy as np
    import zarr

    array = zarr.open_array(p / "general" / "extracellular_ephys" / "electrodes" / "group", mode="r+")
    values = np.asarray(array[...], dtype=object)
    values[1] = json.dumps(
        {"source": target.split("::")[0], "path": target.split("::")[1], "object_id": None, "source_object_id": None}
    )
    array[...] = values


def _spec_type(p: Path, document: str, type_name: str, key: str, value) -> None:
    """Set ``key`` of the cached core specification of ``type_name`` (in ``document``) to ``value``."""
    (key_path,) = (p / "specifications" / "core").glob(f"*/{document}/zarr.json")
    doc = json.loads(key_path.read_text())
    spec = json.loads(doc["fill_value"])
    (found,) = [
        t for t in spec.get("groups", []) + spec.get("datasets", []) if t.get("neurodata_type_def") == type_name
    ]
    found[key] = value
    doc["fill_value"] = json.dumps(spec)
    key_path.write_text(json.dumps(doc))


def _core_version() -> str:
    from pynwb import get_type_map

    return str(get_type_map().namespace_catalog.get_namespace("core").version)


def _deep_groups(depth: int) -> list:
    inner: dict = {"name": "leaf", "doc": "x", "quantity": "?"}
    for i in range(depth):
        inner = {"name": f"g{i}", "doc": "x", "quantity": "?", "groups": [inner]}
    return [inner]


VALIDATE_CASES = {  # name: (damage, keep the consolidated root, line expected, read() fails with this type)
    "link-to-an-ancestor": (
        _link("/acquisition", "loop", "/"),
        False,
        "/acquisition/loop: link to '/' leads back",
        "CorruptStoreError",
    ),
    "link-to-itself": (
        _link("/acquisition/ts", "loop", "/acquisition/ts"),
        False,
        "/acquisition/ts/loop: link to '/acquisition/ts' leads back",
        "CorruptStoreError",
    ),
    "reference-to-an-ancestor": (
        _set_attribute(
            "/acquisition/ts",
            "r",
            {
                "zarr_dtype": "object",
                "value": {"source": ".", "path": "/acquisition", "object_id": None, "source_object_id": None},
            },
        ),
        False,
        "/acquisition/ts@r: reference to '/acquisition' leads back",
        "CorruptStoreError",
    ),
    "links-around-a-loop": (
        lambda p: (_link("/acquisition/ts", "table", "/units")(p), _link("/units", "series", "/acquisition/ts")(p)),
        False,
        "/acquisition/ts/table: link to '/units' leads back to where it is (/acquisition/ts -> "
        "/units -> /acquisition/ts)",
        "CorruptStoreError",
    ),
    "unknown-neurodata-type": (
        _set_attribute("/acquisition/ts", "neurodata_type", "NoSuchType"),
        False,
        "/acquisition/ts: type 'NoSuchType' is not defined in namespace 'core'",
        "UnknownTypeError",
    ),
    "unknown-namespace": (
        _set_attribute("/acquisition/ts", "namespace", "ndx-nowhere"),
        False,
        "/acquisition/ts: namespace 'ndx-nowhere' (of type 'TimeSeries') is not loaded",
        "UnknownTypeError",
    ),
    "stale-consolidated-copy": (
        _appended_by_zarr,
        True,
        "/acquisition/ts/data: zarr.json differs from its copy in "
        "the root's consolidated metadata (shape [1500] in zarr.json, [1000] in the copy)",
        None,
    ),
    "document-only-in-the-copy": (
        lambda p: (p / "acquisition" / "ts" / "zarr.json").unlink(),
        True,
        "/acquisition/ts: no zarr.json (missing, or not a regular file); only the root's "
        "consolidated metadata describes this node",
        None,
    ),
    "group-document-missing": (
        lambda p: (p / "acquisition" / "ts" / "zarr.json").unlink(),
        False,
        "/acquisition/ts: no zarr.json (missing, or not a regular file), yet nodes below it "
        "exist: /acquisition/ts/data, /acquisition/ts/starting_time",
        "CorruptStoreError",
    ),
    "group-document-a-directory": (
        _directory_for_document,
        False,
        "/acquisition/ts: zarr.json is a directory",
        "CorruptStoreError",
    ),
    "array-document-missing": (
        lambda p: (p / "units" / "quality" / "zarr.json").unlink(),
        False,
        "/units/quality: 1 stored object(s) but no zarr.json",
        None,
    ),
    "huge-array-in-a-small-file": (
        _huge,
        False,
        "/acquisition/ts/data: declares 2.0 TiB (shape [274877906944]) but "
        "the file holds 1 of its 262144 chunk objects",
        None,
    ),
    "reference-element-to-nothing": (
        lambda p: _element(p, ".::/general/nope"),
        False,
        "/general/extracellular_ephys/electrodes/group: reference target '/general/nope' does not exist",
        None,
    ),
    "reference-element-outside": (
        lambda p: _element(p, "/etc::/passwd"),
        False,
        "/general/extracellular_ephys/electrodes/group: source '/etc' resolves to /etc, "
        "outside the allowed directories",
        None,
    ),
    **{  # a .specloc naming data would hide it: the root names what it holds instead (issue #27)
        f"specloc-{name}": (
            _set_attribute("/", ".specloc", value),
            False,
            f"/: .specloc {message}",
            "CorruptStoreError",
        )
        for name, value, message in [
            ("acquisition", "acquisition", "'acquisition' names a group that holds more than specifications"),
            ("a-number", 5, "must be the path of a group below the root, got 5"),
            ("empty", "", "must be the path of a group below the root, got ''"),
            ("root", "/", "must be the path of a group below the root, got '/'"),
            ("parent", "../specifications", "must be the path of a group below the root"),
            ("elsewhere", "/etc", "'/etc' names no group of this file"),
            ("a-namespace", "specifications/core", "'specifications/core' names a group that holds more"),
        ]
    },
    "spec-type-inherits-from-itself": (
        lambda p: _spec_type(p, "nwb.base", "TimeSeries", "neurodata_type_inc", "TimeSeries"),
        False,
        "/specifications: cached specification of namespace 'core', type 'TimeSeries': inherits from itself",
        "SpecificationError",
    ),
    "spec-groups-400-deep": (
        lambda p: _spec_type(p, "nwb.base", "TimeSeries", "groups", _deep_groups(400)),
        False,
        f"/specifications/core/{_core_version()}: cached specification of namespace 'core', document 'nwb.base' > "
        "group 'TimeSeries'",
        "SpecificationError",
    ),
    "document-over-the-value-limit": (
        _set_attribute("/acquisition/ts", "many", [[]] * (2**21)),
        False,
        "/acquisition/ts: zarr.json holds more than 2097152 JSON values",
        "MetadataLimitError",  # (a CorruptStoreError)
    ),
}


@pytest.fixture
def ephys_file(tmp_path):
    nwbfile = small_nwbfile()
    device = nwbfile.create_device("probe")
    group = nwbfile.create_electrode_group("shank", description="a shank", location="CA1", device=device)
    for _ in range(3):
        nwbfile.add_electrode(group=group, location="CA1")
    return write_nwb(tmp_path / "s.nwb.zarr", nwbfile)


@pytest.mark.parametrize("damage,consolidated,line,read_error", VALIDATE_CASES.values(), ids=VALIDATE_CASES.keys())
def test_validate_reports_what_reading_fails_on_or_leaves_out(
    ephys_file, capsys, damage, consolidated, line, read_error
):
    import warnings

    from hdmf_zarr3 import HdmfZarrError

    if not consolidated:
        _unconsolidate(ephys_file)
    damage(ephys_file)
    assert main(["validate", str(ephys_file)]) == 1
    out = capsys.readouterr().out
    assert any(found.startswith(line) for found in out.splitlines()), out
    if read_error is not None:  # read() fails with the typed error naming the same node (never RecursionError)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(HdmfZarrError) as raised, NWBZarrIO(ephys_file, mode="r") as io:
                io.read()
        assert type(raised.value).__name__ == read_error and line.startswith(raised.value.path + ":")


def test_validate_passes_our_files_with_references_and_other_writers_files(ephys_file, capsys):
    for path in (
        ephys_file,
        FIXTURES / "hdmf-zarr-0.14" / "full.nwb.zarr.zip",
        FIXTURES / "hdmf-zarr-0.13" / "full.nwb.zarr.zip",
    ):
        assert main(["validate", str(path)]) == 0, capsys.readouterr().out


def test_a_stale_consolidated_copy_is_what_reading_uses_until_consolidated_again(zarr_file, capsys):
    """Reading trusts the root's consolidated copy (one request opens the file); validate finds it stale, and
    ``zarr.consolidate_metadata`` (zarr-python's spelling of the same documents) makes it current."""
    import zarr

    _appended_by_zarr(zarr_file)
    with NWBZarrIO(zarr_file, mode="r") as io:
        assert io.read().acquisition["ts"].data.shape == (1000,)
    assert main(["validate", str(zarr_file)]) == 1
    assert "shape [1500] in zarr.json, [1000] in the copy" in capsys.readouterr().out
    zarr.consolidate_metadata(str(zarr_file))
    assert main(["validate", str(zarr_file)]) == 0, capsys.readouterr().out
    with NWBZarrIO(zarr_file, mode="r") as io:
        assert io.read().acquisition["ts"].data[:].sum() == sum(range(1000)) + sum(range(500))


@pytest.mark.parametrize("command", [["info"], ["info", "--json"], ["validate"], ["check-dandi"], ["--help"]])
def test_a_closed_output_ends_the_command_quietly(zarr_file, command):
    """``hdmf-zarr3 info | head``: the reader is gone before the command writes; no BrokenPipeError."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # every write to the pipe now fails with EPIPE (Python ignores SIGPIPE)
    args = command if command == ["--help"] else [*command, str(zarr_file)]
    try:
        done = subprocess.run(
            [sys.executable, "-m", "hdmf_zarr3.cli", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONWARNINGS": "ignore"},
        )
    finally:
        os.close(write_end)
    assert done.stderr == ""
    # 1 as Python's documentation recommends for EPIPE; argparse itself ignores a failed write of --help
    assert done.returncode == (0 if command == ["--help"] else 1)


def test_version_prints_ours_and_the_libraries_versions():
    """``hdmf-zarr3 --version`` was a usage error (issue #42, point 5)."""
    from importlib import metadata

    import hdmf_zarr3

    done = subprocess.run([sys.executable, "-m", "hdmf_zarr3.cli", "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    line = done.stdout.strip()
    assert line.startswith(f"hdmf-zarr3 {hdmf_zarr3.__version__} (") and "\n" not in line
    for name in ("zarr", "hdmf", "pynwb", "numcodecs", "numpy", "h5py"):
        assert f"{name} {metadata.version(name)}" in line
    assert f"Python {sys.version.split()[0]})" in line
