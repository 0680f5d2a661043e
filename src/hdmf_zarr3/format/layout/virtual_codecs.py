"""The Zarr v3 codec chain that decodes an HDF5 chunk's stored bytes as they are (virtual chunks).

A virtual chunk is a byte range of the HDF5 file itself, so the chain must read HDF5's bytes exactly:
this is not :mod:`.hdf5_layout`, which picks codecs to re-encode data. HDF5 applies its filters in
pipeline order when it writes a chunk (h5py's ``shuffle=True, compression="gzip"`` is shuffle, then
deflate) and undoes them in reverse when it reads; a Zarr v3 chain does the same after its array-to-bytes
codec, so the chain is the ``bytes`` codec (in the dataset's byte order) followed by one codec per
filter, in pipeline order:

================================  =========================================  ==============================
HDF5 filter (id)                  Zarr v3 codec                              why it reads HDF5's bytes
================================  =========================================  ==============================
deflate (1), level L              ``numcodecs.zlib`` level L                 HDF5 writes zlib streams
shuffle (2), element size E       ``numcodecs.shuffle`` elementsize E        the same byte transposition
fletcher32 (3)                    ``numcodecs.fletcher32``                   HDF5's checksum, appended
blosc (32001)                     ``numcodecs.blosc``, same settings          a blosc frame, self-describing
zstd (32015), level L             ``numcodecs.zstd`` level L                 a plain zstd frame
================================  =========================================  ==============================

Everything else is refused with the reason (:class:`NotVirtual`), and the dataset is then copied
instead: szip (4), n-bit (5) and scale-offset (6) have no Zarr codec; HDF5's LZ4 filter (32004) frames
its blocks differently from ``numcodecs.lz4``; bitshuffle (32008) and LZF (32000) have no codec zarr
registers. Pure: it works on what h5py reports (filter ids and their ``cd_values``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

DEFLATE, SHUFFLE, FLETCHER32, SZIP, NBIT, SCALEOFFSET = 1, 2, 3, 4, 5, 6
LZF, BLOSC, LZ4, BITSHUFFLE, ZSTD = 32000, 32001, 32004, 32008, 32015

_WHY_NOT = {
    SZIP: "szip has no Zarr v3 codec",
    NBIT: "the n-bit filter has no Zarr v3 codec",
    SCALEOFFSET: "the scale-offset filter has no Zarr v3 codec",
    LZF: "LZF has no codec zarr registers",
    LZ4: "HDF5's LZ4 filter frames its blocks differently from numcodecs.lz4",
    BITSHUFFLE: "bitshuffle has no codec zarr registers",
}
_BLOSC_NAMES = {0: "blosclz", 1: "lz4", 2: "lz4hc", 3: "snappy", 4: "zlib", 5: "zstd"}


@dataclass(frozen=True)
class NotVirtual:
    """Why a dataset's chunks cannot be read in place (it is copied instead)."""

    reason: str


@dataclass(frozen=True)
class Filter:
    """One stage of an HDF5 filter pipeline, as h5py's ``get_filter`` reports it."""

    id: int
    cd_values: tuple[int, ...] = ()


def virtual_codecs(filters: Sequence[Filter], dtype: np.dtype) -> list[dict[str, Any]] | NotVirtual:
    """The codec chain reading chunks that HDF5 stored through ``filters`` (in pipeline order), or why
    there is none.

    Parameters
    ----------
    filters : sequence of Filter
        The dataset's filter pipeline, first applied first.
    dtype : numpy.dtype
        The dataset's stored type: a fixed-size number (integers, floats, booleans) in either byte order.

    Returns
    -------
    list of dict or NotVirtual
        The Zarr v3 codecs (``bytes`` first), or the reason the chunks must be copied.
    """
    if dtype.kind not in "biuf" or dtype.fields is not None or dtype.subdtype is not None:
        return NotVirtual(f"its type {dtype} is not a fixed-size number (stored in our own encoding)")
    endian = "big" if dtype.byteorder == ">" else "little"
    chain: list[dict[str, Any]] = [{"name": "bytes", "configuration": {"endian": endian}}]
    for f in filters:
        codec = _codec(f, dtype)
        if isinstance(codec, NotVirtual):
            return codec
        chain.append(codec)
    return chain


def _codec(f: Filter, dtype: np.dtype) -> dict[str, Any] | NotVirtual:
    cd = tuple(int(v) for v in f.cd_values)
    if f.id == DEFLATE:
        return {"name": "numcodecs.zlib", "configuration": {"level": cd[0] if cd else 6}}
    if f.id == SHUFFLE:
        return {"name": "numcodecs.shuffle", "configuration": {"elementsize": cd[0] if cd else dtype.itemsize}}
    if f.id == FLETCHER32:
        return {"name": "numcodecs.fletcher32", "configuration": {}}
    if f.id == ZSTD:
        return {"name": "numcodecs.zstd", "configuration": {"level": cd[0] if cd else 0, "checksum": False}}
    if f.id == BLOSC:
        # cd_values: filter revision, blosc version, type size, chunk bytes, level, shuffle, compressor;
        # a blosc frame says how it was made, so these only describe it
        level = cd[4] if len(cd) > 4 else 5
        shuffle = cd[5] if len(cd) > 5 else 1
        cname = _BLOSC_NAMES.get(cd[6] if len(cd) > 6 else 0, "blosclz")
        return {
            "name": "numcodecs.blosc",
            "configuration": {"cname": cname, "clevel": level, "shuffle": shuffle, "blocksize": 0},
        }
    return NotVirtual(_WHY_NOT.get(f.id, f"the HDF5 filter {f.id} has no Zarr v3 codec"))
