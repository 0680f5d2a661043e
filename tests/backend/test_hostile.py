"""Hostile files are harmless: a corpus of damaged and malicious files, built here, each read in full.

Every case starts from a tiny valid file (a builder tree, or a small NWB file), damages it (truncated or
non-UTF-8 ``zarr.json``, wrong JSON types, huge shapes, unknown or pickle codecs, bare NaN tokens, deep
nesting, cyclic or dangling links, missing reference targets, external sources that leave the file's
directory) and reads all of it with :func:`hostile_corpus.read_everything`. Each must give a typed error
(or read harmlessly), within 20 s and 256 MiB of traced memory, without running code, touching the network
or writing outside the test's directory. External sources are refused unless the caller allows a root
directory with ``external_roots``.
"""

from __future__ import annotations

import json
import pickle
import socket

import numcodecs
import numpy as np
import obstore.store
import pytest
from hdmf.backends.warnings import BrokenLinkWarning
from hostile_corpus import (
    BYTES,
    EXTERNAL,
    TARGET,
    deconsolidate,
    edit,
    edit_consolidated,
    exploit_pickle,
    fresh_case,
    load,
    put_raw,
    raw_attribute,
    read_everything,
    record,
    refuse,
    set_elements,
    write_external_target,
)

from hdmf_zarr3 import CorruptStoreError, UnsafeCodecError, UnsafeDataError, UnsafeLinkError, UnsupportedCodecError

Corrupt, Codec = CorruptStoreError, UnsupportedCodecError


@pytest.fixture(autouse=True)
def no_unpickling_no_network(monkeypatch):
    for module, name in [
        (pickle, "loads"),
        (pickle, "load"),
        (pickle, "Unpickler"),
        (numcodecs.Pickle, "decode"),
        (socket.socket, "connect"),
        (socket.socket, "connect_ex"),
        (socket, "create_connection"),
        (socket, "getaddrinfo"),
        (obstore.store, "from_url"),
        (obstore.store, "S3Store"),
        (obstore.store, "HTTPStore"),
        (obstore.store, "GCSStore"),
        (obstore.store, "AzureStore"),
    ]:
        monkeypatch.setattr(module, name, refuse(f"{getattr(module, '__name__', module)}.{name}"))


@pytest.fixture
def f(tmp_path, hostile_bases):
    """A fresh copy of the builder base file, at ``<tmp>/here/f.zarr``."""
    return fresh_case(hostile_bases / "base.zarr", tmp_path)


@pytest.fixture
def nwb(tmp_path, hostile_bases):
    return fresh_case(hostile_bases / "base.nwb.zarr", tmp_path)


def _set(*keys, value):
    """A change setting ``doc[k1][k2]...`` to ``value``."""

    def change(doc):
        for k in keys[:-1]:
            doc = doc[k]
        doc[keys[-1]] = value

    return change


def _structured(fields, fill):
    """A change to an array's data type: zarr-python 3.1's ``structured`` with these ``fields`` and base64 ``fill``."""

    def change(doc):
        doc["data_type"] = {"name": "structured", "configuration": {"fields": fields}}
        doc["fill_value"] = fill

    return change


def _array(shape=None, chunks=None, dtype=None):
    """A change to an array's shape, chunk shape or (numeric) dtype, keeping data_type and zarr_dtype in step."""

    def change(doc):
        if shape is not None:
            doc["shape"] = shape
        if chunks is not None:
            doc["chunk_grid"]["configuration"]["chunk_shape"] = chunks
        if dtype is not None:
            doc["data_type"] = doc["attributes"]["zarr_dtype"] = dtype

    return change


def _json(value):
    return json.dumps(value, separators=(",", ":"))


def _consolidated_block(f, value):
    root = load(f, "/")
    root["consolidated_metadata"] = value
    (f / "zarr.json").write_text(_json(root))


def _consolidated_member(f, key, member):
    root = load(f, "/")
    root["consolidated_metadata"]["metadata"][key] = member
    (f / "zarr.json").write_text(_json(root))


def _links(f, links_by_group):
    deconsolidate(f)
    for group, links in links_by_group.items():
        edit(f, group, _set("attributes", "zarr_link", value=links))


def _only(f, folder):
    (name,) = [p.name for p in (f / folder).iterdir() if p.is_dir()]
    return name


def _nest(depth, open_="[", close="]", leaf="1"):
    return open_ * depth + leaf + close * depth


# --- the positive controls ------------------------------------------------------------------------------
def test_untouched_builder_file_reads(f):
    values = read_everything(f)
    np.testing.assert_array_equal(values["/x"], np.arange(6))
    np.testing.assert_array_equal(values["/b/lnk"], TARGET)
    np.testing.assert_array_equal(values["/x@ref"], TARGET)
    np.testing.assert_array_equal(values["/refs"][0], TARGET)
    assert values["/refs"][1] == ("group", "a") and values["/rows"][0][1] == ("group", "a")
    assert list(values["/s"]) == ["u", "v"] and values["/@plain"] == [1, 2]


def test_untouched_nwb_file_reads(nwb):
    values = read_everything(nwb, nwb=True)
    np.testing.assert_array_equal(values["/acquisition/ts/data"], np.arange(10.0))


# --- 1, 2, 3, 4, 6, 7: metadata that is not what it claims ----------------------------------------------
HUGE = 2**62
METADATA_CASES = {
    # 1. unparsable documents
    "root-truncated": (lambda f: put_raw(f, "/", (f / "zarr.json").read_bytes()[:40]), Corrupt),
    "node-truncated": (lambda f: put_raw(f, "/x", (f / "x" / "zarr.json").read_bytes()[:40]), Corrupt),
    "node-empty": (lambda f: put_raw(f, "/a", b""), Corrupt),
    "root-non-utf8": (
        lambda f: put_raw(f, "/", b'{"zarr_format": 3, "node_type": "group", "attributes": {"k": "\xff\xfe"}}'),
        Corrupt,
    ),
    "node-non-utf8": (
        lambda f: put_raw(f, "/a", b'{"zarr_format": 3, "node_type": "group", "attributes": {"k": "\xc3\x28"}}'),
        Corrupt,
    ),
    "root-not-object": (lambda f: put_raw(f, "/", b"[1, 2]"), Corrupt),
    "node-not-object": (lambda f: put_raw(f, "/x", b'"zarr"'), Corrupt),
    "root-recursion-bomb": (lambda f: put_raw(f, "/", b"[" * 100_000), Corrupt),
    "node-recursion-bomb": (lambda f: put_raw(f, "/a", b'{"a":' * 100_000), Corrupt),
    # 2. wrong JSON types
    "shape-string": (lambda f: edit(f, "/x", _array(shape="6")), Corrupt),
    "shape-negative": (lambda f: edit(f, "/x", _array(shape=[-6])), Corrupt),
    "shape-float": (lambda f: edit(f, "/x", _array(shape=[6.0])), Corrupt),
    "shape-null": (lambda f: edit(f, "/x", _array(shape=[None])), Corrupt),
    "shape-bool": (lambda f: edit(f, "/x", _array(shape=[True])), Corrupt),
    "chunks-zero": (lambda f: edit(f, "/x", _array(chunks=[0])), Corrupt),
    "chunks-wrong-length": (lambda f: edit(f, "/x", _array(chunks=[6, 1])), Corrupt),
    "chunk-grid-not-object": (lambda f: edit(f, "/x", _set("chunk_grid", value="regular")), Corrupt),
    "attributes-list": (lambda f: edit(f, "/a", _set("attributes", value=[])), Corrupt),
    "zarr_dtype-number": (lambda f: edit(f, "/x", _set("attributes", "zarr_dtype", value=5)), Corrupt),
    "zarr_dtype-unknown": (lambda f: edit(f, "/x", _set("attributes", "zarr_dtype", value="float128x")), Corrupt),
    "zarr_link-dict": (lambda f: edit(f, "/b", _set("attributes", "zarr_link", value={"name": "lnk"})), Corrupt),
    "zarr_link-garbage": (lambda f: edit(f, "/b", _set("attributes", "zarr_link", value=[1, "x", None])), Corrupt),
    "data_type-unknown": (lambda f: edit(f, "/x", _set("data_type", value="complex512")), Corrupt),
    "data_type-number": (lambda f: edit(f, "/x", _set("data_type", value=7)), Corrupt),
    "codecs-not-list": (lambda f: edit(f, "/x", _set("codecs", value=BYTES)), Corrupt),
    "node_type-unknown": (lambda f: edit(f, "/a", _set("node_type", value="banana")), Corrupt),
    "consolidated-not-object": (lambda f: _consolidated_block(f, 5), Corrupt),
    "consolidated-member-string": (lambda f: _consolidated_member(f, "x", "not a document"), Corrupt),
    "consolidated-member-incomplete": (lambda f: _consolidated_member(f, "x", {"node_type": "array"}), Corrupt),
    "consolidated-member-dotdot": (lambda f: _consolidated_member(f, "../evil", {"zarr_format": 3}), Corrupt),
    "consolidated-only-shape-string": (lambda f: edit_consolidated(f, "/x", _array(shape="6")), Corrupt),
    "consolidated-only-huge": (lambda f: edit_consolidated(f, "/x", _array(shape=[HUGE], chunks=[HUGE])), Corrupt),
    # a compound spelled as zarr-python 3.1 does (format/documents/struct_spelling.py), in a node or in the copy
    "structured-fields-not-pairs": (lambda f: edit(f, "/x", _structured([["v"]], "AAAAAAAAAAA=")), Corrupt),
    "structured-unknown-field-type": (lambda f: edit(f, "/x", _structured([["v", "uint128"]], "AA==")), Corrupt),
    "consolidated-structured-fill-not-base64": (
        lambda f: edit_consolidated(f, "/x", _structured([["v", "float64"]], "***")),
        Corrupt,
    ),
    "consolidated-structured-fill-short": (
        lambda f: edit_consolidated(f, "/x", _structured([["v", "float64"]], "AAAA")),
        Corrupt,
    ),
    "consolidated-structured-text-of-a-gib": (
        lambda f: edit_consolidated(
            f, "/x", _structured([["v", {"name": "fixed_length_utf32", "configuration": {"length_bytes": 2**30}}]], "")
        ),
        Corrupt,
    ),
    "consolidated-structured-element-of-4-gib": (
        lambda f: edit_consolidated(
            f,
            "/x",
            _structured(
                [
                    [f"v{n}", {"name": "fixed_length_utf32", "configuration": {"length_bytes": 2**20}}]
                    for n in range(4096)
                ],
                "",
            ),
        ),
        Corrupt,
    ),
    "consolidated-structured-disagrees-with-zarr_dtype": (
        lambda f: edit_consolidated(f, "/x", _structured([["v", "float64"]], "AAAAAAAAAAA=")),
        Corrupt,
    ),
    # 3. huge shapes and chunk counts (logical size capped at 2**50 bytes, chunk count at 2**40)
    "huge-1d": (lambda f: edit(f, "/x", _array(shape=[HUGE], chunks=[HUGE], dtype="float64")), Corrupt),
    "huge-1d-small-chunks": (lambda f: edit(f, "/x", _array(shape=[HUGE], chunks=[6])), Corrupt),
    "huge-2d-unit-chunks": (lambda f: edit(f, "/x", _array(shape=[2**40, 2**40], chunks=[1, 1])), Corrupt),
    "huge-size-only": (lambda f: edit(f, "/x", _array(shape=[2**48], chunks=[2**20], dtype="float64")), Corrupt),
    "huge-chunk-count-only": (lambda f: edit(f, "/x", _array(shape=[2**41], chunks=[1], dtype="uint8")), Corrupt),
    "shape-beyond-int64": (lambda f: edit(f, "/x", _array(shape=[2**64], chunks=[6])), Corrupt),
    "chunk-beyond-int64": (lambda f: edit(f, "/x", _array(chunks=[2**64])), Corrupt),
    # 4. unknown codecs
    "unknown-codec": (lambda f: edit(f, "/x", _set("codecs", value=[BYTES, {"name": "no-such-codec"}])), Codec),
    "unknown-codec-consolidated-only": (
        lambda f: edit_consolidated(f, "/x", _set("codecs", value=[BYTES, {"name": "no-such-codec"}])),
        Codec,
    ),
    # 6. bare NaN / Infinity in metadata that must be an integer
    "shape-nan": (lambda f: edit(f, "/x", _array(shape=[float("nan")])), Corrupt),
    "chunks-infinity": (lambda f: edit(f, "/x", _array(chunks=[float("inf")])), Corrupt),
    # 7. deep nesting in attribute values (the cap is at most 64 levels)
    "attr-list-65-deep": (lambda f: raw_attribute(f, "/a", "deep", _nest(65)), Corrupt),
    "attr-list-200-deep": (lambda f: raw_attribute(f, "/a", "deep", _nest(200)), Corrupt),
    "attr-list-100000-deep": (lambda f: raw_attribute(f, "/a", "deep", _nest(100_000)), Corrupt),
    "attr-object-200-deep": (lambda f: raw_attribute(f, "/a", "deep", _nest(200, '{"k":', "}")), Corrupt),
    "attr-object-100000-deep": (lambda f: raw_attribute(f, "/a", "deep", _nest(100_000, '{"k":', "}")), Corrupt),
    "attr-envelope-200-deep": (
        lambda f: raw_attribute(f, "/a", "deep", '{"zarr_dtype": "int64", "value": ' + _nest(200) + "}"),
        Corrupt,
    ),
    # 8. links and references that lead nowhere
    "link-cycle": (
        lambda f: _links(f, {"/a": [record(".", "/b/y", name="x")], "/b": [record(".", "/a/x", name="y")]}),
        Corrupt,
    ),
    "link-to-itself": (lambda f: _links(f, {"/a": [record(".", "/a/x", name="x")]}), Corrupt),
    "link-dangling": (lambda f: _links(f, {"/b": [record(".", "/nope", name="lnk")]}), Corrupt),
    "link-dangling-consolidated-only": (
        lambda f: edit_consolidated(f, "/b", _set("attributes", "zarr_link", value=[record(".", "/nope", name="lnk")])),
        Corrupt,
    ),
    "ref-missing-in-attribute": (
        lambda f: edit(
            f, "/x", _set("attributes", "ref", value={"zarr_dtype": "object", "value": record(".", "/nope")})
        ),
        Corrupt,
    ),
    "ref-missing-in-dataset": (lambda f: set_elements(f, "/refs", [_json(record(".", "/nope")), ""]), Corrupt),
    "ref-missing-in-compound": (lambda f: set_elements(f, "/rows", [_json([1, record(".", "/nope")])]), Corrupt),
    # 10. metadata zarr would refuse only when the array is opened (with its own errors), found on open
    "fill-value-string-for-int": (lambda f: edit(f, "/x", _set("fill_value", value="abc")), Corrupt),
    "fill-value-out-of-range": (lambda f: edit(f, "/x", _set("fill_value", value=2**40)), Corrupt),
    "fill-value-null": (lambda f: edit(f, "/x", _set("fill_value", value=None)), Corrupt),
    "fill-value-list-for-float": (lambda f: edit(f, "/sc", _set("fill_value", value=[1, 2])), Corrupt),
    "blosc-cname-unknown": (
        lambda f: edit(f, "/x", _set("codecs", 1, "configuration", "cname", value="nosuch")),
        Corrupt,
    ),
    "blosc-clevel-99": (lambda f: edit(f, "/x", _set("codecs", 1, "configuration", "clevel", value=99)), Corrupt),
    "blosc-shuffle-number": (lambda f: edit(f, "/x", _set("codecs", 1, "configuration", "shuffle", value=7)), Corrupt),
    "codecs-without-serializer": (lambda f: edit(f, "/x", _set("codecs", value=[{"name": "crc32c"}])), Corrupt),
    "codecs-two-serializers": (lambda f: edit(f, "/x", _set("codecs", value=[BYTES, BYTES])), Corrupt),
    "codecs-out-of-order": (lambda f: edit(f, "/x", _set("codecs", value=[{"name": "crc32c"}, BYTES])), Corrupt),
    "bytes-endian-middle": (
        lambda f: edit(f, "/x", _set("codecs", 0, "configuration", "endian", value="middle")),
        Corrupt,
    ),
    "zstd-level-string": (lambda f: edit(f, "/s", _set("codecs", 1, "configuration", "level", value="x")), Corrupt),
    "transpose-order-not-a-permutation": (
        lambda f: edit(f, "/x", _set("codecs", value=[{"name": "transpose", "configuration": {"order": [1]}}, BYTES])),
        Corrupt,
    ),
    "sharding-chunks-do-not-divide-shard": (
        lambda f: edit(f, "/x", _set("codecs", value=[_shard([BYTES], chunks=[4])])),
        Corrupt,
    ),
    "sharding-index-location-middle": (
        lambda f: edit(f, "/x", _set("codecs", value=[_shard([BYTES], location="middle")])),
        Corrupt,
    ),
    "chunk-key-encoding-unknown": (
        lambda f: edit(f, "/x", _set("chunk_key_encoding", value={"name": "nope"})),
        Corrupt,
    ),
    "chunk-key-encoding-missing": (lambda f: edit(f, "/s", lambda doc: doc.pop("chunk_key_encoding")), Corrupt),
    "attr-envelope-absurd-shape": (
        lambda f: edit(
            f, "/a", _set("attributes", "m", value={"zarr_dtype": "int64", "value": [1, 2, 3], "shape": [2**40, 2**40]})
        ),
        Corrupt,
    ),
    "attr-envelope-shape-not-integers": (
        lambda f: edit(
            f, "/a", _set("attributes", "m", value={"zarr_dtype": "int64", "value": [1, 2], "shape": ["2"]})
        ),
        Corrupt,
    ),
    "attr-envelope-negative-shape": (
        lambda f: edit(f, "/a", _set("attributes", "m", value={"zarr_dtype": "int64", "value": [1, 2], "shape": [-1]})),
        Corrupt,
    ),
    "attr-envelope-ragged-numbers": (
        lambda f: edit(f, "/a", _set("attributes", "m", value={"zarr_dtype": "int64", "value": [[1], [1, 2]]})),
        Corrupt,
    ),
    "attr-envelope-ragged-strings": (
        lambda f: edit(f, "/a", _set("attributes", "m", value={"zarr_dtype": "text", "value": [["a"], ["a", "b"]]})),
        Corrupt,
    ),
    # 11. links whose names collide or are no node names
    "link-named-like-a-dataset": (lambda f: _links(f, {"/": [record(".", "/a/target", name="x")]}), Corrupt),
    "link-named-like-a-group": (lambda f: _links(f, {"/": [record(".", "/a/target", name="a")]}), Corrupt),
    "links-with-one-name": (
        lambda f: _links(f, {"/b": [record(".", "/a/target", name="l"), record(".", "/x", name="l")]}),
        Corrupt,
    ),
    "link-name-with-slash": (lambda f: _links(f, {"/b": [record(".", "/a/target", name="l/m")]}), Corrupt),
    "link-name-dotdot": (lambda f: _links(f, {"/b": [record(".", "/a/target", name="..")]}), Corrupt),
    # issue #38 (found by test_hostile_text.py): numpy's dtype parser raised UnicodeEncodeError on a lone surrogate
    "zarr-dtype-lone-surrogate": (
        lambda f: edit(f, "/refs", _set("attributes", "zarr_dtype", value="\ud800")),
        Corrupt,
    ),
    # issue #38: node paths no writer makes, from the consolidated copy (a zip member: test_hostile_chunks.py)
    "consolidated-member-with-nul": (lambda f: _consolidated_member(f, "a\x00b", load(f, "/a")), Corrupt),
    "consolidated-member-with-surrogate": (lambda f: _consolidated_member(f, "a/\ud800", load(f, "/x")), Corrupt),
    "data-type-lone-surrogate": (lambda f: edit(f, "/x", _set("data_type", value="\ud800")), Corrupt),
    # 12. attributes named as a child of their group, links named as an attribute
    "attribute-named-like-a-dataset": (lambda f: edit(f, "/", _set("attributes", "x", value=1)), Corrupt),
    "attribute-named-like-a-group": (lambda f: edit(f, "/", _set("attributes", "a", value="text")), Corrupt),
    "link-named-like-an-attribute": (
        lambda f: (
            _links(f, {"/b": [record(".", "/a/target", name="q")]}),
            edit(f, "/b", _set("attributes", "q", value=1)),
        ),
        Corrupt,
    ),
}


@pytest.mark.parametrize("damage,error", METADATA_CASES.values(), ids=METADATA_CASES.keys())
def test_damaged_metadata_gives_a_typed_error(f, damage, error):
    damage(f)
    with pytest.raises(error):
        read_everything(f)


LINK_MISTAKES = {  # (damage, node the error names, what it says)
    "link-to-itself": (
        lambda f: _links(f, {"/a": [record(".", "/a/x", name="x")]}),
        "/a/x",
        "the link points to itself",
    ),
    "link-to-a-link": (
        lambda f: _links(f, {"/a": [record(".", "/b/lnk", name="x")]}),
        "/a/x",
        "'/b/lnk' is itself a link",
    ),
    "links-in-a-cycle": (
        lambda f: _links(f, {"/a": [record(".", "/b/y", name="x")], "/b": [record(".", "/a/x", name="y")]}),
        "/a/x",
        "'/b/y' is itself a link",
    ),
    "reference-to-a-link": (
        lambda f: (
            deconsolidate(f),
            edit(f, "/x", _set("attributes", "ref", value={"zarr_dtype": "object", "value": record(".", "/b/lnk")})),
        ),
        "/x",
        "'/b/lnk' is itself a link",
    ),
}


@pytest.mark.parametrize("damage,where,message", LINK_MISTAKES.values(), ids=LINK_MISTAKES.keys())
def test_links_to_themselves_or_to_links_say_so(f, damage, where, message):
    """Not "does not exist": the node is there, it is a link, and the format has no links to links."""
    damage(f)
    with pytest.raises(CorruptStoreError, match=message) as raised:
        read_everything(f)
    assert raised.value.path == where


@pytest.mark.parametrize(
    "value,expect",
    [(float("nan"), [np.nan]), ([float("inf"), float("-inf")], [np.inf, -np.inf])],
    ids=["nan", "infinity"],
)
def test_bare_non_finite_tokens_in_attributes_read_as_floats(f, value, expect):
    edit(f, "/a", _set("attributes", "v", value=value))
    assert b"NaN" in (f / "a" / "zarr.json").read_bytes() or b"Infinity" in (f / "a" / "zarr.json").read_bytes()
    got = read_everything(f)["/a@v"]
    np.testing.assert_array_equal(np.asarray(got, dtype=float).ravel(), expect)


# --- 5. pickle, in every codec slot: refused, never decoded -----------------------------------------------
def _shard(codecs, index_codecs=(BYTES, {"name": "crc32c"}), chunks=(6,), location="end"):
    return {
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": list(chunks),
            "codecs": list(codecs),
            "index_codecs": list(index_codecs),
            "index_location": location,
        },
    }


SLOTS = {
    "array-to-array": lambda p: [p, BYTES],
    "array-to-bytes": lambda p: [p],
    "bytes-to-bytes": lambda p: [BYTES, p],
    "shard-codecs": lambda p: [_shard([p])],
    "shard-index-codecs": lambda p: [_shard([BYTES], [p])],
    "nested-shard-codecs": lambda p: [_shard([_shard([p])])],
}


@pytest.mark.parametrize("name", ["pickle", "numcodecs.pickle"])
@pytest.mark.parametrize("slot", SLOTS.keys())
def test_pickle_in_any_codec_slot_is_refused(f, tmp_path, slot, name):
    canary = tmp_path / "CANARY"
    edit(f, "/x", _set("codecs", value=SLOTS[slot]({"name": name, "configuration": {"protocol": 2}})))
    (f / "x" / "c.0").write_bytes(exploit_pickle(canary))
    with pytest.raises(UnsafeCodecError):
        read_everything(f)
    assert not canary.exists()


@pytest.mark.parametrize("where", ["node", "consolidated-only"])
def test_pickle_codec_in_nwb_file_is_refused(nwb, tmp_path, where):
    canary = tmp_path / "CANARY"
    change = _set("codecs", value=[BYTES, {"name": "numcodecs.pickle", "configuration": {"protocol": 2}}])
    (edit if where == "node" else edit_consolidated)(nwb, "/acquisition/ts/data", change)
    (nwb / "acquisition" / "ts" / "data" / "c.0").write_bytes(exploit_pickle(canary))
    with pytest.raises(UnsafeCodecError):
        read_everything(nwb, nwb=True)
    assert not canary.exists()


# --- typed errors survive PyNWB's object mapper ----------------------------------------------------------
NWB_CASES = {
    "truncated-node": lambda f: put_raw(f, "/units/spike_times", (f / "units/spike_times/zarr.json").read_bytes()[:50]),
    "ref-missing-in-attribute": lambda f: edit(
        f,
        "/units/spike_times_index",
        _set("attributes", "target", value={"zarr_dtype": "object", "value": record(".", "/units/nope")}),
    ),
    "huge-shape": lambda f: edit(f, "/acquisition/ts/data", _array(shape=[HUGE], chunks=[HUGE])),
    "spec-recursion-bomb": lambda f: _spec_bomb(
        f, "/specifications/core/" + _only(f, "specifications/core") + "/namespace"
    ),
    # issue #38: what HDMF builds from, changed in the consolidated copy only (HDMF's ConstructError came through)
    "consolidated-type-disagrees": lambda f: edit_consolidated(
        f, "/acquisition/ts", _set("attributes", "neurodata_type", value="ImageSeries")
    ),
    "consolidated-table-type-disagrees": lambda f: edit_consolidated(
        f, "/units/spike_times_index", _set("attributes", "neurodata_type", value="DynamicTableRegion")
    ),
    # found by test_hostile_text.py on the NWB file: numpy's dtype parser raised SyntaxError ("01"), ValueError
    # ("0\x08") and UnicodeEncodeError on data types of the cached specifications' arrays; an empty nwb_version
    # was compared with a number (TypeError)
    **{
        f"spec-data-type-{name}": lambda f, text=text: edit_consolidated(
            f, "/specifications/core/" + _only(f, "specifications/core") + "/nwb.epoch", _set("data_type", value=text)
        )
        for name, text in [("leading-zero", "01"), ("control", "0\x08"), ("surrogate", "\ud800")]
    },
    "nwb-version-empty": lambda f: _root_attribute(f, "nwb_version", ""),
    # a damage our lazy dataset finds while HDMF builds a container: HDMF's ConstructError wrapped our error
    "damaged-array-hdmf-opens": lambda f: edit(
        f, "/intervals/trials/id", _set("chunk_key_encoding", "configuration", "separator", value="")
    ),
}


def _root_attribute(f, name, value):
    """The root's attribute ``name`` set to ``value``, its consolidated copy of the other nodes kept."""
    root = load(f, "/")
    root["attributes"][name] = value
    (f / "zarr.json").write_text(_json(root))


def _spec_bomb(f, node):
    """A cached namespace of 100,000 nested brackets, in its chunk and in its document's ``fill_value`` (a
    chunkless scalar's value, see storage.md §3): the reader meets it wherever it takes the value from."""
    set_elements(f, node, "[" * 100_000)
    edit(f, node, _set("fill_value", value="[" * 100_000))


@pytest.mark.parametrize("damage", NWB_CASES.values(), ids=NWB_CASES.keys())
def test_damaged_nwb_file_gives_a_typed_error(nwb, damage):
    damage(nwb)
    with pytest.raises(CorruptStoreError):
        read_everything(nwb, nwb=True)


def _drop(*keys):
    def change(doc):
        for k in keys[:-1]:
            doc = doc[k]
        del doc[keys[-1]]

    return change


@pytest.mark.parametrize(
    "node,change,where",
    [
        ("/intervals/trials/start_time", _drop("attributes", "neurodata_type"), "/intervals/trials"),
        ("/units", _set("attributes", "colnames", value=["quality", "nope"]), "/units"),
        ("/acquisition/ts", _set("attributes", "neurodata_type", value="ImageSeries"), "/acquisition/ts"),
    ],
    ids=["no-neurodata-type", "colnames-naming-nothing", "type-that-does-not-fit"],
)
def test_what_hdmf_cannot_build_from_the_file_is_our_error_naming_the_node(nwb, node, change, where):
    """Issue #38 (found by test_hostile_text.py): HDMF's ``ValueError``/``ConstructError`` from building the
    containers of a file whose documents agree with each other is ``CorruptStoreError`` naming the node (a
    column that lost its type is no column of its table: the table's check names the table)."""
    edit(nwb, node, change)
    with pytest.raises(CorruptStoreError, match="HDMF cannot build a|no column of it") as raised:
        read_everything(nwb, nwb=True)
    assert raised.value.path == where


@pytest.mark.parametrize(
    "node,attribute,value",
    [
        ("/acquisition/ts", "neurodata_type", "ImageSeries"),
        ("/units/spike_times_index", "neurodata_type", "DynamicTableRegion"),
        ("/units", "colnames", ["quality", "nope"]),
    ],
)
def test_a_consolidated_copy_hdmf_cannot_build_from_names_the_node_that_disagrees(nwb, node, attribute, value):
    """Issue #38: reading trusts the root's copy (one request); when HDMF cannot build from it, the node whose
    own document says otherwise is named, as validate names it, instead of HDMF's ConstructError."""
    edit_consolidated(nwb, node, _set("attributes", attribute, value=value))
    with pytest.raises(CorruptStoreError, match=f"differs from its copy .*attributes {attribute}") as raised:
        read_everything(nwb, nwb=True)
    assert raised.value.path == node
    assert "HDMF cannot build" in str(raised.value)


# --- 9. external sources: only inside the file's directory, unless the caller allows a root ----------------
SOURCES = {  # name: (source, allowed by default, allowed with external_roots=[<tmp>/outside]; None: not tested)
    "absolute": (lambda t: str(t / "outside" / "real.zarr"), False, True),
    "dotdot": (lambda t: "../outside/real.zarr", False, True),
    "symlink-out": (lambda t: "link.zarr", False, True),
    "https-url": (lambda t: "https://example.invalid/x.zarr", False, False),
    "s3-url": (lambda t: "s3://bucket/x.zarr", False, False),
    "file-url": (lambda t: (t / "outside" / "real.zarr").as_uri(), False, None),
    "sibling": (lambda t: "sib.zarr", True, True),
}
KINDS = {  # how a target is planted, and where its value shows up in read_everything's result
    "link": (
        lambda f, s, p="/t": edit(f, "/b", _set("attributes", "zarr_link", value=[record(s, p, name="lnk")])),
        "/b/lnk",
    ),
    "attribute-ref": (
        lambda f, s, p="/t": edit(
            f, "/x", _set("attributes", "ref", value={"zarr_dtype": "object", "value": record(s, p)})
        ),
        "/x@ref",
    ),
    "dataset-ref": (lambda f, s, p="/t": set_elements(f, "/refs", [_json(record(s, p)), ""]), "/refs"),
}


@pytest.fixture
def external_layout(tmp_path):
    write_external_target(tmp_path / "outside" / "real.zarr")
    write_external_target(tmp_path / "here" / "sib.zarr")
    (tmp_path / "here" / "link.zarr").symlink_to(tmp_path / "outside" / "real.zarr", target_is_directory=True)
    return tmp_path


def _sibling_links_back(t):
    """sib.zarr's root links to f.zarr's /b/lnk, which is planted to link to sib.zarr's /l: a → b → a."""
    _links(t / "here" / "sib.zarr", {"/": [record("f.zarr", "/b/lnk", name="l")]})
    return "sib.zarr", "/l"


BROKEN_EXTERNAL = [  # (case, kind): targets in sibling files that exist, linking in a cycle or to nothing
    pytest.param(_sibling_links_back, "link", id="cycle-link"),
    *(
        pytest.param(lambda t: ("nope.zarr", "/t"), kind, id=f"missing-file-{kind}") for kind in KINDS if kind != "link"
    ),  # a link into a missing file is skipped with a warning (below)
    *(pytest.param(lambda t: ("sib.zarr", "/nope"), kind, id=f"missing-path-{kind}") for kind in KINDS),
]


@pytest.mark.parametrize("case,kind", BROKEN_EXTERNAL)
def test_broken_external_targets_give_a_typed_error(f, external_layout, case, kind):
    KINDS[kind][0](f, *case(external_layout))
    with pytest.raises(CorruptStoreError):
        read_everything(f)


def test_a_link_to_a_link_in_another_file_says_so(f, external_layout):
    _links(external_layout / "here" / "sib.zarr", {"/": [record(".", "/t", name="l")]})  # sib.zarr:/l -> /t
    KINDS["link"][0](f, "sib.zarr", "/l")
    with pytest.raises(CorruptStoreError, match="in external file 'sib.zarr': target '/l' is itself a link") as raised:
        read_everything(f)
    assert raised.value.path == "/b/lnk"


def test_a_link_into_a_missing_file_is_skipped_with_a_warning(f, external_layout):
    """As HDF5IO does with an external link whose file is not there: the file itself is intact (a missing
    target inside a file that is there is corruption, above)."""
    KINDS["link"][0](f, "nope.zarr", "/t")
    with pytest.warns(BrokenLinkWarning, match="nope.zarr"):
        read_everything(f)


def _external_value(values, key):
    got = values[key]
    return got[0] if key == "/refs" else got


EXTERNAL_CASES = [
    pytest.param(source, kind, roots, ok, id=f"{source}-{kind}-{'roots' if roots else 'default'}")
    for source, (_, by_default, with_roots) in SOURCES.items()
    for kind in KINDS
    for roots, ok in [(False, by_default), (True, with_roots)]
    if ok is not None
]


@pytest.mark.parametrize("source,kind,roots,ok", EXTERNAL_CASES)
def test_external_sources(f, external_layout, source, kind, roots, ok):
    plant, key = KINDS[kind]
    plant(f, SOURCES[source][0](external_layout))
    kwargs = {"external_roots": [external_layout / "outside"]} if roots else {}
    if ok:
        np.testing.assert_array_equal(_external_value(read_everything(f, **kwargs), key), EXTERNAL)
    else:
        with pytest.raises(UnsafeLinkError):
            read_everything(f, **kwargs)


# --- issue #27: .specloc, documents over the limits (read() refuses them, and validate reports them) -----
@pytest.mark.parametrize("value", ["acquisition", 5, "", "/", "/etc", "..", "specifications/core", ["x"]])
def test_a_specloc_not_naming_cached_specifications_is_refused(nwb, value):
    edit(nwb, "/", _set("attributes", ".specloc", value=value))
    with pytest.raises(Corrupt, match=r"\.specloc") as raised:
        read_everything(nwb, nwb=True)
    assert raised.value.path == "/" and repr(value) in str(raised.value)


@pytest.mark.parametrize(
    "text",
    [
        "[" + ",".join(["[]"] * 2**20) + "]",  # 2**21 values in 4 MiB
        "[" + ",".join(['{"":0}'] * 2**20) + "]",
        '"' + "a" * (32 * 2**20) + '"',  # over 32 MiB
        '"\\ud83d\\ude00' + "a" * (16 * 2**20) + '"',  # wide, over 16 MiB
    ],
    ids=["empty-lists", "one-key-objects", "long-string", "long-wide-string"],
)
def test_documents_over_the_limits_are_refused_naming_the_node(f, text):
    raw_attribute(f, "/a", "big", text)
    with pytest.raises(Corrupt, match="more than") as raised:
        read_everything(f)
    assert raised.value.path == "/a"


# --- issue #38: text checked where it enters (a NUL reaching the file system was a raw ValueError) -------
BAD_TEXTS = {"nul": "sib\x00.zarr", "newline": "sib\n.zarr", "delete": "sib\x7f.zarr", "surrogate": "sib\ud800.zarr"}


@pytest.mark.parametrize("text", BAD_TEXTS.values(), ids=BAD_TEXTS.keys())
@pytest.mark.parametrize("kind", KINDS)
def test_a_source_no_file_can_have_is_refused_naming_the_node(f, external_layout, kind, text):
    """Links, attribute references and elements of reference datasets alike: ``CorruptStoreError`` naming the
    node holding the record, before the file system sees the text (and validate reports it too)."""
    KINDS[kind][0](f, text)
    with pytest.raises(CorruptStoreError, match="reference record 'source'") as raised:
        read_everything(f)
    assert raised.value.path in {"/b", "/b/lnk", "/x@ref", "/refs"}


@pytest.mark.parametrize("source", ["https://[::1/x.zarr", "s3://b/x y.zarr", "https://h:99999/x.zarr"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_source_url_no_store_opens_is_refused_naming_the_node(f, kind, source):
    """urllib raised its raw ``ValueError`` on an unclosed IPv6 bracket; no request is made for any of them."""
    KINDS[kind][0](f, source)
    with pytest.raises(CorruptStoreError, match="source .* (is not a valid URL|percent-encoded)") as raised:
        read_everything(f)
    assert raised.value.path in {"/b", "/b/lnk", "/x", "/x@ref", "/refs"}


@pytest.mark.parametrize("kind", KINDS)
def test_a_nul_in_a_target_path_or_a_link_name_is_refused_naming_the_node(f, kind):
    KINDS[kind][0](f, ".", "/a/tar\x00get")
    with pytest.raises(CorruptStoreError, match="control character") as raised:
        read_everything(f)
    assert raised.value.path in {"/b", "/b/lnk", "/x@ref", "/refs"}
    if kind == "link":
        edit(f, "/b", _set("attributes", "zarr_link", value=[record(".", "/a/target", name="l\x00nk")]))
        with pytest.raises(CorruptStoreError, match="link name"):
            read_everything(f)


# --- issue #38: what fails while HDMF builds the containers is ours, naming the node; validate reports it ----
@pytest.fixture
def ephys(tmp_path, hostile_bases):
    """A fresh copy of the NWB base file with an electrodes table and a DynamicTableRegion into it."""
    return fresh_case(hostile_bases / "ephys.nwb.zarr", tmp_path)


def _symlink_out(f, key):
    """Replace the stored object ``key`` of the file by a symlink to a copy of it outside the file."""
    outside = f.parent.parent / "outside-chunk"
    outside.write_bytes((f / key).read_bytes())
    (f / key).unlink()
    (f / key).symlink_to(outside)


def _same_object_id(f, node, like):
    edit(f, node, _set("attributes", "object_id", value=load(f, like)["attributes"]["object_id"]))


def _reference_to(path):
    return {"zarr_dtype": "object", "value": record(".", path)}


#: name: (damage, the error read() raises, the node it names, what its message says)
CONSTRUCT_CASES = {
    "region-chunk-damaged": (
        lambda f: (f / "acquisition/es/electrodes/c.0").write_bytes(b"garbage!!"),
        Corrupt,
        "/acquisition/es/electrodes",
        r"cannot be decoded .*\(while HDMF built the container of /acquisition/es/electrodes\)",
    ),
    "region-chunk-symlinked-out": (
        lambda f: _symlink_out(f, "acquisition/es/electrodes/c.0"),
        UnsafeDataError,
        "/acquisition/es/electrodes",
        r"symlink .*\(while HDMF built the container of /acquisition/es/electrodes\)",
    ),
    "two-nodes-one-object-id": (
        lambda f: _same_object_id(f, "/acquisition/ts", "/acquisition/es"),
        Corrupt,
        "/acquisition/ts",
        "also the object_id of /acquisition/es",
    ),
    "table-object-id-of-the-file": (
        lambda f: _same_object_id(f, "/units", "/"),
        Corrupt,
        "/units",
        "also the object_id of /;",
    ),
    "id-longer-than-columns": (
        lambda f: edit(f, "/intervals/trials/id", _array(shape=[3])),
        Corrupt,
        "/intervals/trials",
        "id has 3 rows, its columns 2",
    ),
    "columns-of-two-lengths": (
        lambda f: edit(f, "/intervals/trials/start_time", _array(shape=[5])),
        Corrupt,
        "/intervals/trials",
        "differ in length .*start_time 5, stop_time 2",
    ),
    "index-longer-than-columns": (
        lambda f: edit(f, "/units/spike_times_index", _array(shape=[3])),
        Corrupt,
        "/units",
        "differ in length",
    ),
    "colnames-naming-no-column": (
        lambda f: edit(f, "/intervals/trials", _set("attributes", "colnames", value=["start_time", "nope"])),
        Corrupt,
        "/intervals/trials",
        "colnames names 'nope'",
    ),
    "index-of-no-column": (
        lambda f: edit(f, "/units/spike_times_index", _set("attributes", "target", value=_reference_to("/units/id"))),
        Corrupt,
        "/units",
        "indexes 'id', which is no column",
    ),
    "attribute-of-the-wrong-type": (
        lambda f: edit(f, "/acquisition/ts/starting_time", _set("attributes", "rate", value="fast")),
        Corrupt,
        "/acquisition/ts",
        "cannot build a TimeSeries .*'rate'",
    ),
    "region-into-no-table": (
        lambda f: edit(
            f, "/acquisition/es/electrodes", _set("attributes", "table", value=_reference_to("/acquisition/ts"))
        ),
        Corrupt,
        "/acquisition/es/electrodes",
        "cannot build a DynamicTableRegion .*'table'",
    ),
}


@pytest.mark.parametrize("damage,error,node,message", CONSTRUCT_CASES.values(), ids=CONSTRUCT_CASES.keys())
def test_what_fails_while_hdmf_builds_containers_is_ours_naming_the_node(ephys, damage, error, node, message):
    from hdmf_zarr3.inspection import validate

    damage(ephys)
    with pytest.raises(error, match=message) as raised:
        read_everything(ephys, nwb=True)  # (validate reports a problem too: validate_agrees)
    assert raised.value.path == node and type(raised.value) is error
    assert not isinstance(raised.value.__cause__, error), "ours is raised once, not wrapped in ours"
    problems = validate(str(ephys)).problems
    assert any(p.path == node and p.kind == "reading" for p in problems) or any(
        p.path == node and p.kind == "dataset" for p in problems
    ), [str(p) for p in problems]


def test_a_container_built_on_demand_fails_as_read_does(ephys):
    """``get_container`` builds one node's container when asked (after the tree, not with ``read()``): what
    fails meanwhile is ours too, naming the node."""
    from hdmf_zarr3 import NWBZarrIO

    (ephys / "acquisition/es/electrodes/c.0").write_bytes(b"garbage!!")
    with NWBZarrIO(ephys, mode="r") as io, pytest.raises(Corrupt, match="while HDMF built") as raised:
        io.get_container("/acquisition/es/electrodes")
    assert raised.value.path == "/acquisition/es/electrodes"


@pytest.mark.parametrize("listed", [False, True], ids=["consolidated", "listed"])
def test_a_group_whose_directory_is_a_symlink_out_is_refused_naming_it(ephys, listed):
    """A table's group moved out of the file and symlinked back: its chunks are refused as read (HDMF reads the
    ids while it builds the table: ours, not its ConstructError); a file read node by node refuses the group
    itself (its nodes were left out without a word)."""
    if listed:
        deconsolidate(ephys)
    outside = ephys.parent.parent / "outside-group"
    (ephys / "units").rename(outside)
    (ephys / "units").symlink_to(outside)
    with pytest.raises(UnsafeDataError, match="outside the file") as raised:
        read_everything(ephys, nwb=True)  # (validate reports it too: validate_agrees)
    assert raised.value.path == ("/units" if listed else "/units/id")


@pytest.mark.parametrize("value", [["VectorData"], [1, 2], 5], ids=["texts", "numbers", "number"])
def test_a_table_column_of_a_type_that_is_no_name_is_refused_by_read_and_validate(ephys, value):
    """The checks of tables read each column's type: one that is no name is our UnknownTypeError for read(),
    and validate reports it (a list used to end validate with a TypeError: unhashable)."""
    from hdmf_zarr3 import UnknownTypeError

    edit(ephys, "/intervals/trials/start_time", _set("attributes", "neurodata_type", value=value))
    with pytest.raises(UnknownTypeError) as raised:
        read_everything(ephys, nwb=True)  # (validate_agrees: validate reports a problem, without failing)
    assert raised.value.path == "/intervals/trials/start_time"


# --- issue #38: a DynamicTableRegion huge by its metadata is checked against its table in bounded memory --------
REGION = "/acquisition/es/electrodes"


def _huge_region(f, fill_value, chunk) -> None:
    """Make the electrodes region of the ephys file declare 2**33 int64 rows (64 GiB) in chunks of ``chunk`` rows,
    none stored, every one read as ``fill_value``."""
    from hdmf_zarr3.format.vocabulary import ALL_CHUNKS_ATTR

    def change(doc):
        _array(shape=[2**33], chunks=[chunk])(doc)
        doc["fill_value"] = fill_value
        doc["attributes"].pop(ALL_CHUNKS_ATTR, None)

    edit(f, REGION, change)
    for stored in (f / REGION.strip("/")).glob("c*"):
        stored.unlink()


@pytest.mark.parametrize("chunk", [1, 2**20, 2**33], ids=["chunks-of-one", "chunks-of-2**20", "one-chunk"])
@pytest.mark.parametrize(
    "fill_value,warning",
    [
        (0, r"has 8589934592 rows: only the first (16384|67108864) were checked"),
        (-1, r"values \[-1 -1 .*out of bounds"),
        (3, r"values \[3 3"),
    ],
    ids=["in-range", "negative", "past-the-table"],
)
def test_a_region_huge_by_its_metadata_is_read_in_bounded_memory(ephys, fill_value, warning, chunk):
    """HDMF checks a region's indices against its table by reading the region whole while read() builds the
    containers: 64 GiB for this file of a few KiB. Read in blocks instead: the file reads (HDMF only warns about
    indices out of range on read), the indices out of range named as HDMF names them, or the part left unchecked
    past REGION_CHECK_LIMIT said; validate (which builds the containers too) reports the region, as bounded."""
    from bounded_calls import error_within

    from hdmf_zarr3 import NWBZarrIO
    from hdmf_zarr3.inspection import validate

    _huge_region(ephys, fill_value, chunk)
    io = NWBZarrIO(ephys, mode="r")
    try:
        with pytest.warns(UserWarning, match=warning):
            assert error_within(io.read, seconds=20, memory=256 * 2**20) is None
        region = io.read().acquisition["es"].electrodes
        assert region.data.shape == (2**33,) and region.table.name == "electrodes"
    finally:
        io.close()
    reports = []
    with pytest.warns(UserWarning, match=warning):
        assert error_within(lambda: reports.append(validate(str(ephys))), seconds=20, memory=256 * 2**20) is None
    assert any(p.path == REGION and "64.0 GiB" in p.message for p in reports[0].problems), reports[0].problems


def test_a_region_read_is_still_checked_against_its_table(ephys, tmp_path):
    """The legitimate case: a region whose stored index is past its table still gets HDMF's warning on read,
    naming the index; a new region made from data read from Zarr is still refused (HDMF's IndexError)."""
    import zarr
    from hdmf.common import DynamicTable, DynamicTableRegion

    from hdmf_zarr3 import NWBZarrIO

    zarr.open_array(ephys / REGION.strip("/"), mode="r+")[...] = np.array([0, 7])
    with NWBZarrIO(ephys, mode="r") as io:
        with pytest.warns(UserWarning, match=r"DynamicTableRegion values \[7\] are out of bounds"):
            data = io.read().acquisition["es"].electrodes.data
        assert data[:].tolist() == [0, 7]
        table = DynamicTable(name="t", description="three rows", id=[0, 1, 2])
        with pytest.raises(IndexError, match=r"DynamicTableRegion values \[7\] are out of bounds .*'t'"):
            DynamicTableRegion(name="r", data=data, description="r", table=table)
        assert DynamicTableRegion(name="r", data=data, description="r", table=table, validate_data=False)
