"""Cached specifications are hostile input (issue #27): checked before HDMF sees them.

Each case damages the cached ``core`` specification of a small NWB file; opening it for reading must give
:class:`SpecificationError` (a ``CorruptStoreError``) naming the namespace and type, never HDMF's
``RecursionError``/``ValueError``/``AttributeError``/``TypeError``, never a container silently left out, and
``hdmf-zarr3 validate`` reports the same problem. A hypothesis fuzzer mutates the spec JSON: every mutant
either reads with every container, or gives our typed error.
"""

from __future__ import annotations

import json
import os
import shutil
import warnings
from pathlib import Path

import pytest
from hostile_corpus import deconsolidate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nwb_factories import small_nwbfile
from writing import write_nwb

from hdmf_zarr3 import HdmfZarrError, NWBZarrIO, SpecificationError
from hdmf_zarr3.inspection import validate

SPECS = "specifications/core"


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("specs") / "base.nwb.zarr"
    write_nwb(path, small_nwbfile(5))
    deconsolidate(path)  # each node's own zarr.json is what is read (and damaged)
    return path


def _acquisition(f: Path) -> set[str]:
    return {p.name for p in (f / "acquisition").iterdir() if p.is_dir()}


def _doc_key(f: Path, name: str) -> Path:
    (version,) = [p.name for p in (f / SPECS).iterdir() if p.is_dir()]
    return f / SPECS / version / name / "zarr.json"


def _load(f: Path, name: str):
    return json.loads(json.loads(_doc_key(f, name).read_text())["fill_value"])


def _store(f: Path, name: str, value) -> None:
    key = _doc_key(f, name)
    doc = json.loads(key.read_text())
    doc["fill_value"] = json.dumps(value) if not isinstance(value, str) else value
    key.write_text(json.dumps(doc))


def _type(spec, name: str):
    for group in spec.get("groups", []) + spec.get("datasets", []):
        if group.get("neurodata_type_def") == name:
            return group
    raise KeyError(name)


def _edit_base(change):
    def damage(f: Path) -> None:
        spec = _load(f, "nwb.base")
        change(spec)
        _store(f, "nwb.base", spec)

    return damage


def _nested(depth: int):
    def change(spec):
        inner: dict = {"name": "leaf", "doc": "x", "quantity": "?"}
        for i in range(depth):
            inner = {"name": f"g{i}", "doc": "x", "quantity": "?", "groups": [inner]}
        _type(spec, "TimeSeries").setdefault("groups", []).append(inner)

    return change


def _set(type_name: str, key: str, value):
    return lambda spec: _type(spec, type_name).__setitem__(key, value)


def _namespace(change):
    def damage(f: Path) -> None:
        doc = _load(f, "namespace")
        change(doc)
        _store(f, "namespace", doc)

    return damage


CASES = {
    "groups-400-deep": (_edit_base(_nested(400)), "nest deeper than"),
    "inherits-from-itself": (
        _edit_base(_set("TimeSeries", "neurodata_type_inc", "TimeSeries")),
        "inherits from itself",
    ),
    "inherit-from-each-other": (
        _edit_base(
            lambda s: (
                _set("TimeSeries", "neurodata_type_inc", "Image")(s),
                _set("Image", "neurodata_type_inc", "TimeSeries")(s),
            )
        ),
        "inherits from itself",
    ),
    "unknown-parent": (_edit_base(_set("TimeSeries", "neurodata_type_inc", "NoSuchType")), "'NoSuchType' is not"),
    "self-including-namespace": (
        _namespace(lambda d: d["namespaces"][0]["schema"].append({"namespace": "core"})),
        "includes itself",
    ),
    "groups-not-a-list": (_edit_base(_set("TimeSeries", "groups", 5)), "'groups' is not a list"),
    "quantity-an-object": (_edit_base(_set("TimeSeries", "quantity", {})), "quantity"),
    "name-a-list": (_edit_base(_set("TimeSeries", "default_name", [])), "'default_name' must be text"),
    "dtype-a-number": (_edit_base(_set("TimeSeries", "dtype", 5)), "dtype 5"),
    "attributes-of-numbers": (_edit_base(_set("TimeSeries", "attributes", [1, 2])), "must be an object"),
    "source-not-an-object": (lambda f: _store(f, "nwb.base", [1]), "must be a JSON object"),
    "namespace-not-an-object": (lambda f: _store(f, "namespace", "5"), "namespaces"),
    "spec-not-json": (lambda f: _store(f, "nwb.base", "{not json"), "not valid UTF-8 JSON"),
}


@pytest.mark.parametrize("damage,message", CASES.values(), ids=CASES.keys())
def test_a_hostile_cached_specification_is_a_typed_error_from_read_and_validate(base, tmp_path, damage, message):
    f = tmp_path / "f.nwb.zarr"
    shutil.copytree(base, f)
    damage(f)
    with pytest.raises(HdmfZarrError, match=message) as raised, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with NWBZarrIO(f, mode="r") as io:
            io.read()
    assert isinstance(raised.value, (SpecificationError, HdmfZarrError)) and raised.value.path.startswith("/")
    assert "core" in str(raised.value) or "nwb.base" in str(raised.value) or "namespace" in str(raised.value)
    found = [str(p) for p in validate(str(f)).problems]
    assert any(message in line for line in found) or any(str(raised.value) in line for line in found), found


# --- the fuzzer ------------------------------------------------------------------------------------------
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=8) | st.sampled_from(["TimeSeries", "*"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
_KEYS = st.sampled_from(
    [
        "neurodata_type_def",
        "neurodata_type_inc",
        "name",
        "default_name",
        "doc",
        "quantity",
        "groups",
        "datasets",
        "attributes",
        "links",
        "dtype",
        "shape",
        "dims",
        "linkable",
        "target_type",
        "required",
    ]
)


def _paths(value, here=()):
    """Every (container path) in a JSON value: where a mutation may land."""
    yield here
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, sub in items:
        if isinstance(sub, (dict, list)):
            yield from _paths(sub, (*here, key))


def _at(value, path):
    for key in path:
        value = value[key]
    return value


@settings(
    max_examples=int(os.environ.get("HDMF_ZARR3_SPEC_FUZZ", "25")),
    deadline=None,
    derandomize=os.environ.get("HDMF_ZARR3_SPEC_FUZZ") is None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_any_mutated_specification_reads_whole_or_gives_our_typed_error(base, tmp_path_factory, data):
    f = tmp_path_factory.mktemp("fuzz") / "f.nwb.zarr"
    shutil.copytree(base, f)
    name = data.draw(st.sampled_from(["nwb.base", "namespace", "nwb.file"]))
    spec = _load(f, name)
    for _ in range(data.draw(st.integers(1, 3))):
        paths = list(_paths(spec))
        target = _at(spec, data.draw(st.sampled_from(paths)))
        if isinstance(target, dict):
            target[data.draw(_KEYS)] = data.draw(_JSON)
        elif target:
            target[data.draw(st.integers(0, len(target) - 1))] = data.draw(_JSON)
    _store(f, name, spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with NWBZarrIO(f, mode="r") as io:
                nwbfile = io.read()
                assert set(nwbfile.acquisition) == _acquisition(base)  # never a container silently left out
        except HdmfZarrError:
            pass
