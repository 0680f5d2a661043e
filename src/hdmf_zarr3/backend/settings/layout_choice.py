"""Choose the chunks and codecs of one array from what the caller and the source say.

Priority: explicit settings on the data's ``DataIO`` (chunks, compression), then the layout of an
HDF5 dataset being copied (export from HDF5), then the defaults of :mod:`.format.layout.policy`.
Large arrays are sharded by the policy unless a ``ZarrDataIO`` says otherwise.

A ``ZarrDataIO``'s settings are a :class:`ZarrSettings`; :meth:`ZarrSettings.layout` is the one place they
are completed (defaults, shards) and checked by zarr against a dataset's data type and shape, once per
dataset: ``ZarrDataIO`` asks when it knows them, the writer when it writes, and the second gets the first's
answer.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace
from typing import Any

from hdmf.build import GroupBuilder

from ...errors import LayoutWarning, UnsupportedDataError
from ...format.documents import zarr_json as docs
from ...format.layout import HDF5Layout, Relayout, ZarrLayout, kept_layout, policy, zarr_layout
from ...format.vocabulary import dtypes
from ...format.vocabulary import names as node_names
from ...h5py_adapters import dataset_filters
from ...storage.codecs import array_check

#: ``ZarrDataIO(shards=POLICY)``, the default: shard when the layout policy says so.
POLICY = "policy"
#: ``ZarrDataIO(shards=AUTO)``: always shard, with zarr's own automatic shard shape (:func:`zarr_auto_shards`).
AUTO = "auto"

_NAMED = {"gzip", "lzf", "szip", "shuffle", "fletcher32", "scaleoffset"}


@dataclass(frozen=True)
class ZarrSettings:
    """A ``ZarrDataIO``'s storage settings, each of the type zarr takes (checked when given).

    Attributes
    ----------
    chunks : tuple of int or None
        The chunk shape; ``None``: the policy's.
    shards : tuple of int, "policy", "auto" or None
        The shard shape, or how it is chosen (see ``ZarrDataIO``).
    compressors : list of dict or None
        The bytes-to-bytes codecs in their JSON forms; ``None``: the default, ``[]``: none.
    filters, serializer : list of dict, dict or None
        The array-to-array codecs and the array-to-bytes codec (``None``: the default).
    fill_value, dimension_names
        As given (``None``: the default).
    settled : list
        ``(storage, shape, auto_shards, layout)`` of every dataset laid out so far (each checked once).
    """

    chunks: tuple[int, ...] | None = None
    shards: tuple[int, ...] | str | None = POLICY
    compressors: list[dict[str, Any]] | None = None
    filters: list[dict[str, Any]] | None = None
    serializer: dict[str, Any] | None = None
    fill_value: Any = None
    dimension_names: list[str | None] | None = None
    settled: list[tuple[Any, tuple[int, ...], bool, ZarrLayout]] = field(
        default_factory=list, compare=False, repr=False
    )

    def layout(
        self, path: str | None, storage: dtypes.StorageType, shape: tuple[int, ...], auto_shards: bool = True
    ) -> ZarrLayout:
        """The layout of a dataset of ``storage`` and ``shape`` stored with these settings: completed by the
        policy and checked by zarr (an :class:`UnsupportedDataError` naming ``path`` if zarr refuses it), once;
        the same dataset asked for again gets the same layout. ``auto_shards=False``: the policy does not
        shard (shards given still apply)."""
        for known_storage, known_shape, known_auto, known in self.settled:
            if known_shape == shape and known_auto == auto_shards and known_storage == storage:
                return known
        settings = self if auto_shards or self.shards != POLICY else replace(self, shards=None)
        result = checked(path, storage, shape, from_zarr_settings(path, storage, shape, settings))
        self.settled.append((storage, shape, auto_shards, result))
        return result


def from_h5py(dset: Any) -> HDF5Layout:
    """The storage layout of an ``h5py.Dataset``."""
    plugins = {}
    for key, cd in dataset_filters(dset).items():
        if key not in _NAMED:
            try:
                plugins[int(key)] = tuple(cd or ())
            except (TypeError, ValueError):
                plugins[-1] = ()
    return HDF5Layout(
        chunks=dset.chunks,
        compression=dset.compression,
        compression_opts=dset.compression_opts,
        shuffle=bool(dset.shuffle),
        fletcher32=bool(dset.fletcher32),
        scaleoffset=dset.scaleoffset,
        plugin_filters=plugins,
    )


def from_io_settings(settings: dict[str, Any]) -> HDF5Layout | None:
    """The layout asked for by ``H5DataIO``-style settings, if they ask for anything."""
    compression = settings.get("compression")
    if compression is True:
        compression = "gzip"
    chunks = settings.get("chunks")
    if not any([compression, isinstance(chunks, (tuple, list)), settings.get("shuffle"), settings.get("fletcher32")]):
        return None
    return HDF5Layout(
        chunks=tuple(chunks) if isinstance(chunks, (tuple, list)) else None,
        compression=compression if isinstance(compression, str) else None,
        compression_opts=settings.get("compression_opts"),
        shuffle=bool(settings.get("shuffle")),
        fletcher32=bool(settings.get("fletcher32")),
        scaleoffset=settings.get("scaleoffset"),
    )


def choose(
    path: str,
    storage: dtypes.StorageType,
    shape: tuple[int, ...],
    settings: ZarrSettings | dict[str, Any],
    source: Any = None,
    auto_shards: bool = True,
    relayout: Relayout | None = None,
) -> ZarrLayout:
    """Chunks and codecs for the array at ``path`` (``None`` entries mean the defaults).

    ``auto_shards=False`` keeps the policy from sharding (explicit ``ZarrDataIO`` shards still apply).
    A ``relayout`` (a conversion's ``--chunks/--shards/--codec``) changes the result last. Settings a
    caller chose are checked by zarr against the data type (:func:`checked`), once
    (:meth:`ZarrSettings.layout`); ``settings`` of another ``DataIO`` (``H5DataIO``'s) are a dict.
    """
    if isinstance(settings, ZarrSettings) and not relayout:
        return settings.layout(path, storage, shape, auto_shards)
    result = _choose(path, storage, shape, settings, source, auto_shards)
    if relayout:
        result = relayout.apply(path, storage, shape, result)
    return checked(path, storage, shape, result) if isinstance(settings, ZarrSettings) or relayout else result


def checked(path: str | None, storage: dtypes.StorageType, shape: tuple[int, ...], layout: ZarrLayout) -> ZarrLayout:
    """``layout`` once zarr has parsed the array document it gives (an :class:`UnsupportedDataError`
    naming ``path`` if zarr refuses it), with its codecs and fill value as they are stored."""
    fill = None if layout.fill_value is None else array_check.fill_value_json(layout.fill_value, storage, path)
    try:
        doc = docs.array_document(
            shape,
            storage,
            {},
            chunks=layout.chunks,
            codecs=layout.codecs,
            dimension_names=layout.dimension_names,
            fill_value=fill,
        )
    except UnsupportedDataError as exc:
        if exc.path is not None or path is None:
            raise
        raise UnsupportedDataError(str(exc), path) from None
    codecs = array_check.zarr_codecs(doc, path)
    return replace(layout, codecs=codecs if layout.codecs is not None else None, fill_value=fill)


def _choose(
    path: str,
    storage: dtypes.StorageType,
    shape: tuple[int, ...],
    settings: ZarrSettings | dict[str, Any],
    source: Any,
    auto_shards: bool,
) -> ZarrLayout:
    if isinstance(settings, ZarrSettings):
        if not auto_shards and settings.shards == POLICY:
            settings = replace(settings, shards=None)
        return from_zarr_settings(path, storage, shape, settings)
    layout = from_io_settings(settings)
    if layout is None and isinstance(getattr(source, "document", None), dict) and shape:
        return kept_layout(source.document, storage)  # a Zarr array copied: its layout stays
    if layout is None and source is not None and _is_h5py(source):
        layout = from_h5py(source)
    result = ZarrLayout(None, None) if layout is None else zarr_layout(layout, storage, shape)
    for message in result.warnings:
        warnings.warn(f"{path}: {message}", LayoutWarning, stacklevel=4)
    return with_default_shards(result, storage, shape) if auto_shards else result


def with_default_shards(layout: ZarrLayout, storage: dtypes.StorageType, shape: tuple[int, ...]) -> ZarrLayout:
    """``layout`` grouped into shards when the policy shards an array of this size."""
    sharded = policy.sharded_by_default(shape, storage)
    chunks = layout.chunks or policy.chunk_shape(shape, storage, sharded=sharded)
    shards = policy.shard_shape(shape, chunks, storage)
    if shards is None:
        return layout
    codecs = layout.codecs or docs.default_codecs(storage)
    return replace(layout, chunks=shards, codecs=[policy.sharding_codec(chunks, codecs)])


def _is_h5py(obj: Any) -> bool:
    return type(obj).__module__.startswith("h5py")


def from_zarr_settings(
    path: str | None, storage: dtypes.StorageType, shape: tuple[int, ...], settings: ZarrSettings
) -> ZarrLayout:
    """The layout a ``ZarrDataIO`` asks for, checked against the dataset's shape (not yet by zarr: see
    :meth:`ZarrSettings.layout`)."""
    ndim = len(shape)
    chunks, shards = settings.chunks, settings.shards
    for name, value in (("chunks", chunks), ("shards", shards)):
        if value is not None and value not in (AUTO, POLICY) and len(value) != ndim:
            raise UnsupportedDataError(f"{name} {tuple(value)} do not fit a {ndim}-d dataset of shape {shape}", path)
    if ndim == 0 and shards not in (None, AUTO, POLICY):
        raise UnsupportedDataError("a scalar dataset cannot be sharded", path)
    sharded = shards == POLICY and policy.sharded_by_default(shape, storage)
    inner = tuple(chunks) if chunks is not None else policy.chunk_shape(shape, storage, sharded=sharded)
    if chunks is None and shards is not None and not isinstance(shards, str):  # inner chunks tiling the shards
        inner = tuple(_divisor_at_most(s, c) for s, c in zip(shards, inner))
    defaults = docs.default_codecs(storage)
    serializer = settings.serializer or defaults[0]
    compressors = defaults[1:] if settings.compressors is None else settings.compressors
    codecs = [*(settings.filters or []), serializer, *[docs.with_blosc_typesize(c, storage) for c in compressors]]
    layout = ZarrLayout(inner, codecs, fill_value=settings.fill_value, dimension_names=settings.dimension_names)
    if shards == POLICY:
        return with_default_shards(layout, storage, shape)
    if shards == AUTO:
        shards = zarr_auto_shards(shape, inner, policy.itemsize(storage)) if ndim else None
    if shards is not None and not isinstance(shards, str):
        return replace(layout, chunks=tuple(shards), codecs=[policy.sharding_codec(inner, codecs)])
    return layout


def _divisor_at_most(n: int, limit: int) -> int:
    """The largest divisor of ``n`` that is at most ``limit`` (1 at worst)."""
    return next(d for d in range(min(n, max(1, limit)), 0, -1) if n % d == 0)


def zarr_auto_shards(shape: tuple[int, ...], chunks: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    """The shard shape zarr's ``create_array(shards="auto")`` chooses for ``chunks`` (zarr 3's rule, which it
    keeps private): with zarr's ``array.target_shard_size_bytes`` setting, as many chunks along every axis
    as fit that size (and the array); without it, two chunks along each axis holding more than eight."""
    import zarr

    target = zarr.config.get("array.target_shard_size_bytes", None)
    if target is None:
        return tuple(c * 2 if s // c > 8 else c for s, c in zip(shape, chunks))
    chunk_bytes = math.prod(chunks) * itemsize
    per_axis = 1
    if 0 < chunk_bytes <= target:
        while chunk_bytes * (per_axis + 1) ** len(chunks) <= target and all(
            c * (per_axis + 1) <= s for c, s in zip(chunks, shape)
        ):
            per_axis += 1
    return tuple(c * per_axis for c in chunks)


def check_relayout_paths(relayout: Relayout, root: GroupBuilder) -> None:
    """Every path a relayout names is a dataset of the tree (a typo must not pass silently)."""
    found: set[str] = set()
    stack = [("/", root)]
    while stack:
        path, group = stack.pop()
        stack.extend((node_names.join(path, g.name), g) for g in group.groups.values())
        found.update(node_names.join(path, d) for d in group.datasets)
    for path in sorted(relayout.paths() - found):
        raise UnsupportedDataError("no dataset at this path to re-chunk or re-compress", path)
