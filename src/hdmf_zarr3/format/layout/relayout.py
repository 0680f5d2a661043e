"""New chunks, shards and codecs for the arrays a conversion copies (``convert --chunks/--shards/--codec``).

A conversion keeps every array's layout unless told otherwise: a Zarr source keeps its chunk and
shard shapes and compressors, an HDF5 source its chunking and filters (see :mod:`.hdf5_layout`). A
:class:`Relayout` says what to change, per array path or for every array (the key ``"*"``):

- ``chunks``: a shape, or ``"auto"`` for the default of :mod:`.layout_policy`;
- ``shards``: a shape (whole multiples of the chunks), ``"auto"`` (the policy: large arrays only) or
  ``None`` (no shards). Shards kept from the source that no longer fit new chunks follow the policy;
- ``codec``: the compressors (bytes-to-bytes codecs) as JSON documents, ``[]`` to store chunks raw,
  or ``"auto"`` for the default codecs of each array's data type.

``chunks="auto"``, ``shards="auto"``, ``codec="auto"`` for every array repacks a file into the
default layout.

Scalars are never re-chunked. Everything here is pure: it rewrites layouts, never touches a store.
The text forms of these settings (``30000,64``, ``zstd:5``, ``blosc-lz4``) are parsed above the
format, by :mod:`.relayout_text` (``convert()`` and the command line accept them) and
:mod:`hdmf_zarr3.cli.convert_command` (``/PATH=VALUE``, the command line's only).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...errors import UnsupportedDataError
from ..vocabulary import ArrayView, StorageType, split_sharding
from . import policy
from .policy import default_codecs, with_blosc_typesize
from .types import ZarrLayout

#: The rule key that applies to every array no path-specific rule names.
EVERY = "*"
AUTO = "auto"
#: Array-to-bytes codecs: what comes before them in a chain is kept when compressors change.
SERIALIZERS = frozenset({"bytes", "vlen-utf8", "vlen-bytes", "numcodecs.vlen-utf8", "numcodecs.vlen-bytes"})


@dataclass(frozen=True)
class Relayout:
    """What to change in the layout of copied arrays; each mapping is keyed by array path or ``"*"``."""

    chunks: Mapping[str, tuple[int, ...] | str] = field(default_factory=dict)
    shards: Mapping[str, tuple[int, ...] | str | None] = field(default_factory=dict)
    codec: Mapping[str, list[dict[str, Any]] | str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.chunks or self.shards or self.codec)

    def paths(self) -> set[str]:
        """The array paths rules name (each must exist in the file converted)."""
        return {p for rules in (self.chunks, self.shards, self.codec) for p in rules if p != EVERY}

    def apply(self, path: str, storage: StorageType, shape: Sequence[int], layout: ZarrLayout) -> ZarrLayout:
        """``layout`` (as chosen without this relayout) of the array at ``path``, changed by the rules."""
        chunk_rule, shard_rule, codec_rule = (_rule(r, path) for r in (self.chunks, self.shards, self.codec))
        if chunk_rule is _KEEP and shard_rule is _KEEP and codec_rule is _KEEP:
            return layout
        shape = tuple(int(s) for s in shape)
        if not shape:  # one chunk, never sharded: only its compressors can change
            if path in self.chunks or path in self.shards:
                raise UnsupportedDataError("a scalar dataset has no chunks or shards to change", path)
            if codec_rule is _KEEP:
                return layout
            codecs = _recompressed(layout.codecs or default_codecs(storage), codec_rule, storage)
            return ZarrLayout((), codecs, list(layout.warnings), layout.fill_value, layout.dimension_names)
        grid = tuple(layout.chunks or policy.chunk_shape(shape, storage))
        inner, stored_codecs, shards = split_sharding(grid, tuple(layout.codecs or default_codecs(storage)))
        codecs = list(stored_codecs)
        if chunk_rule is not _KEEP:
            # "auto" is the default layout's chunk, which is smaller when the array will be sharded
            if shard_rule is _KEEP:
                sharded = shards is not None
            elif shard_rule == AUTO:
                sharded = policy.sharded_by_default(shape, storage)
            else:
                sharded = shard_rule is not None
            inner = (
                policy.chunk_shape(shape, storage, sharded=sharded)
                if chunk_rule == AUTO
                else _fit(chunk_rule, shape, "chunks", path)
            )
        if codec_rule is not _KEEP:
            codecs = _recompressed(codecs, codec_rule, storage)
        if shard_rule is _KEEP:
            if shards is not None and any(s % c for s, c in zip(shards, inner)):
                shards = policy.shard_shape(shape, inner, storage)
        elif shard_rule == AUTO:
            shards = policy.shard_shape(shape, inner, storage)
        elif shard_rule is None:
            shards = None
        else:
            shards = _fit(shard_rule, shape, "shards", path)
            if any(s % c for s, c in zip(shards, inner)):
                raise UnsupportedDataError(f"shards {shards} must be whole multiples of chunks {inner}", path)
        if shards is not None and tuple(shards) != tuple(inner):
            return ZarrLayout(
                tuple(shards),
                [policy.sharding_codec(inner, codecs)],
                list(layout.warnings),
                layout.fill_value,
                layout.dimension_names,
            )
        return ZarrLayout(tuple(inner), codecs, list(layout.warnings), layout.fill_value, layout.dimension_names)


_KEEP = object()


def kept_layout(doc: dict[str, Any], storage: StorageType) -> ZarrLayout:
    """The layout a copy of the array ``doc`` describes keeps: chunks, shards and compressors.

    Codecs are kept when the source serializes as this package does for the data type (``bytes``
    for numbers, ``vlen-utf8`` for text) with no filters; otherwise the copy gets the default
    codecs in the kept chunks and shards. A Zarr v2 source keeps its chunk shape only.
    """
    if doc.get("zarr_format") == 2:
        chunks = doc.get("chunks")
        return ZarrLayout(tuple(int(c) for c in chunks) if chunks else None, None)
    view = ArrayView.from_document(doc)
    grid, inner, inner_codecs = view.chunk_grid, view.read_chunks, list(view.inner_codecs)
    defaults = default_codecs(storage)
    if inner_codecs[:1] == defaults[:1] or (
        inner_codecs and inner_codecs[0].get("name") == defaults[0]["name"] == "bytes"
    ):
        kept = [defaults[0], *inner_codecs[1:]]
    else:
        kept = defaults
    if grid != inner:
        return ZarrLayout(grid, [policy.sharding_codec(inner, kept)])
    return ZarrLayout(grid, kept)


def _rule(rules: Mapping[str, Any], path: str) -> Any:
    if path in rules:
        return rules[path]
    return rules.get(EVERY, _KEEP)


def _fit(value: Sequence[int], shape: tuple[int, ...], name: str, path: str) -> tuple[int, ...]:
    if len(value) != len(shape):
        raise UnsupportedDataError(f"{name} {tuple(value)} do not fit a {len(shape)}-d dataset of shape {shape}", path)
    return tuple(int(v) for v in value)


def _recompressed(
    codecs: list[dict[str, Any]], rule: list[dict[str, Any]] | str, storage: StorageType
) -> list[dict[str, Any]]:
    if isinstance(rule, str):  # AUTO, the only text a rule holds
        return default_codecs(storage)
    return [*_until_serializer(codecs), *(with_blosc_typesize(c, storage) for c in rule)]


def _until_serializer(codecs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The filters and the serializer of a codec chain (everything before its compressors)."""
    for i, codec in enumerate(codecs):
        if codec.get("name") in SERIALIZERS:
            return list(codecs[: i + 1])
    return list(codecs)
