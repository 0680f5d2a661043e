"""``format.layout.tensorstore_rules.refusal`` decides, from an array's ``zarr.json`` alone, what TensorStore's
``zarr3`` driver decides when dandi-cli opens the array: each document below breaks one rule (or none),
and the real TensorStore (pinned in the test extra, the version dandi-cli 0.81 installs) is asked too."""

from __future__ import annotations

import copy
import json

import pytest

from hdmf_zarr3.format.layout.tensorstore_rules import refusal

ts = pytest.importorskip("tensorstore")

BASE = {
    "zarr_format": 3,
    "node_type": "array",
    "shape": [4],
    "data_type": "float64",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
    "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
    "fill_value": 0,
    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
    "attributes": {},
}
BYTES = [{"name": "bytes", "configuration": {"endian": "little"}}]
BLOSC = {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 8, "blocksize": 0}


def _shard(inner, index=BYTES):
    return [
        {
            "name": "sharding_indexed",
            "configuration": {"chunk_shape": [2], "codecs": inner, "index_codecs": index, "index_location": "end"},
        }
    ]


CASES = {
    "numeric": {},
    "string": {"data_type": "string", "fill_value": "", "codecs": [{"name": "vlen-utf8"}]},
    "struct": {
        "data_type": {"name": "struct", "configuration": {"fields": [{"name": "a", "data_type": "int32"}]}},
        "fill_value": None,
    },
    "unknown type": {"data_type": "foo"},
    "uint4": {"data_type": "uint4", "codecs": [{"name": "bytes"}]},
    "int4": {"data_type": "int4", "codecs": [{"name": "bytes"}]},
    "bfloat16": {"data_type": "bfloat16"},
    "complex": {"data_type": "complex64", "fill_value": [0, "NaN"]},
    "bool": {"data_type": "bool", "fill_value": False, "codecs": [{"name": "bytes"}]},
    "bool fill 0": {"data_type": "bool", "fill_value": 0, "codecs": [{"name": "bytes"}]},
    "raw r16": {"data_type": "r16", "fill_value": "AAA="},
    "raw r16 list fill": {"data_type": "r16", "fill_value": [0, 0]},
    "fill NaN": {"fill_value": "NaN"},
    "fill -Infinity": {"fill_value": "-Infinity"},
    "fill hex": {"fill_value": "0x7ff8000000000000"},
    "fill null": {"fill_value": None},
    "fill word": {"fill_value": "abc"},
    "int fill 1.5": {"data_type": "int32", "fill_value": 1.5},
    "uint8 fill 300": {"data_type": "uint8", "fill_value": 300, "codecs": [{"name": "bytes"}]},
    "int64 fill -1": {"data_type": "int64", "fill_value": -1},
    "v2 keys": {"chunk_key_encoding": {"name": "v2", "configuration": {"separator": "."}}},
    "dot keys": {"chunk_key_encoding": {"name": "default", "configuration": {"separator": "."}}},
    "other keys": {"chunk_key_encoding": {"name": "foo"}},
    "rectilinear grid": {"chunk_grid": {"name": "rectilinear", "configuration": {"chunk_shapes": [[2, 2]]}}},
    "zero chunk": {"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [0]}}},
    "gzip": {"codecs": [*BYTES, {"name": "gzip", "configuration": {"level": 5}}]},
    "zstd": {"codecs": [*BYTES, {"name": "zstd", "configuration": {"level": 3, "checksum": False}}]},
    "blosc": {"codecs": [*BYTES, {"name": "blosc", "configuration": BLOSC}]},
    "blosc no typesize": {"codecs": [*BYTES, {"name": "blosc", "configuration": {**BLOSC, "typesize": None}}]},
    "blosc no blocksize": {
        "codecs": [*BYTES, {"name": "blosc", "configuration": {k: v for k, v in BLOSC.items() if k != "blocksize"}}]
    },
    "blosc noshuffle, no typesize": {
        "codecs": [*BYTES, {"name": "blosc", "configuration": {**BLOSC, "shuffle": "noshuffle", "typesize": None}}]
    },
    "crc32c": {"codecs": [*BYTES, {"name": "crc32c"}]},
    "transpose": {"codecs": [{"name": "transpose", "configuration": {"order": [0]}}, *BYTES]},
    "numcodecs.zlib": {"codecs": [*BYTES, {"name": "numcodecs.zlib", "configuration": {"level": 1}}]},
    "numcodecs.shuffle": {"codecs": [{"name": "numcodecs.shuffle", "configuration": {}}, *BYTES]},
    "no serializer": {"codecs": [{"name": "gzip", "configuration": {"level": 5}}]},
    "sharding": {
        "shape": [8],
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8]}},
        "codecs": _shard(BYTES),
    },
    "sharding, zlib inside": {
        "shape": [8],
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8]}},
        "codecs": _shard([*BYTES, {"name": "numcodecs.zlib", "configuration": {"level": 1}}]),
    },
    "storage transformer": {"storage_transformers": [{"name": "foo"}]},
    "no storage transformers": {"storage_transformers": []},
    "dimension names": {"dimension_names": [None]},
    "extension, must_understand false": {"foo": {"must_understand": False}},
    "extension": {"foo": 1},
    "attributes a list": {"attributes": [1]},
    "no attributes": {"attributes": None},
    "0-d": {"shape": [], "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": []}}},
    "empty": {"shape": [0]},
}


def _document(changes):
    doc = copy.deepcopy(BASE)
    for key, value in changes.items():
        if value is None and key != "fill_value":
            doc.pop(key, None)
        else:
            doc[key] = value
    for codec in doc["codecs"]:  # (None in a blosc configuration: the member is left out)
        config = codec.get("configuration") if isinstance(codec, dict) else None
        if isinstance(config, dict):
            codec["configuration"] = {k: v for k, v in config.items() if v is not None}
    return doc


def _tensorstore_opens(tmp_path, doc) -> bool:
    (tmp_path / "zarr.json").write_text(json.dumps(doc))
    try:
        ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp_path)}}, read=True).result()
    except Exception:  # (TensorStore raises ValueError for every refusal)
        return False
    return True


@pytest.mark.parametrize("name", CASES)
def test_refusal_agrees_with_tensorstore(name, tmp_path):
    doc = _document(CASES[name])
    reason = refusal(doc)
    assert (reason is None) == _tensorstore_opens(tmp_path, doc), reason


def test_strings_and_structs_are_refused_with_the_reason():
    assert "data type 'string'" in refusal(_document(CASES["string"]))
    assert "data type 'struct'" in refusal(_document(CASES["struct"]))
    assert "numcodecs.zlib" in refusal(_document(CASES["numcodecs.zlib"]))
