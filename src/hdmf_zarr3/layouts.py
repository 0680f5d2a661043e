"""Choose the chunks and codecs of one array from what the caller and the source say.

Priority: explicit settings on the data's ``DataIO`` (chunks, compression), then the layout of an
HDF5 dataset being copied (export from HDF5), then the defaults of :mod:`.format.documents`.
"""

from __future__ import annotations

import warnings
from typing import Any

from .errors import LayoutWarning, UnsupportedDataError
from .format import dtypes as D
from .format.hdf5_layout import HDF5Layout, ZarrLayout, zarr_layout

_NAMED = {"gzip", "lzf", "szip", "shuffle", "fletcher32", "scaleoffset"}


def from_h5py(dset: Any) -> HDF5Layout:
    """The storage layout of an ``h5py.Dataset``."""
    plugins = {}
    for key, cd in (getattr(dset, "_filters", None) or {}).items():
        if key not in _NAMED:
            try:
                plugins[int(key)] = tuple(cd or ())
            except (TypeError, ValueError):
                plugins[-1] = ()
    return HDF5Layout(chunks=dset.chunks, compression=dset.compression, compression_opts=dset.compression_opts,
                      shuffle=bool(dset.shuffle), fletcher32=bool(dset.fletcher32), scaleoffset=dset.scaleoffset,
                      plugin_filters=plugins)


def from_io_settings(settings: dict[str, Any]) -> HDF5Layout | None:
    """The layout asked for by ``H5DataIO``-style settings, if they ask for anything."""
    compression = settings.get("compression")
    if compression is True:
        compression = "gzip"
    chunks = settings.get("chunks")
    if not any([compression, isinstance(chunks, (tuple, list)), settings.get("shuffle"), settings.get("fletcher32")]):
        return None
    return HDF5Layout(chunks=tuple(chunks) if isinstance(chunks, (tuple, list)) else None,
                      compression=compression if isinstance(compression, str) else None,
                      compression_opts=settings.get("compression_opts"), shuffle=bool(settings.get("shuffle")),
                      fletcher32=bool(settings.get("fletcher32")), scaleoffset=settings.get("scaleoffset"))


def choose(path: str, storage: D.StorageType, shape: tuple[int, ...], settings: dict[str, Any],
           source: Any = None) -> ZarrLayout:
    """Chunks and codecs for the array at ``path`` (``None`` entries mean the defaults)."""
    if settings.get("zarr"):
        return from_zarr_settings(path, storage, shape, settings)
    layout = from_io_settings(settings)
    if layout is None and source is not None and _is_h5py(source):
        layout = from_h5py(source)
    if layout is None:
        return ZarrLayout(None, None)
    result = zarr_layout(layout, storage, shape)
    for message in result.warnings:
        warnings.warn(f"{path}: {message}", LayoutWarning, stacklevel=3)
    return result


def _is_h5py(obj: Any) -> bool:
    return type(obj).__module__.startswith("h5py")


def from_zarr_settings(path: str, storage: D.StorageType, shape: tuple[int, ...],
                       settings: dict[str, Any]) -> ZarrLayout:
    """The layout a ``ZarrDataIO`` asks for, checked against the dataset's shape."""
    from .format import documents as docs

    ndim = len(shape)
    chunks, shards = settings.get("chunks"), settings.get("shards")
    for name, value in (("chunks", chunks), ("shards", shards)):
        if value is not None and len(value) != ndim:
            raise UnsupportedDataError(f"{name} {tuple(value)} do not fit a {ndim}-d dataset of shape {shape}", path)
    if ndim == 0 and shards is not None:
        raise UnsupportedDataError("a scalar dataset cannot be sharded", path)
    inner = tuple(chunks) if chunks is not None else docs.default_chunks(shape, storage)
    defaults = docs.default_codecs(storage)
    serializer = settings.get("serializer") or defaults[0]
    compressors = settings.get("compressors")
    compressors = defaults[1:] if compressors is None else compressors
    codecs = [*settings.get("filters", []), serializer, *[_with_typesize(c, storage) for c in compressors]]
    if shards is not None:
        index = [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]
        codecs = [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(inner), "codecs": codecs, "index_codecs": index, "index_location": "end"}}]
        return ZarrLayout(tuple(shards), codecs, fill_value=settings.get("fill_value"),
                          dimension_names=settings.get("dimension_names"))
    return ZarrLayout(inner, codecs, fill_value=settings.get("fill_value"),
                      dimension_names=settings.get("dimension_names"))


def _with_typesize(codec: dict[str, Any], storage: D.StorageType) -> dict[str, Any]:
    """Blosc shuffles by element size; zarr fills it in from the dtype, so do we."""
    if codec.get("name") != "blosc" or storage.kind not in ("numeric", "struct"):
        return codec
    config = dict(codec.get("configuration", {}))
    config["typesize"] = storage.numpy_dtype.itemsize
    return {**codec, "configuration": config}
