"""The pure format layer: dtype mapping, value encodings, records and documents."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hdmf_zarr3 import FormatError, UnsupportedDataError
from hdmf_zarr3.format.data import references, values
from hdmf_zarr3.format.data.references import Reference
from hdmf_zarr3.format.vocabulary import dtypes, from_attribute


@pytest.mark.parametrize(
    "spec,expected",
    [
        ("float", "float32"),
        ("double", "float64"),
        ("long", "int64"),
        ("int", "int32"),
        ("short", "int16"),
        ("uint", "uint32"),
        ("utf8", "text"),
        ("utf-8", "text"),
        ("text", "text"),
        ("ascii", "ascii"),
        ("bytes", "ascii"),
        ("isodatetime", "isodatetime"),
        ("datetime", "isodatetime"),
        ("object", "object"),
        ("region", "region"),
        ("numeric", None),
        (None, None),
        (np.float32, "float32"),
        (np.dtype("<u2"), "uint16"),
        ({"target_type": "X", "reftype": "object"}, "object"),
        (np.dtype("U3"), "text"),
        (np.dtype("S3"), "ascii"),
    ],
)
def test_canonical_dtype_names(spec, expected):
    assert dtypes.canonical(spec) == expected


def test_storage_types_for_inferred_data():
    assert dtypes.for_hdmf_dtype(None, ["a", "b"]).zarr_dtype == "text"
    assert dtypes.for_hdmf_dtype(None, [b"a"]).zarr_dtype == "ascii"
    assert dtypes.for_hdmf_dtype(None, np.zeros(3, "u2")).data_type == "uint16"
    assert dtypes.for_hdmf_dtype(None, [[1.5]]).data_type == "float64"
    struct = dtypes.for_hdmf_dtype(None, np.zeros(2, dtype=[("a", "i4"), ("b", "f8")]))
    assert struct.kind == "struct" and struct.data_type["name"] == "struct"
    with pytest.raises(UnsupportedDataError, match="empty data"):
        dtypes.for_hdmf_dtype(None, [])
    with pytest.raises(UnsupportedDataError):
        dtypes.for_hdmf_dtype(None, [object()])


def test_compound_with_strings_or_references_is_rows():
    rows = dtypes.for_compound([dtypes.Field("a", "int32"), dtypes.Field("t", "ascii")])
    assert rows.kind == "rows" and rows.data_type == "string"
    assert rows.zarr_dtype == [{"name": "a", "dtype": "int32"}, {"name": "t", "dtype": "ascii"}]


@pytest.mark.parametrize(
    "zarr_dtype,data_type",
    [
        ("int32", "int64"),
        ("text", "int8"),
        ("nonsense", "string"),
        (5, "int8"),
        ([{"name": "a"}], "string"),
    ],
)
def test_inconsistent_stored_dtypes_are_format_errors(zarr_dtype, data_type):
    with pytest.raises(FormatError, match="/x"):
        from_attribute(zarr_dtype, data_type, "/x")


def _roundtrip(value):
    encoded = values.encode_attribute(value, lambda o: Reference(".", "/t"), "/p@a")
    return encoded, values.decode_attribute(encoded, lambda r: ("resolved", r.path), "/p@a")


def test_attribute_envelopes():
    enc, dec = _roundtrip(np.uint32(7))
    assert enc == {"zarr_dtype": "uint32", "value": 7} and type(dec) is np.uint32
    enc, dec = _roundtrip(np.array([1.0, math.nan, math.inf], dtype="f4"))
    assert enc["value"] == [1.0, "NaN", "Infinity"] and dec.dtype == np.float32
    enc, dec = _roundtrip(math.nan)
    assert enc == {"zarr_dtype": "float64", "value": "NaN"} and math.isnan(dec)
    assert _roundtrip("plain") == ("plain", "plain")
    assert _roundtrip([1, "a", True]) == ([1, "a", True], [1, "a", True])


@pytest.mark.parametrize(
    "bad",
    [
        {"value": 1},
        {"zarr_dtype": "uint8", "value": 300},
        {"zarr_dtype": "int8", "value": "x"},
        {"zarr_dtype": "float64", "value": "nan"},
        {"zarr_dtype": "object", "value": {"path": "/a"}},
        {"zarr_dtype": "what", "value": 1},
        {"zarr_dtype": "text", "value": [1]},
    ],
)
def test_malformed_attribute_values_are_format_errors(bad):
    with pytest.raises(FormatError, match="/p@a"):
        values.decode_attribute(bad, lambda r: r, "/p@a")


def test_reference_records_validate():
    ref = Reference(".", "/a/b", "oid", None)
    assert references.decode_element(references.encode_element(ref), "/x") == ref
    assert references.decode_element("", "/x") is None
    for bad in ("{", "[]", '{"source": ".", "path": 5}', '{"source": "", "path": "/a"}'):
        with pytest.raises(FormatError, match="/x"):
            references.decode_element(bad, "/x")
    with pytest.raises(FormatError, match="name"):
        references.decode_links([{"source": ".", "path": "/a"}], "/g")


def test_rows_roundtrip():
    fields = (
        dtypes.Field("i", "int32"),
        dtypes.Field("f", "float64"),
        dtypes.Field("s", "text"),
        dtypes.Field("r", "object"),
    )
    row = values.encode_row((1, math.inf, "x", "target"), fields, lambda o: Reference(".", "/" + o), "/d")
    assert row == [1, "Infinity", "x", {"source": ".", "path": "/target", "object_id": None, "source_object_id": None}]
    back = values.decode_row(row, fields, "/d")
    assert back[:3] == [1, math.inf, "x"] and isinstance(back[0], np.int32) and back[3].path == "/target"
    with pytest.raises(FormatError):
        values.decode_row([1, 2], fields, "/d")


def test_compound_zarr_dtype_must_match_data_type():
    numeric = [{"name": "a", "dtype": "int32"}]
    with pytest.raises(FormatError, match="/c"):
        from_attribute(numeric, "string", "/c")
    struct = {"name": "struct", "configuration": {"fields": [{"name": "b", "data_type": "int32"}]}}
    with pytest.raises(FormatError, match="/c"):
        from_attribute(numeric, struct, "/c")
