"""What an HDMF/NWB Zarr file holds: its groups with their neurodata types, its arrays with their storage.

:func:`info` reads only metadata (the node documents, and the listing of each array's stored objects for
its stored size), never chunks. ``hdmf-zarr3 info`` prints its :class:`FileInfo` as a tree, or as JSON
(:meth:`FileInfo.to_dict`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..backend.datasets import ZarrDataset
from ..backend.zarrio import ZarrIO
from ..format.documents import completion
from ..format.vocabulary import SPECLOC_ATTR, VIRTUAL_ATTR

#: Attributes that name a node's HDMF type (NWB and hdmf-common).
TYPE_ATTRS = ("neurodata_type", "data_type")


@dataclass(frozen=True)
class VirtualChunks:
    """Where the chunks of an array converted with ``convert(..., virtual=True)`` are read from.

    Attributes
    ----------
    location : str or None
        The URL of the HDF5 file its chunks are read from, in place.
    chunks : int or None
        How many chunks are read from there.
    copied : int or None
        How many chunks were copied into the repository instead.

    A value the file records with another type is ``None``.
    """

    location: str | None
    chunks: int | None
    copied: int | None

    @classmethod
    def from_attribute(cls, record: dict[str, Any]) -> VirtualChunks:
        """The record as the file stores it (the ``hdmf_zarr3_virtual`` attribute)."""
        location, chunks, copied = (record.get(k) for k in ("location", "chunks", "copied"))
        return cls(location if isinstance(location, str) else None, _count(chunks), _count(copied))

    def to_dict(self) -> dict[str, Any]:
        return {"location": self.location, "chunks": self.chunks, "copied": self.copied}


@dataclass(frozen=True)
class NodeInfo:
    """One group or array of a file, as :func:`info` describes it.

    Attributes
    ----------
    path : str
        Its absolute path inside the file ("/" for the root).
    kind : {"group", "array"}
    neurodata_type : str or None
        ``namespace:type`` (``core:TimeSeries``) when the node has an HDMF type.
    shape : tuple of int or None
        An array's shape (``None`` for a group).
    dtype : str or None
        An array's HDMF dtype (``float64``, ``text``, ``{x: int32, y: float64}`` for a compound).
    chunks : tuple of int or None
        The chunk shape (inside shards when sharded); ``None`` for a group, and for an array of objects
        written by hdmf-zarr <= 0.13, which has no zarr array whose storage could be described.
    shards : tuple of int or None
        The shard shape, ``None`` when the array is not sharded.
    codecs : tuple of str
        The names of the codecs of each chunk, in order (empty for a group).
    virtual : VirtualChunks or None
        For an array whose chunks are read in place from an HDF5 file.
    logical_bytes : int or None
        An array's size in memory, as numpy counts it.
    stored_bytes : int or None
        What the array's metadata and chunks take in the store (``None`` when the store cannot list them).
    """

    path: str
    kind: Literal["group", "array"]
    neurodata_type: str | None = None
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    chunks: tuple[int, ...] | None = None
    shards: tuple[int, ...] | None = None
    codecs: tuple[str, ...] = ()
    virtual: VirtualChunks | None = None
    logical_bytes: int | None = None
    stored_bytes: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The node as JSON-ready data (one node of ``hdmf-zarr3 info --json``): only what it has."""
        out: dict[str, Any] = {"path": self.path, "kind": self.kind}
        if self.neurodata_type is not None:
            out["type"] = self.neurodata_type
        if self.kind != "array":
            return out
        out |= {"shape": list(self.shape or ()), "dtype": self.dtype}
        if self.chunks is None:  # an array of objects: no storage to describe
            return out
        out |= {
            "chunks": list(self.chunks),
            "shards": list(self.shards) if self.shards is not None else None,
            "codecs": list(self.codecs),
        }
        if self.virtual is not None:
            out["virtual"] = self.virtual.to_dict()
        return out | {"logical_bytes": self.logical_bytes, "stored_bytes": self.stored_bytes}


@dataclass(frozen=True)
class FileInfo:
    """What :func:`info` found in a file.

    Attributes
    ----------
    path : str
        The file, as given.
    convention : str
        The convention it is written in (``hdmf_zarr3``, ``hdmf-zarr 0.14``, ...; ``ZarrIO.dialect``).
    incomplete : str or None
        What did not finish when the file's last write did not (opened with ``allow_incomplete=True``).
    nodes : tuple of NodeInfo
        Every group and array, sorted by path (parents before their members).
    """

    path: str
    convention: str
    incomplete: str | None
    nodes: tuple[NodeInfo, ...]
    _by_path: dict[str, NodeInfo] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_path", {n.path: n for n in self.nodes})  # frozen: set once, here

    def node(self, path: str) -> NodeInfo:
        """The node at ``path`` ("/acquisition/ts", also without the leading "/").

        Raises
        ------
        KeyError
            When the file has no such node (or it is one of the cached specifications left out).
        """
        return self._by_path["/" + path.strip("/")]

    def to_dict(self) -> dict[str, Any]:
        """Everything as JSON-ready data (what ``hdmf-zarr3 info --json`` prints)."""
        return {
            "path": self.path,
            "convention": self.convention,
            "incomplete": self.incomplete,
            "nodes": [n.to_dict() for n in self.nodes],
        }


def info(
    path: str | Path,
    storage_options: dict[str, Any] | None = None,
    specifications: bool = False,
    allow_incomplete: bool = False,
) -> FileInfo:
    """The groups and arrays of the HDMF/NWB Zarr file at ``path``, with the storage of every array.

    Parameters
    ----------
    path : str or Path
        The file: a directory, a ``.zip``, an icechunk repository or a URL, in any convention
        :class:`~hdmf_zarr3.ZarrIO` reads.
    storage_options : dict, optional
        Options of a remote store (as for :class:`~hdmf_zarr3.ZarrIO`).
    specifications : bool, default False
        Include the specifications cached in the file (left out by default).
    allow_incomplete : bool, default False
        Describe a file whose last write did not finish (``FileInfo.incomplete`` says what did not);
        without it such a file raises :class:`~hdmf_zarr3.IncompleteFileError`.

    Returns
    -------
    FileInfo
        The file's convention and one :class:`NodeInfo` per group and array.
    """
    with ZarrIO(path, mode="r", storage_options=storage_options, allow_incomplete=allow_incomplete) as io:
        documents = io.documents
        specloc = documents.get("/", {}).get("attributes", {}).get(SPECLOC_ATTR)
        hidden = "/" + specloc.strip("/") if isinstance(specloc, str) and not specifications else None
        nodes = tuple(
            _node(io, p, documents[p])
            for p in sorted(documents)
            if hidden is None or not (p == hidden or p.startswith(hidden + "/"))
        )
        mark = io.store_handle.incomplete()
        return FileInfo(str(path), io.dialect, completion.describe(mark) if mark is not None else None, nodes)


def _node(io: ZarrIO, path: str, doc: dict[str, Any]) -> NodeInfo:
    attrs = doc.get("attributes", {})
    found = next((attrs[key] for key in TYPE_ATTRS if isinstance(attrs.get(key), str)), None)
    neurodata_type = f"{attrs.get('namespace', '?')}:{found}" if found is not None else None
    if doc["node_type"] != "array":
        return NodeInfo(path, "group", neurodata_type)
    layout = io.array_layout(path)
    dataset = ZarrDataset(io.dataset_context, path, doc, layout)
    array = NodeInfo(path, "array", neurodata_type, tuple(dataset.shape), _dtype(layout.storage.zarr_dtype))
    if layout.objects:  # hdmf-zarr <= 0.13 object arrays: no zarr array to ask
        return array
    view = dataset.array_view
    virtual = attrs.get(VIRTUAL_ATTR)
    try:
        stored: int | None = int(dataset.dataset.nbytes_stored())
    except Exception:  # a store that cannot list its keys
        stored = None
    return NodeInfo(
        path,
        "array",
        neurodata_type,
        array.shape,
        array.dtype,
        tuple(view.read_chunks),
        tuple(view.shards) if view.shards else None,
        tuple(str(c.get("name", "?")) for c in view.inner_codecs),
        VirtualChunks.from_attribute(virtual) if isinstance(virtual, dict) else None,  # convert --virtual
        int(dataset.nbytes),
        stored,
    )


def _dtype(zarr_dtype: Any) -> str:
    if isinstance(zarr_dtype, list):  # compound: its fields
        return "{" + ", ".join(f"{f.get('name')}: {_dtype(f.get('dtype'))}" for f in zarr_dtype) + "}"
    if isinstance(zarr_dtype, dict):
        return str(zarr_dtype.get("target_type") or zarr_dtype.get("name") or zarr_dtype)
    return str(zarr_dtype)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
