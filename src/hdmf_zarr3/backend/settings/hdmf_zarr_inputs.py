"""What ``ZarrDataIO`` takes from hdmf-zarr users: numcodecs codecs, h5py datasets, links to zarr arrays.

- A numcodecs codec (the Zarr v2-style objects older hdmf-zarr took) becomes the core Zarr v3 codec
  that stores the same bytes (``blosc``, ``zstd``, ``gzip``), or else zarr's own ``numcodecs.*``
  wrapper, which runs that very codec.
- An ``h5py.Dataset``'s chunks and filters become Zarr v3 codecs through
  :mod:`.format.layout.hdf5_filters`, the same mapping used when a file is exported from HDF5.
- A ``zarr.Array`` to be linked to must live in a store with a location (a directory, a zip or a
  URL) and below the root of that store: a link names a file and a path inside it.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ...errors import LayoutWarning, UnsafeCodecError, UnsupportedDataError

_BLOSC_SHUFFLE = {0: "noshuffle", 1: "shuffle", 2: "bitshuffle"}


def is_numcodecs_codec(obj: Any) -> bool:
    """True for a numcodecs (Zarr v2-style) codec object such as ``numcodecs.Blosc()``."""
    from numcodecs.abc import Codec

    return isinstance(obj, Codec)


def numcodecs_json(codec: Any) -> dict[str, Any]:
    """The Zarr v3 JSON form of a numcodecs codec (see the module docstring)."""
    config = dict(codec.get_config())
    cid = config.pop("id")
    if "pickle" in str(cid).lower():  # never written, whatever zarr happens to have registered
        raise UnsafeCodecError(
            f"codec {cid!r} stores pickles, which hdmf_zarr3 never writes; use a JSON or string dtype instead"
        )
    if cid == "blosc" and config.get("shuffle", 1) in _BLOSC_SHUFFLE:  # -1 (auto-shuffle) has no v3 spelling
        return {
            "name": "blosc",
            "configuration": {
                "cname": config.get("cname", "lz4"),
                "clevel": int(config.get("clevel", 5)),
                "shuffle": _BLOSC_SHUFFLE[config.get("shuffle", 1)],
                "blocksize": int(config.get("blocksize", 0)),
            },
        }
    if cid == "zstd" and set(config) <= {"level", "checksum"}:
        return {
            "name": "zstd",
            "configuration": {"level": int(config.get("level", 0)), "checksum": bool(config.get("checksum", False))},
        }
    if cid == "gzip" and set(config) <= {"level"}:
        return {"name": "gzip", "configuration": {"level": int(config.get("level", 1))}}
    return {"name": f"numcodecs.{cid}", "configuration": config}


def is_h5py_dataset(obj: Any) -> bool:
    """True for an ``h5py.Dataset`` (without importing h5py)."""
    cls = type(obj)
    return cls.__module__.startswith("h5py") and cls.__name__ == "Dataset"


def hdf5_codecs(dset: Any) -> list[Any]:
    """The Zarr v3 bytes-to-bytes codecs (compressor, checksum) closest to ``dset``'s HDF5 filters.

    Filters with no Zarr v3 equivalent are left out, each with a :class:`LayoutWarning`. An empty list
    means no HDF5 filter maps (the writer then uses its default compressor).
    """
    from zarr.registry import get_codec_class

    from ...format.layout import zarr_layout
    from ...format.vocabulary import dtypes
    from .layout_choice import from_h5py

    if not is_h5py_dataset(dset):
        raise UnsupportedDataError(f"expected an h5py.Dataset, got {type(dset).__name__}")
    storage = dtypes.for_hdmf_dtype(dset.dtype, dset)
    layout = zarr_layout(from_h5py(dset), storage, tuple(dset.shape))
    for message in layout.warnings:
        warnings.warn(f"{dset.name}: {message}", LayoutWarning, stacklevel=3)
    codecs = (layout.codecs or [])[1:]  # the first is the serializer, which follows the data type
    return [get_codec_class(c["name"]).from_dict(c) for c in codecs]


def h5py_fill_value(dset: Any) -> Any:
    """``dset``'s HDF5 fill value as a ``ZarrDataIO`` takes it (``None`` for a compound's)."""
    value = dset.fillvalue
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, np.void) or (isinstance(value, np.ndarray) and value.dtype.names):
        return None  # a compound's fill value: zarr's default (zeros) is what HDF5 uses too
    return value


def is_zarr_array(obj: Any) -> bool:
    """True for a ``zarr.Array`` (the synchronous one zarr.open hands out)."""
    import zarr

    return isinstance(obj, zarr.Array)


def zarr_array_location(array: Any) -> tuple[str, str]:
    """The file (directory, zip or URL) holding ``array`` and the array's path inside it.

    Raises :class:`UnsupportedDataError` when there is no such file (an in-memory store) or the array
    is the whole store: there is nothing a link could name.
    """
    from zarr.storage import FsspecStore, LocalStore, ZipStore

    store = array.store
    if isinstance(store, LocalStore):
        location = str(store.root)
    elif isinstance(store, ZipStore):
        location = str(store.path)
    elif isinstance(store, FsspecStore):
        protocol = store.fs.protocol[0] if isinstance(store.fs.protocol, (tuple, list)) else store.fs.protocol
        location = f"{protocol}://{store.path}"
    else:
        raise UnsupportedDataError(
            f"link_data=True: the zarr array {array.path or '/'!r} is in a "
            f"{type(store).__name__}, which is no file a link can name; pass "
            "link_data=False to copy its values instead"
        )
    if not array.path:
        raise UnsupportedDataError(
            f"link_data=True: the zarr array is the root of {location!r}, not a dataset "
            "inside a file; pass link_data=False to copy its values instead"
        )
    return location, "/" + array.path.strip("/")


def root_object_id(array: Any) -> str | None:
    """The HDMF object id of the root of the file holding ``array`` (``None`` if it has none)."""
    import zarr

    try:
        root = zarr.open_group(store=array.store, path="", mode="r")
    except Exception:  # zarr raises GroupNotFoundError, FileNotFoundError... depending on the store
        return None
    oid = root.attrs.get("object_id")
    return oid if isinstance(oid, str) else None
