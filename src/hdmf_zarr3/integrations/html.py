"""HTML description of datasets for Jupyter (``Container._repr_html_`` via ``ZarrIO.generate_dataset_html``).

A dataset read by us and a plain ``zarr.Array`` are both titled "Zarr Array" and show zarr's name of
their data type (``Float32``, ``VariableLengthUTF8``), their chunks, shards, codecs and sizes; anything
else is titled with its type and said not to be a Zarr array. Every text shown (names, paths, values,
codec options) is HTML-escaped: names and values come from files, which may be hostile.
"""

from __future__ import annotations

from html import escape
from typing import Any, Literal

import numpy as np

from ..format.vocabulary import ArrayView

#: Arrays up to this many (logical) bytes also show their values, as HDMF's own table does.
PREVIEW_BYTES = 100


def _size(n: int) -> str:
    value = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.2f} {unit}" if unit != "bytes" else f"{int(value)} bytes"
        value /= 1024
    return f"{n} bytes"


def _sizes(logical: int, stored: Any) -> dict[str, str]:
    """Logical and stored size and their ratio (``stored`` a callable that may fail: a store that
    cannot list its keys)."""
    out = {"Logical size": _size(logical)}
    try:
        nbytes = int(stored())
    except Exception:  # listing may be refused or unsupported by the store
        return out
    out["Stored size"] = _size(nbytes)
    out["Compression ratio"] = f"{logical / nbytes:.2f}" if nbytes else "undefined"
    return out


def _zarr_type_name(data_type: Any, zarr_format: Literal[2, 3]) -> str:
    """zarr's name of a data type given as stored (``Float32`` for ``"float32"``), and the stored name."""
    from zarr.dtype import data_type_registry

    stored = (
        data_type
        if isinstance(data_type, str)
        else data_type.get("name", "?")
        if isinstance(data_type, dict)
        else str(data_type)
    )
    try:
        name = type(data_type_registry.match_json(data_type, zarr_format=zarr_format)).__name__
    except Exception:  # a type zarr does not know: its stored name says it all
        return stored
    return f"{name} ({stored})"


def describe(dataset: Any) -> dict[str, Any]:
    """Storage details of one of our datasets: chunks, shards, codecs, logical and stored bytes."""
    doc = dataset.document
    view = ArrayView.from_document(doc)
    if doc.get("zarr_format") == 2:
        data_type = f"{doc.get('dtype')} (Zarr v2)"
    else:
        data_type = _zarr_type_name(doc["data_type"], 3)
    info = {
        "Path": dataset.path,
        "Shape": dataset.shape,
        "Data type": dataset.dtype,
        "Zarr data type": data_type,
        "HDMF dtype (zarr_dtype)": dataset.storage.zarr_dtype,
        "Chunk shape": view.read_chunks,
        "Shard shape": view.shards,
        "Codecs": ", ".join(str(c.get("name", "?")) for c in view.inner_codecs),
    }
    return info | _sizes(dataset.nbytes, lambda: dataset.dataset.nbytes_stored())


def _codec_name(codec: Any) -> str:
    name = getattr(codec, "codec_id", None)  # numcodecs (Zarr v2) codecs
    if name is None:
        try:
            name = codec.to_dict()["name"]
        except Exception:  # a codec without a JSON form
            name = type(codec).__name__
    return str(name)


def describe_zarr_array(array: Any) -> dict[str, Any]:
    """The same details for a plain ``zarr.Array``."""
    metadata = array.metadata
    data_type = getattr(metadata, "data_type", None) or getattr(metadata, "dtype", None)
    codecs = [*array.filters, *([array.serializer] if array.serializer is not None else []), *array.compressors]
    info = {
        "Path": "/" + array.path.strip("/"),
        "Shape": array.shape,
        "Data type": array.dtype,
        "Zarr data type": type(data_type).__name__ if data_type is not None else str(array.dtype),
        "Zarr format": metadata.zarr_format,
        "Chunk shape": array.chunks,
        "Shard shape": array.shards,
        "Codecs": ", ".join(_codec_name(c) for c in codecs),
        "Fill value": array.fill_value,
        "Store": type(array.store).__name__,
    }
    return info | _sizes(int(array.nbytes), array.nbytes_stored)


def _basic(data: Any) -> dict[str, Any]:
    info: dict[str, Any] = {}
    for key, attribute in (("Shape", "shape"), ("Data type", "dtype")):
        value = getattr(data, attribute, None)
        if value is not None:
            info[key] = value
    nbytes = getattr(data, "nbytes", None)
    if isinstance(nbytes, (int, np.integer)):
        info["Array size"] = _size(int(nbytes))
    return info


def _preview(data: Any, nbytes: Any) -> str | None:
    """The values of a small array, or ``None`` (large, or not readable now: a closed file)."""
    if not isinstance(nbytes, (int, np.integer)) or nbytes > PREVIEW_BYTES:
        return None
    try:
        return str(data[()])
    except Exception:  # a closed file, a remote store that fails: the table still says the rest
        return None


def render(title: str, info: dict[str, Any], preview: str | None = None) -> str:
    """``title`` and a two-column table of ``info`` (and ``preview``), every text HTML-escaped."""
    rows = "".join(
        f'<tr><th style="text-align: left">{escape(str(key))}</th>'
        f'<td style="text-align: left">{escape(str(value))}</td></tr>'
        for key, value in info.items()
    )
    html = f'<b>{escape(title)}</b><br><table class="data-info"><tbody>{rows}</tbody></table>'
    if preview is not None:
        html += f"<pre>{escape(preview)}</pre>"
    return html


def dataset_html(dataset: Any, dataset_type: type[Any]) -> str:
    """The HTML of ``ZarrIO.generate_dataset_html``: ours (instances of ``dataset_type``, the backend's lazy
    dataset class, passed in because this adapter sits below the backend) and zarr's arrays described,
    anything else named with a note that it is not a Zarr array."""
    import zarr

    if isinstance(dataset, dataset_type):
        # references would be resolved to whole builders: only plain values are previewed
        plain = dataset.storage.kind in ("numeric", "string", "struct")
        return render(
            "Zarr Array (hdmf_zarr3)", describe(dataset), _preview(dataset, dataset.nbytes) if plain else None
        )
    if isinstance(dataset, zarr.Array):  # the synchronous array zarr.open hands out
        return render("Zarr Array", describe_zarr_array(dataset), _preview(dataset, dataset.nbytes))
    return render(
        f"{type(dataset).__name__} (not a Zarr array)",
        _basic(dataset),
        _preview(dataset, getattr(dataset, "nbytes", None)),
    )
