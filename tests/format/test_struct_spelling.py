"""The two spellings of a compound's data type (format/documents/struct_spelling.py): the consolidated copy's
``structured`` is read back exactly as the node's own ``struct``, for every field type and fill; a malformed
``structured`` document is a CorruptStoreError naming its node."""

from __future__ import annotations

import base64
import json

import pytest

from hdmf_zarr3.errors import CorruptStoreError
from hdmf_zarr3.format.documents import consolidated
from hdmf_zarr3.format.documents.struct_spelling import canonical_spelling, older_spelling
from hdmf_zarr3.format.vocabulary.dtypes import NUMERIC_NAMES

UTF32 = {"name": "fixed_length_utf32", "configuration": {"length_bytes": 8}}
#: (field type, fills): every numeric type, booleans, the float specials, and hdmf-zarr 0.14's text fields.
FIELDS = [(name, [False, True] if name == "bool" else [0, 7]) for name in NUMERIC_NAMES] + [
    ("float64", ["NaN", "Infinity", "-Infinity", -0.5]),
    ("float32", [1.5]),
    (UTF32, ["", "ab"]),
]


def _document(fields: list[tuple[str, object]], fill: dict) -> dict:
    return {
        "zarr_format": 3,
        "node_type": "array",
        "shape": [2],
        "data_type": {"name": "struct", "configuration": {"fields": [{"name": n, "data_type": k} for n, k in fields]}},
        "fill_value": fill,
        "attributes": {},
    }


@pytest.mark.parametrize("kind, fills", FIELDS, ids=[json.dumps(k) for k, _ in FIELDS])
def test_every_field_type_and_fill_reads_back_as_written(kind, fills):
    for fill in fills:
        doc = _document([("a", "uint8"), ("b", kind)], {"a": 0, "b": fill})
        older = older_spelling(doc)
        assert older["data_type"] == {"name": "structured", "configuration": {"fields": [["a", "uint8"], ["b", kind]]}}
        assert isinstance(older["fill_value"], str)
        back = canonical_spelling(json.loads(json.dumps(older)), "/x")
        assert back["data_type"] == doc["data_type"]
        assert back["fill_value"] == doc["fill_value"]  # (a float's 0 reads back as 0.0: the same value)
        assert isinstance(back["fill_value"]["b"], bool) == isinstance(fill, bool)
        assert isinstance(back["fill_value"]["b"], str) == isinstance(fill, str)
        assert {k: v for k, v in back.items() if k not in ("data_type", "fill_value")} == {
            k: v for k, v in doc.items() if k not in ("data_type", "fill_value")
        }


def test_the_copy_is_what_zarr_python_3_1_writes_for_the_same_type():
    """The spelling of zarr-python 3.1.5 (``create_array`` with a structured numpy dtype, in its own venv:
    tests/integrations/test_older_zarr_python.py reads it there), for ``[("x", "<u4"), ("w", "<f4")]``."""
    doc = _document([("x", "uint32"), ("w", "float32")], {"x": 0, "w": 0})
    older = older_spelling(doc)
    assert older["data_type"] == {
        "name": "structured",
        "configuration": {"fields": [["x", "uint32"], ["w", "float32"]]},
    }
    assert base64.b64decode(older["fill_value"]) == bytes(8)


def test_other_documents_are_left_as_they_are():
    group = {"zarr_format": 3, "node_type": "group", "attributes": {}}
    numeric = {**_document([], {}), "data_type": "int16", "fill_value": 0}
    complex_field = _document([("c", "complex64")], {"c": [0, 0]})
    hex_fill = _document([("f", "float32")], {"f": "0x7fc00000"})
    too_large = _document([("u", "uint8")], {"u": 300})
    not_whole = _document([("i", "int32")], {"i": 0.5})
    too_long = _document([("t", UTF32)], {"t": "abc"})  # (two characters fit in 8 bytes)
    for doc in (group, numeric, complex_field, hex_fill, too_large, not_whole, too_long):
        assert older_spelling(doc) is doc
        assert canonical_spelling(doc, "/x") is doc


def test_the_consolidated_copy_spells_compounds_the_older_way_and_nothing_else():
    doc = _document([("x", "uint32")], {"x": 0})
    numeric = {**_document([], {}), "data_type": "int16", "fill_value": 0}
    root = consolidated.consolidate(
        {"/": {"zarr_format": 3, "node_type": "group", "attributes": {}}, "/c": doc, "/n": numeric}
    )
    members = root["consolidated_metadata"]["metadata"]
    assert members["c"]["data_type"]["name"] == "structured" and members["n"] == numeric
    expanded = consolidated.expand(root, lambda member, path, _: canonical_spelling(member, path))
    assert expanded["/c"] == doc


MALFORMED = {
    "fields not a list": {"name": "structured", "configuration": {"fields": "x"}},
    "no fields": {"name": "structured", "configuration": {"fields": []}},
    "no configuration": {"name": "structured"},
    "a field not a pair": {"name": "structured", "configuration": {"fields": [["x", "uint8", 1]]}},
    "an unknown field type": {"name": "structured", "configuration": {"fields": [["x", "uint128"]]}},
    "a complex field": {"name": "structured", "configuration": {"fields": [["x", "complex64"]]}},
    "an empty name": {"name": "structured", "configuration": {"fields": [["", "uint8"]]}},
    "a name twice": {"name": "structured", "configuration": {"fields": [["x", "uint8"], ["x", "uint8"]]}},
    "text of no length": {"name": "structured", "configuration": {"fields": [["x", {**UTF32, "configuration": {}}]]}},
    "text of 3 bytes": {
        "name": "structured",
        "configuration": {"fields": [["x", {"name": "fixed_length_utf32", "configuration": {"length_bytes": 3}}]]},
    },
    "elements of 4 GiB": {  # (numpy's item size wraps to 0: an empty fill matched it)
        "name": "structured",
        "configuration": {
            "fields": [
                [f"f{n}", {"name": "fixed_length_utf32", "configuration": {"length_bytes": 2**20}}] for n in range(4096)
            ]
        },
    },
    "text of a GiB": {
        "name": "structured",
        "configuration": {"fields": [["x", {"name": "fixed_length_utf32", "configuration": {"length_bytes": 2**30}}]]},
    },
}
FILLS = {"not base64": "***", "too short": base64.b64encode(b"\0").decode(), "a number": 0, "missing": None}


@pytest.mark.parametrize("what", MALFORMED)
def test_a_malformed_structured_type_is_an_error_naming_the_node(what):
    for fill in ("AA==", ""):  # ("": the fill of an element numpy sizes at 0 bytes)
        doc = {**_document([], {}), "data_type": MALFORMED[what], "fill_value": fill}
        with pytest.raises(CorruptStoreError, match="structured") as caught:
            canonical_spelling(doc, "/a/pixel_mask")
        assert "/a/pixel_mask" in str(caught.value)


@pytest.mark.parametrize("what", FILLS)
def test_a_fill_that_is_not_one_packed_element_is_an_error_naming_the_node(what):
    data_type = {"name": "structured", "configuration": {"fields": [["x", "uint32"]]}}
    doc = {**_document([], {}), "data_type": data_type, "fill_value": FILLS[what]}
    with pytest.raises(CorruptStoreError, match="fill_value") as caught:
        canonical_spelling(doc, "/a/pixel_mask")
    assert "/a/pixel_mask" in str(caught.value)
