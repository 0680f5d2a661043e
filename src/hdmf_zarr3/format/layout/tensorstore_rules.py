"""Which Zarr v3 array documents TensorStore's ``zarr3`` driver opens, and why it refuses the others.

dandi-cli (0.81) validates every array of a Zarr v3 asset by opening it with TensorStore's ``zarr3``
driver (``ts.open({"driver": "zarr3", ...}, read=True)``); an array it cannot open is the error
``zarr.tensorstore_cannot_open`` and ``dandi upload`` refuses the asset. Opening reads only the
array's ``zarr.json``, so the decision is a function of that document: :func:`refusal` gives it
without TensorStore, rule by rule as TensorStore 0.1.86 parses the metadata (each rule was checked
against that TensorStore on a document that breaks only it; ``tests/format/test_tensorstore_rules.py``,
and ``tests/cli/test_dandi_agreement.py`` against the real dandi-cli):

- ``data_type``: one of TensorStore's types (``bool``, ``int2``/``int4``/``int8``..``int64``,
  ``uint8``..``uint64``, the ``float8_*``/``float4_e2m1fn`` types, ``float16``, ``bfloat16``,
  ``float32``, ``float64``, ``complex64``, ``complex128``, ``r<N>``); no ``string``, no ``struct``,
  no ``uint2``/``uint4`` (dandi-cli issue #1918: TensorStore has no variable-length strings);
- ``fill_value`` of that type (a JSON boolean for ``bool``, an integer in range for integers, a number,
  ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` or a ``0x`` hex string for floats, a pair for complex, a
  base64 string for ``r<N>``);
- ``chunk_grid`` ``regular`` with positive chunk sizes, ``chunk_key_encoding`` ``default`` or ``v2``;
- ``codecs`` only ``transpose``, ``bytes``, ``blosc``, ``gzip``, ``zstd``, ``crc32c`` and
  ``sharding_indexed`` (inside a shard too), with an array-to-bytes codec (``bytes`` or sharding);
  ``blosc`` with its whole configuration (``cname``, ``clevel``, ``shuffle``, ``blocksize``, and
  ``typesize`` when shuffling);
- no ``storage_transformers``; ``attributes`` an object; any other member ``{"must_understand": false}``.
"""

from __future__ import annotations

import re
from typing import Any

from ..vocabulary import SHARDING_CODEC

#: TensorStore 0.1.86's own list, from its error message for an unknown data type.
DATA_TYPES = frozenset(
    "bool int2 int4 int8 uint8 int16 uint16 int32 uint32 int64 uint64 float8_e3m4 float8_e4m3fn "
    "float8_e4m3fnuz float8_e4m3b11fnuz float8_e5m2 float8_e5m2fnuz float8_e8m0fnu float4_e2m1fn "
    "float16 bfloat16 float32 float64 complex64 complex128".split()
)
CODECS = frozenset({"transpose", "bytes", "blosc", "gzip", "zstd", "crc32c", SHARDING_CODEC})
ARRAY_TO_BYTES = frozenset({"bytes", SHARDING_CODEC})
KNOWN_MEMBERS = frozenset(
    {
        "zarr_format",
        "node_type",
        "shape",
        "data_type",
        "chunk_grid",
        "chunk_key_encoding",
        "fill_value",
        "codecs",
        "attributes",
        "dimension_names",
        "storage_transformers",
    }
)
_RAW = re.compile(r"r(\d+)")
_FLOAT_WORDS = frozenset({"NaN", "Infinity", "-Infinity"})
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def refusal(doc: Any) -> str | None:
    """Why TensorStore's zarr3 driver refuses to open the array described by ``doc`` (None: it opens it)."""
    if not isinstance(doc, dict):
        return "its zarr.json is not a JSON object"
    for rule in (_members, _data_type, _fill_value, _grid, _key_encoding, _codecs):
        reason = rule(doc)
        if reason is not None:
            return reason
    return None


def _members(doc: dict[str, Any]) -> str | None:
    if doc.get("zarr_format") != 3 or doc.get("node_type") != "array":
        return "it is not a Zarr v3 array"
    if not isinstance(doc.get("shape"), list) or not all(_natural(n) for n in doc["shape"]):
        return "its shape is not a list of non-negative integers"
    if doc.get("storage_transformers"):
        return "it has storage_transformers (TensorStore supports none)"
    if "attributes" in doc and not isinstance(doc["attributes"], dict):
        return "its attributes are not a JSON object"
    for name, value in doc.items():
        if name not in KNOWN_MEMBERS and not (isinstance(value, dict) and value.get("must_understand") is False):
            return f'its metadata member "{name}" is not marked {{"must_understand": false}}'
    return None


def _type_name(doc: dict[str, Any]) -> Any:
    data_type = doc.get("data_type")
    return data_type.get("name") if isinstance(data_type, dict) else data_type


def _data_type(doc: dict[str, Any]) -> str | None:
    name = _type_name(doc)
    if name in DATA_TYPES:
        return None
    raw = _RAW.fullmatch(name) if isinstance(name, str) else None
    if raw is not None and int(raw.group(1)) > 0 and int(raw.group(1)) % 8 == 0:
        return None
    return f"data type {name!r}: TensorStore reads only numeric, bool and raw (r<N>) types"


def _fill_value(doc: dict[str, Any]) -> str | None:
    name, fill = _type_name(doc), doc.get("fill_value")
    if name == "bool":
        ok = isinstance(fill, bool)
    elif name.startswith(("int", "uint")):
        ok = _int_in_range(fill, name)
    elif name.startswith(("float", "bfloat")):
        ok = _float_fill(fill)
    elif name.startswith("complex"):
        ok = isinstance(fill, list) and len(fill) == 2 and all(_float_fill(v) for v in fill)
    else:  # r<N>
        ok = isinstance(fill, str) and _BASE64.fullmatch(fill) is not None
    return None if ok else f"fill value {fill!r} is not a {name} value as TensorStore reads it"


def _int_in_range(value: Any, name: str) -> bool:
    if isinstance(value, bool) or not isinstance(value, int):
        return False
    bits = int(name.removeprefix("u").removeprefix("int"))
    low, high = (0, 2**bits - 1) if name.startswith("u") else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    return low <= value <= high


def _float_fill(value: Any) -> bool:
    if isinstance(value, str):
        return value in _FLOAT_WORDS or _HEX.fullmatch(value) is not None
    return isinstance(value, int | float) and not isinstance(value, bool)


def _grid(doc: dict[str, Any]) -> str | None:
    grid = doc.get("chunk_grid")
    if not isinstance(grid, dict) or grid.get("name") != "regular":
        return "its chunk grid is not 'regular' (the only one TensorStore reads)"
    chunks = (grid.get("configuration") or {}).get("chunk_shape")
    if not isinstance(chunks, list) or len(chunks) != len(doc["shape"]) or not all(_positive(n) for n in chunks):
        return "its chunk shape is not one positive integer per dimension"
    return None


def _key_encoding(doc: dict[str, Any]) -> str | None:
    encoding = doc.get("chunk_key_encoding")
    name = encoding.get("name") if isinstance(encoding, dict) else None
    if name not in ("default", "v2"):
        return f"chunk key encoding {name!r}: TensorStore reads 'default' and 'v2'"
    return None


def _codecs(doc: dict[str, Any]) -> str | None:
    return _codec_chain(doc.get("codecs"), doc)


def _codec_chain(chain: Any, doc: dict[str, Any]) -> str | None:
    if not isinstance(chain, list):
        return "its codecs are not a list"
    names = []
    for codec in chain:
        name = codec.get("name") if isinstance(codec, dict) else codec
        names.append(name)
        if name not in CODECS:
            return f"codec {name!r} is not registered in TensorStore (it has {', '.join(sorted(CODECS))})"
        config = codec.get("configuration") or {} if isinstance(codec, dict) else {}
        if name == "blosc":
            reason = _blosc(config)
            if reason is not None:
                return reason
        if name == SHARDING_CODEC:
            for key in ("codecs", "index_codecs"):
                reason = _codec_chain(config.get(key), doc)
                if reason is not None:
                    return reason
    if not ARRAY_TO_BYTES & set(names):
        return f"its codecs have no array-to-bytes codec ('bytes' or {SHARDING_CODEC!r})"
    return None


def _blosc(config: dict[str, Any]) -> str | None:
    missing = [key for key in ("cname", "clevel", "shuffle", "blocksize") if key not in config]
    if config.get("shuffle", "noshuffle") != "noshuffle" and "typesize" not in config:
        missing.append("typesize")
    return f"its blosc codec lacks {', '.join(missing)} (TensorStore requires them)" if missing else None


def _natural(n: Any) -> bool:
    return isinstance(n, int) and not isinstance(n, bool) and n >= 0


def _positive(n: Any) -> bool:
    return _natural(n) and n > 0
