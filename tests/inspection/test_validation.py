"""``hdmf_zarr3.validate()``: every problem of a file as a typed :class:`Problem` (its node, its kind, its
line), the report ``hdmf-zarr3 validate`` prints."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
import zarr
from writing import write_nwb

import hdmf_zarr3
from hdmf_zarr3 import CorruptStoreError, NWBZarrIO, Problem, ValidationReport, validate
from hdmf_zarr3.cli import main


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    return write_nwb(tmp_path_factory.mktemp("valid") / "f.nwb.zarr")


@pytest.fixture
def f(written, tmp_path) -> Path:
    copy = tmp_path / "f.nwb.zarr"
    shutil.copytree(written, copy)
    return copy


def _validate(path: Path, **kwargs) -> ValidationReport:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return validate(path, **kwargs)


def _edit(path: Path, node: str, change) -> None:
    key = path / node.strip("/") / "zarr.json"
    doc = json.loads(key.read_text())
    change(doc)
    key.write_text(json.dumps(doc))


def _unconsolidate(path: Path) -> None:
    _edit(path, "/", lambda doc: doc.pop("consolidated_metadata", None))


def _link(path: Path, node: str, name: str, target: str) -> None:
    record = {"name": name, "source": ".", "path": target, "object_id": None, "source_object_id": None}
    _edit(path, node, lambda d: d["attributes"].__setitem__("zarr_link", [record]))


def _mark_incomplete(path: Path) -> None:
    _edit(
        path,
        "/",
        lambda d: d["attributes"].__setitem__(
            "hdmf_zarr3_incomplete", {"operation": "append", "started": "2026-01-01T00:00:00Z"}
        ),
    )


def test_the_public_api_offers_validate():
    assert hdmf_zarr3.validate is validate and {"validate", "ValidationReport", "Problem"} <= set(hdmf_zarr3.__all__)


def test_a_valid_file_has_no_problem(f):
    report = _validate(f)
    assert report.valid and report.problems == ()
    assert report.path == str(f) and str(report) == f"{f}: valid"
    assert report.to_dict() == {"path": str(f), "valid": True, "problems": []}


def test_a_damaged_chunk_is_a_dataset_problem_naming_the_array(f):
    (f / "acquisition" / "ts" / "data" / "c.0").write_bytes(b"not blosc")
    report = _validate(f)
    assert not report.valid
    (problem,) = report.problems
    assert (problem.path, problem.kind) == ("/acquisition/ts/data", "dataset")
    assert problem.message.startswith("/acquisition/ts/data: chunk c.0 cannot be decoded")
    assert str(problem) == problem.message
    assert report.to_dict()["problems"] == [
        {"path": "/acquisition/ts/data", "kind": "dataset", "message": problem.message}
    ]


def test_a_dangling_link_is_a_reading_problem_naming_the_link(f):
    _unconsolidate(f)
    _link(f, "/acquisition", "gone", "/acquisition/nowhere")
    (problem,) = _validate(f).problems
    assert (problem.path, problem.kind) == ("/acquisition/gone", "reading")
    assert problem.message.startswith("/acquisition/gone: ") and "/acquisition/nowhere" in problem.message


@pytest.mark.parametrize(
    "damage, path, message",
    [
        (
            lambda p: _link(p, "/acquisition", "loop", "/"),
            "/acquisition/loop",
            "/acquisition/loop: link to '/' leads back",
        ),
        (
            lambda p: _edit(p, "/acquisition/ts", lambda d: d["attributes"].__setitem__("neurodata_type", "Nope")),
            "/acquisition/ts",
            "/acquisition/ts: type 'Nope' is not defined in namespace 'core'",
        ),
    ],
    ids=["cycle", "unknown-type"],
)
def test_what_stops_reading_is_a_reading_problem(f, damage, path, message):
    _unconsolidate(f)
    damage(f)
    (problem,) = _validate(f).problems
    assert (problem.path, problem.kind) == (path, "reading") and problem.message.startswith(message)


def test_a_stale_consolidated_copy_is_a_storage_problem(f):
    zarr.open_array(f / "acquisition" / "ts" / "data", mode="a", use_consolidated=False).append(np.arange(5.0))
    (problem,) = _validate(f).problems
    assert (problem.path, problem.kind) == ("/acquisition/ts/data", "storage")
    assert "differs from its copy in the root's consolidated metadata" in problem.message


def test_what_the_validator_finds_is_a_schema_problem(f):
    """A required dataset missing: the schema problem, and (issue #38) HDMF's refusal to build the file's
    container, which ``read()`` raises as ours naming the node, a reading problem."""
    _unconsolidate(f)
    shutil.rmtree(f / "session_description")  # a required dataset
    unbuilt, problem = _validate(f).problems
    assert (problem.path, problem.kind) == ("/", "schema")
    assert problem.message.startswith("schema: ") and "session_description" in problem.message
    assert (unbuilt.path, unbuilt.kind) == ("/", "reading")
    assert "HDMF cannot build a NWBFile" in unbuilt.message and "session_description" in unbuilt.message
    with pytest.raises(CorruptStoreError) as raised, NWBZarrIO(f, mode="r") as io:
        io.read()
    assert str(raised.value) == unbuilt.message


def test_an_incomplete_file_is_one_storage_problem_unless_asked_to_check_what_is_there(f):
    _mark_incomplete(f)
    (f / "acquisition" / "ts" / "data" / "c.0").write_bytes(b"not blosc")  # seen only by a full check
    (problem,) = _validate(f).problems
    assert (problem.path, problem.kind) == ("/", "storage")
    assert problem.message.startswith("/: the file is incomplete: an append started at 2026-01-01T00:00:00Z")
    assert problem.message.endswith("validate it with allow_incomplete=True to check what is there")
    first, *rest = _validate(f, allow_incomplete=True).problems
    assert first.kind == "storage" and "allow_incomplete" not in first.message
    assert [(p.path, p.kind) for p in rest] == [("/acquisition/ts/data", "dataset")]


def test_the_command_prints_the_report(f, capsys):
    """``hdmf-zarr3 validate`` prints the library's problems, a line each, then the verdict."""
    _unconsolidate(f)
    shutil.rmtree(f / "session_description")
    (f / "acquisition" / "ts" / "data" / "c.0").write_bytes(b"not blosc")
    report = _validate(f)
    assert [p.kind for p in report.problems] == ["dataset", "reading", "schema"]
    assert main(["validate", str(f)]) == 1
    assert capsys.readouterr().out == str(report) + "\n"


def test_the_command_says_how_to_go_on_in_its_own_words(f, capsys):
    _mark_incomplete(f)
    assert main(["validate", str(f)]) == 1
    (line, verdict) = capsys.readouterr().out.splitlines()
    assert line.endswith("; run with --allow-incomplete to check what is there") and "allow_incomplete" not in line
    assert line == str(_validate(f).problems[0]).replace(
        "validate it with allow_incomplete=True", "run with --allow-incomplete"
    )
    assert verdict == f"{f}: 1 problem(s)"


def test_a_problem_and_a_report_are_values():
    problem = Problem("/a", "storage", "/a: gone")
    report = ValidationReport("f.zarr", (problem,))
    assert report == ValidationReport("f.zarr", (Problem("/a", "storage", "/a: gone"),))
    assert str(report) == "/a: gone\nf.zarr: 1 problem(s)"
    with pytest.raises(AttributeError):
        report.problems = ()  # type: ignore[misc]
