"""HDF5 storage layouts and the Zarr v3 codec chains they become (and back).

Chunk shapes carry over unchanged. HDF5 filters map to core Zarr v3 codecs where one exists:

==============================  ==========================================================
HDF5 (h5py / hdf5plugin)        Zarr v3
==============================  ==========================================================
gzip level L                    ``gzip`` level L
gzip level L + shuffle          ``blosc`` cname ``zlib``, clevel L, ``shuffle`` (deflate after
                                byte shuffling, as HDF5 does it; core Zarr v3 has no
                                stand-alone shuffle codec)
blosc (filter 32001)            ``blosc`` with the same compressor, level and shuffle
zstd (filter 32015)             ``zstd`` with the same level
lz4 (filter 32004)              ``blosc`` cname ``lz4``, no shuffle
bitshuffle (filter 32008)       ``blosc``, ``bitshuffle``, cname ``zstd`` at the same level
                                when bitshuffle compressed with zstd, else ``lz4``
fletcher32                      ``crc32c`` (a checksum, verified on read)
lzf, szip, scale-offset, other  not mapped: the default codec is used and a warning says so
==============================  ==========================================================

Going back to HDF5, ``gzip`` and ``blosc``/``zlib`` return as gzip (with shuffle when it was on);
any other codec becomes gzip level 4 with shuffle, the usual NWB setting, since core HDF5 has no
other lossless compressor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..vocabulary import StorageType
from .policy import blosc_typesize, default_codecs
from .types import ZarrLayout

_BLOSC_FILTER, _LZ4_FILTER, _BITSHUFFLE_FILTER, _ZSTD_FILTER = 32001, 32004, 32008, 32015
_BITSHUFFLE_ZSTD = 3
_BLOSC_NAMES = {0: "blosclz", 1: "lz4", 2: "lz4hc", 3: "snappy", 4: "zlib", 5: "zstd"}
_BLOSC_SHUFFLE = {0: "noshuffle", 1: "shuffle", 2: "bitshuffle"}


@dataclass
class HDF5Layout:
    """What h5py reports about how one dataset is stored."""

    chunks: tuple[int, ...] | None = None
    compression: str | None = None
    compression_opts: Any = None
    shuffle: bool = False
    fletcher32: bool = False
    scaleoffset: Any = None
    plugin_filters: dict[int, tuple] = field(default_factory=dict)  # filter id -> cd_values


def _serializer(storage: StorageType) -> dict[str, Any]:
    if storage.kind in ("string", "reference", "rows"):
        return {"name": "vlen-utf8", "configuration": {}}
    return {"name": "bytes", "configuration": {"endian": "little"}}


def _blosc(storage: StorageType, cname: str, clevel: int, shuffle: str) -> dict[str, Any]:
    return {
        "name": "blosc",
        "configuration": {
            "cname": cname,
            "clevel": int(clevel),
            "shuffle": shuffle,
            "typesize": blosc_typesize(storage),
            "blocksize": 0,
        },
    }


def zarr_layout(layout: HDF5Layout, storage: StorageType, shape: tuple[int, ...]) -> ZarrLayout:
    """The Zarr v3 chunks and codecs closest to an HDF5 dataset's layout."""
    chunks = tuple(layout.chunks) if layout.chunks and len(layout.chunks) == len(shape) else None
    warnings: list[str] = []
    compressor: dict[str, Any] | None = None
    if layout.compression == "gzip":
        level = int(layout.compression_opts if layout.compression_opts is not None else 4)
        compressor = (
            _blosc(storage, "zlib", level, "shuffle")
            if layout.shuffle
            else {"name": "gzip", "configuration": {"level": level}}
        )
    elif layout.compression in ("lzf", "szip"):
        warnings.append(f"HDF5 filter {layout.compression!r} has no Zarr v3 equivalent; using the default codec")
    for fid, cd in layout.plugin_filters.items():
        if fid == _BLOSC_FILTER and len(cd) >= 7:
            compressor = _blosc(storage, _BLOSC_NAMES.get(cd[6], "lz4"), cd[4], _BLOSC_SHUFFLE.get(cd[5], "shuffle"))
        elif fid == _ZSTD_FILTER:
            compressor = {"name": "zstd", "configuration": {"level": int(cd[0]) if cd else 3, "checksum": False}}
        elif fid == _LZ4_FILTER:
            compressor = _blosc(storage, "lz4", 5, "noshuffle")
        elif fid == _BITSHUFFLE_FILTER:
            # cd_values (as HDF5 completes them): version, version, element size, block size, compression
            # (0 none, 2 lz4, 3 zstd), zstd level
            zstd = len(cd) >= 5 and cd[4] == _BITSHUFFLE_ZSTD
            compressor = _blosc(
                storage, "zstd" if zstd else "lz4", int(cd[5]) if zstd and len(cd) >= 6 else 5, "bitshuffle"
            )
        else:
            warnings.append(f"HDF5 filter {fid} has no Zarr v3 equivalent; using the default codec")
    if layout.scaleoffset is not None:
        warnings.append("HDF5 scale-offset filter is not carried over; values are stored as read")
    if compressor is None and not layout.fletcher32:
        return ZarrLayout(chunks, None, warnings)
    codecs = [_serializer(storage)] + ([compressor] if compressor else default_codecs(storage)[1:])
    if layout.fletcher32:
        codecs.append({"name": "crc32c"})
    return ZarrLayout(chunks, codecs, warnings)


def hdf5_settings(codecs: list[dict[str, Any]], chunks: tuple[int, ...]) -> dict[str, Any]:
    """``H5DataIO`` keyword arguments for a Zarr array with these codecs and chunks.

    For a sharded array pass the inner chunks and codecs: HDF5 chunks are its read unit.
    """
    names = {c.get("name"): c.get("configuration", {}) for c in codecs}
    settings: dict[str, Any] = {"chunks": tuple(chunks)} if chunks else {}
    if "gzip" in names:
        settings.update(compression="gzip", compression_opts=int(names["gzip"].get("level", 4)))
    elif "blosc" in names and names["blosc"].get("cname") == "zlib":
        settings.update(
            compression="gzip",
            compression_opts=int(names["blosc"].get("clevel", 4)),
            shuffle=names["blosc"].get("shuffle") == "shuffle",
        )
    else:
        settings.update(compression="gzip", compression_opts=4, shuffle=True)
    if "crc32c" in names:
        settings["fletcher32"] = True
    return settings
