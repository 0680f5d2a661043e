"""A fuzzer of what the CLI prints and what the viewer answers: files whose node names and attribute values are
hostile strings (control characters, bidirectional overrides, lone surrogates, quotes, long texts).

Every line ``info`` and ``validate`` print is free of raw control and bidi characters and ``validate``'s last
line is its true verdict; every answer of the viewer's API is JSON (or a PNG) and every error one of ours
(hypothesis, derandomized: the same examples each run; ``HDMF_ZARR3_OUTPUT_FUZZ=N`` runs N random ones).
"""

from __future__ import annotations

import json
import os
import shutil
import warnings
from pathlib import Path

import pytest
from hostile_corpus import bounded, deconsolidate, edit, write_hostile_text_file
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from viewer_files import declare, write_viewer_file

import hdmf_zarr3.errors
from hdmf_zarr3.cli import main
from hdmf_zarr3.format.data import printable
from hdmf_zarr3.format.data.terminal_text import UNSAFE

#: Characters a hostile string is made of: every kind a terminal obeys or reorders, and ordinary ones.
HOSTILE = "\x1b[]2K;\r\n\t\x07\x00\x7f\x9b\x85\u202e\u202d\u2066\u2069\u200f\u061c\u2028\ufeff\"'<>&%\\ aZé日"
#: The names of our errors (an answer's ``error`` must be one of them, or the request's own refusal).
OUR_ERRORS = {name for name, value in vars(hdmf_zarr3.errors).items() if isinstance(value, type)}

TEXTS = st.text(alphabet=st.sampled_from(HOSTILE + "\udc80"), min_size=1, max_size=40)
#: A node name: no '/', '\\' or NUL (refused when written, so never in a file of ours), no surrogate (no file
#: system spells one), not "." or "..".
NAMES = st.text(alphabet=st.sampled_from(HOSTILE.replace("\\", "").replace("\x00", "")), min_size=1, max_size=20)


def assert_clean(text: str) -> None:
    for line in text.split("\n"):
        assert not UNSAFE.search(line), f"raw control or bidi character in {line!r}"


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return write_hostile_text_file(tmp_path_factory.mktemp("fuzz-base") / "f.nwb.zarr", text="x")


def hostile_copy(base: Path, top: Path, name: str, texts: list[str], unknown_type: bool) -> tuple[Path, str]:
    """A copy of ``base`` whose TimeSeries is renamed ``name`` and whose description, unit and comments (and the
    units table's description) are ``texts``; its neurodata_type one of them when ``unknown_type``."""
    path = top / "f.nwb.zarr"
    shutil.copytree(base, path)
    deconsolidate(path)
    (path / "acquisition" / "tsx").rename(path / "acquisition" / name)
    node = f"/acquisition/{name}"

    def change(doc):
        doc["attributes"].update(description=texts[0], unit=texts[1], comments=texts[2])
        if unknown_type:
            doc["attributes"]["neurodata_type"] = texts[0]

    edit(path, node, change)
    edit(path, "/units", lambda doc: doc["attributes"].update(description=texts[1]))
    return path, node


def check_cli(path: Path, capsys) -> None:
    for command in ("info", "validate"):
        status = main([command, str(path)])
        out, err = capsys.readouterr()
        assert_clean(out)
        assert_clean(err)
        if command == "validate":
            verdict = out.splitlines()[-1]
            prefix = f"{printable(path)}: "
            assert verdict == prefix + "valid" if status == 0 else verdict.startswith(prefix) and "problem" in verdict


def check_viewer(path: Path, node: str, capsys) -> None:
    from hdmf_zarr3.view.server import ViewServer
    from hdmf_zarr3.view.viewed_file import ViewedFile

    try:
        opened = ViewedFile(str(path))
    except hdmf_zarr3.errors.HdmfZarrError:  # a file read() refuses: our typed error (validate says why)
        return
    viewer = ViewServer(opened)
    try:
        status, _, body = viewer.answer("/api/tree", {})
        paths = _paths(json.loads(body)["root"]) if status == 200 else []
        requests = [("/api/node", p) for p in paths] + [
            ("/api/series", node),
            ("/api/image", node),
            ("/api/table", "/units"),
            ("/api/table", "/intervals/trials"),
            ("/api/table", node),
        ]
        for route, where in requests:
            _assert_answered(route, where, *viewer.answer(route, {"path": where}))
    finally:
        viewer.close()
    assert_clean(capsys.readouterr().err)  # the server's log of unforeseen failures


def _paths(entry: dict) -> list[str]:
    return [entry["path"], *(p for child in entry.get("children", []) for p in _paths(child))]


@settings(
    max_examples=int(os.environ.get("HDMF_ZARR3_OUTPUT_FUZZ", "8")),
    deadline=None,
    derandomize=os.environ.get("HDMF_ZARR3_OUTPUT_FUZZ") is None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # a failing example as found: shrinking files is slow
)
@given(
    name=NAMES.filter(lambda n: n not in (".", "..") and n.strip() == n),
    texts=st.lists(TEXTS, min_size=3, max_size=3),
    unknown_type=st.booleans(),
)
def test_hostile_names_and_attributes_are_printed_escaped_and_answered_as_json(
    base, tmp_path_factory, capsys, name, texts, unknown_type
):
    path, node = hostile_copy(base, tmp_path_factory.mktemp("fuzz"), name, texts, unknown_type)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_cli(path, capsys)
        check_viewer(path, node, capsys)


#: Arrays of the viewer's test file a hostile copy makes huge, and the node whose views show each. (A
#: DynamicTableRegion's data too, such as /units/electrodes: HDMF checks its rows when the file is read, before any
#: view, which read it whole, 64 GiB for 2**33 rows, until the reader's region shim checked it in blocks.)
ARRAYS = {
    "/acquisition/ElectricalSeries/electrodes": "/acquisition/ElectricalSeries",
    "/units/electrodes": "/units",
    "/acquisition/ElectricalSeries/data": "/acquisition/ElectricalSeries",
    "/acquisition/speed/timestamps": "/acquisition/speed",
    "/acquisition/speed/data": "/acquisition/speed",
    "/acquisition/movie/data": "/acquisition/movie",
    "/acquisition/two_photon/data": "/acquisition/two_photon",
    "/processing/ophys/summary_images/mean": "/processing/ophys/summary_images",
    "/processing/ophys/ImageSegmentation/cells/image_mask": "/processing/ophys/ImageSegmentation/cells",
    "/units/spike_times": "/units",
    "/units/spike_times_index": "/units",
    "/units/quality": "/units",
    "/intervals/trials/start_time": "/intervals/trials",
    "/intervals/trials/id": "/intervals/trials",
    "/general/extracellular_ephys/electrodes/x": "/general/extracellular_ephys/electrodes",
}
VIEW_ROUTES = ("/api/series", "/api/table", "/api/image", "/api/frame")


def _row_aligned(path: Path, array: str) -> list[str]:
    """``array``, and when it is a table's column of one value per row, every such column of its table."""
    folder = (path / array.strip("/")).parent
    if not (folder / "id").is_dir():
        return [array]
    names = {child.name for child in folder.iterdir() if '"node_type":"array"' in _document_text(child)}
    aligned = sorted(n for n in names if f"{n}_index" not in names)  # a ragged column's values are not per row
    name = array.rsplit("/", 1)[1]
    return [f"{array.rsplit('/', 1)[0]}/{n}" for n in aligned] if name in aligned else [array]


def _document_text(folder: Path) -> str:
    return (folder / "zarr.json").read_text().replace(" ", "") if (folder / "zarr.json").is_file() else ""


@pytest.fixture(scope="module")
def viewer_base(tmp_path_factory) -> Path:
    return write_viewer_file(tmp_path_factory.mktemp("fuzz-viewer") / "v.nwb.zarr")


@settings(
    max_examples=int(os.environ.get("HDMF_ZARR3_OUTPUT_FUZZ", "8")),
    deadline=None,
    derandomize=os.environ.get("HDMF_ZARR3_OUTPUT_FUZZ") is None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
@given(
    array=st.sampled_from(sorted(ARRAYS)),
    rows=st.sampled_from([2**12, 2**20, 2**28, 2**33]),
    across=st.sampled_from([1, 1000, 40_000]),
    one_chunk=st.booleans(),
    query=st.fixed_dictionaries(
        {},
        optional={
            "start": st.sampled_from(["0", "-1e300", "1e300", "nan", "1.5"]),
            "stop": st.sampled_from(["1e9", "inf", "3", "0"]),
            "count": st.sampled_from(["500", "1", "0"]),
            "channels": st.sampled_from(["0-7", "0-100000", "3,1", "99"]),
            "index": st.sampled_from(["0", "5", "-1"]),
            "width": st.sampled_from(["4000", "1", "100000000"]),
            "sort": st.sampled_from(["start_time", "id", "spike_times", "quality"]),
        },
    ),
)
@example(array="/units/electrodes", rows=2**33, across=1, one_chunk=False, query={})  # a region: read() checks it
def test_arrays_huge_by_their_metadata_are_answered_as_json_in_bounded_memory(
    viewer_base, tmp_path_factory, array, rows, across, one_chunk, query
):
    """An array of the viewer's file declared ``rows`` long (its other axes ``across`` wide), in chunks of the
    default size or one chunk for all of it, none stored: every view of it answers JSON or a PNG, every error
    ours, each request within the traced-memory, time and side-effect limits of tests/hostile_corpus.py."""
    from hdmf_zarr3.view.server import ViewServer
    from hdmf_zarr3.view.viewed_file import ViewedFile

    top = tmp_path_factory.mktemp("fuzz-huge")
    path = top / "v.nwb.zarr"
    shutil.copytree(viewer_base, path)
    for node in _row_aligned(path, array):  # a table's columns stay as long as its ids (else HDMF refuses it)
        document = json.loads((path / node.strip("/") / "zarr.json").read_text())
        shape = [rows] + [across if n > 1 else n for n in document["shape"][1:]]
        chunks = shape if one_chunk else document["chunk_grid"]["configuration"]["chunk_shape"]
        declare(path, node, shape, chunks)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with bounded(top):
                opened = ViewedFile(str(path))
        except hdmf_zarr3.errors.HdmfZarrError:  # refused when opened (too many chunks, ...): our typed error
            return
        viewer = ViewServer(opened)
        try:
            for route, where in [("/api/node", array), *((r, ARRAYS[array]) for r in VIEW_ROUTES)]:
                with bounded(top):
                    answered = viewer.answer(route, {**query, "path": where})
                _assert_answered(route, where, *answered)
        finally:
            viewer.close()


def _assert_answered(route, where, status, kind, body) -> None:
    """The viewer answered: a page of JSON (200, or one of our typed errors) or a PNG."""
    if kind == "application/json":
        answer = json.loads(body)
        assert status == 200 or answer["error"] in OUR_ERRORS, (route, where, answer)
    else:
        assert kind == "image/png" and body.startswith(b"\x89PNG")
