"""Choose the chunks and codecs of one array from what the caller and the source say.

Priority: explicit settings on the data's ``DataIO`` (chunks, compression), then the layout of an
HDF5 dataset being copied (export from HDF5), then the defaults of :mod:`.format.documents`.
"""

from __future__ import annotations

import warnings
from typing import Any

from .errors import LayoutWarning
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
