"""HTML description of datasets for Jupyter (``Container._repr_html_``)."""

from __future__ import annotations

from typing import Any

from hdmf.utils import generate_array_html_repr, get_basic_array_info

from .format.documents import grid_shape


def _size(n: int) -> str:
    value = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.2f} {unit}" if unit != "bytes" else f"{int(value)} bytes"
        value /= 1024
    return f"{n} bytes"


def describe(dataset: Any) -> dict[str, Any]:
    """Storage details of one of our datasets: chunks, shards, codecs, logical and stored bytes."""
    doc = dataset._doc
    codecs = doc.get("codecs", [])
    shards = None
    chunk_shape = grid_shape(doc)
    if codecs and codecs[0].get("name") == "sharding_indexed":
        shards = chunk_shape
        chunk_shape = tuple(codecs[0]["configuration"]["chunk_shape"])
        codecs = codecs[0]["configuration"].get("codecs", [])
    logical = dataset.nbytes
    try:
        stored = int(dataset.dataset.nbytes_stored())
    except Exception:  # a store that cannot list its keys
        stored = None
    info = {
        "Zarr data type": _data_type(doc),
        "HDMF dtype (zarr_dtype)": dataset.storage.zarr_dtype,
        "Chunk shape": chunk_shape,
        "Shard shape": shards,
        "Codecs": ", ".join(c.get("name", "?") for c in codecs),
        "Logical size": _size(logical),
    }
    if stored is not None:
        info["Stored size"] = _size(stored)
        info["Compression ratio"] = f"{logical / stored:.2f}" if stored else "undefined"
    return info


def dataset_html(dataset: Any) -> str:
    from .datasets import ZarrDataset

    info = get_basic_array_info(dataset)
    if isinstance(dataset, ZarrDataset):
        info.update(describe(dataset))
        return generate_array_html_repr(info, dataset, "Zarr v3 array")
    return generate_array_html_repr(info, dataset, type(dataset).__name__)


def _data_type(doc: dict[str, Any]) -> str:
    if doc.get("zarr_format") == 2:
        return f"{doc.get('dtype')} (Zarr v2)"
    return doc["data_type"] if isinstance(doc["data_type"], str) else doc["data_type"]["name"]
