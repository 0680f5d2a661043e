"""The text forms of a conversion's layout settings: shapes (``30000,64``) and codecs (``zstd:5``).

``convert()`` accepts these strings as well as the command line, so they are parsed here, beside the
typed :class:`~.relayout.Relayout` they become: pure rules, no I/O (the module lived in ``h5py_adapters``
until issue #39, though it holds nothing of h5py). (The command line's ``/PATH=VALUE`` form is parsed in
:mod:`hdmf_zarr3.cli.convert_command`.)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ...errors import UnsupportedDataError
from .relayout import AUTO

#: Compressor names :func:`parse_codec` knows as ``blosc-CNAME``, besides JSON documents.
BLOSC_CNAMES = ("lz4", "lz4hc", "zstd", "zlib", "blosclz")


def parse_shape(text: str, allow: Sequence[str] = (AUTO,)) -> tuple[int, ...] | str | None:
    """``"30000,64"`` → ``(30000, 64)``; the words in ``allow`` (``auto``, ``none``) as themselves."""
    word = text.strip().lower()
    if word in allow:
        return None if word == "none" else word
    try:
        shape = tuple(int(p) for p in word.split(","))
    except ValueError:
        raise UnsupportedDataError(f"expected a shape like 30000,64 or one of {list(allow)}, got {text!r}") from None
    if not shape or any(s < 1 for s in shape):
        raise UnsupportedDataError(f"a shape holds positive integers, got {text!r}")
    return shape


def parse_codec(text: str) -> list[dict[str, Any]] | str:
    """Compressors from ``zstd[:LEVEL]``, ``gzip[:LEVEL]``, ``blosc[-CNAME][:LEVEL]``, ``none``,
    ``auto`` (the data type's default codecs: returned as ``"auto"``) or JSON.

    Blosc uses bit-shuffle (the default layout's choice); JSON gives full control: one codec
    document or a list of them.
    """
    text = text.strip()
    if text.startswith(("{", "[")):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UnsupportedDataError(f"codec JSON does not parse: {exc}") from None
        value = value if isinstance(value, list) else [value]
        if not all(isinstance(v, dict) and isinstance(v.get("name"), str) for v in value):
            raise UnsupportedDataError(f"codec JSON must be codec documents with a name, got {text!r}")
        return value
    name, _, level_text = text.lower().partition(":")
    try:
        level = int(level_text) if level_text else None
    except ValueError:
        raise UnsupportedDataError(f"codec level must be an integer, got {level_text!r} in {text!r}") from None
    if name in ("none", AUTO) and level is None:
        return [] if name == "none" else AUTO
    if name == "zstd":
        return [{"name": "zstd", "configuration": {"level": 3 if level is None else level, "checksum": False}}]
    if name == "gzip":
        return [{"name": "gzip", "configuration": {"level": 5 if level is None else level}}]
    family, _, cname = name.partition("-")
    if family == "blosc" and (cname or "lz4") in BLOSC_CNAMES:
        return [
            {
                "name": "blosc",
                "configuration": {
                    "cname": cname or "lz4",
                    "clevel": 5 if level is None else level,
                    "shuffle": "bitshuffle",
                    "blocksize": 0,
                },
            }
        ]
    raise UnsupportedDataError(
        f"unknown codec {text!r}: use auto, none, zstd[:LEVEL], gzip[:LEVEL], "
        f"blosc[-{'|'.join(BLOSC_CNAMES)}][:LEVEL] or a JSON codec document"
    )
