"""Reserved names, the format version and path helpers."""

from __future__ import annotations

import posixpath

#: Name and version of this format; written to the root group's attributes.
FORMAT_ATTR = "hdmf_zarr3_format"
FORMAT_VERSION = "1.2"
#: The version of a file whose root's consolidated copy spells a compound as zarr-python 3.1 does
#: (``documents/struct_spelling``): 1.2 plus that spelling, which readers of 1.x do not know (they must refuse
#: the file, not fail on it); every other file stays 1.2, readable by them.
COMPOUND_COPY_FORMAT_VERSION = "2.0"
#: Major versions this implementation reads.
READABLE_MAJOR_VERSIONS = frozenset({"1", "2"})

#: Attribute on every dataset recording the HDMF dtype exactly.
DTYPE_ATTR = "zarr_dtype"
#: Attribute on a group listing the soft and external links it holds.
LINK_ATTR = "zarr_link"
#: Root attribute holding the path of the cached specifications group.
SPECLOC_ATTR = ".specloc"
#: Default location of the cached specifications.
SPEC_GROUP = "specifications"

#: Root attribute present while a write is in progress (see :mod:`.completion`).
INCOMPLETE_ATTR = "hdmf_zarr3_incomplete"
#: Attribute (``true``) of a 0-d array stored without a chunk: its value is its ``fill_value`` (:mod:`.chunkless`).
CHUNKLESS_ATTR = "hdmf_zarr3_chunkless"
#: Attribute (``true``) of an array whose every chunk inside its shape is stored, the fill value's too: a
#: chunk that is not there has gone missing (:mod:`.stored_chunks`).
ALL_CHUNKS_ATTR = "hdmf_zarr3_all_chunks_stored"
#: Root attribute of a repository with virtual chunks: each source file's URL, size and modification time
#: (``[{"location": ..., "size": ..., "mtime_ns": ...}]``, see ``storage/virtual_repo``).
VIRTUAL_SOURCES_ATTR = "hdmf_zarr3_virtual_sources"
#: Attribute of an array whose chunks are byte ranges of another file: ``{"location": <URL>, "chunks": n,
#: "copied": m}`` (the chunks read in place, and those copied because they could not be).
VIRTUAL_ATTR = "hdmf_zarr3_virtual"

RESERVED_ATTRS = frozenset(
    {
        DTYPE_ATTR,
        LINK_ATTR,
        SPECLOC_ATTR,
        FORMAT_ATTR,
        INCOMPLETE_ATTR,
        CHUNKLESS_ATTR,
        ALL_CHUNKS_ATTR,
        VIRTUAL_SOURCES_ATTR,
        VIRTUAL_ATTR,
    }
)

#: ``source`` of a link or reference whose target lives in the same file.
SAME_FILE = "."

#: Longest node name, in bytes of UTF-8: a name is a directory name, and file systems take at most 255.
MAX_NAME_BYTES = 255


def check_name(name: str, parent: str) -> None:
    """Refuse names that are not valid Zarr v3 node names or would clash with the store layout.

    Zarr v3 node names are non-empty, contain no ``/``, are not made of periods only and do not start
    with the reserved prefix ``__``; ``zarr.json`` would collide with the metadata document. A ``\\``
    would become a ``/`` in zarr-python's paths, and a NUL cannot be a file name. A name is a directory
    name, so it must be UTF-8 (no lone surrogates) of at most :data:`MAX_NAME_BYTES` bytes; checked
    while the tree is walked, the file is never left half written by a name the disk refuses.
    """
    from ...errors import InvalidNameError

    if not isinstance(name, str) or not name:
        raise InvalidNameError(f"invalid node name {name!r}: names must be non-empty strings", parent)
    if (
        "/" in name
        or "\\" in name
        or "\x00" in name
        or not name.strip(".")
        or name.startswith("__")
        or name == "zarr.json"
    ):
        raise InvalidNameError(
            f"invalid node name {name!r}: names may not contain '/', '\\' or NUL, be made of "
            "periods only, start with '__' or be 'zarr.json'",
            parent,
        )
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidNameError(
            f"invalid node name {name!r}: not encodable as UTF-8 (a lone surrogate)", parent
        ) from None
    if size > MAX_NAME_BYTES:
        raise InvalidNameError(
            f"invalid node name {name[:40]!r}... ({size} bytes of UTF-8): names may have at most "
            f"{MAX_NAME_BYTES} bytes, as file systems allow",
            parent,
        )


def check_node_path(path: str) -> None:
    """Refuse a node path read from a file (a store key, a consolidated member) that no writer of this format
    makes (:func:`check_name`): one holding a NUL, which no file system takes, or a lone surrogate, which no
    UTF-8 spells; ``CorruptStoreError`` naming it (escaped)."""
    from ...errors import CorruptStoreError

    problem: str | None = "a NUL" if "\x00" in path else None
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        problem = "a lone surrogate"
    if problem is not None:
        raise CorruptStoreError(f"a node path holds {problem}, which no node name holds", ascii(path)[1:-1])


def join(parent: str, name: str) -> str:
    """Join an absolute node path and a child name (``"/"`` is the root)."""
    return posixpath.join(parent, name) if parent != "/" else "/" + name


def normalize(path: str) -> str:
    """Return an absolute, normalized node path (``"/a/b"``; the root is ``"/"``)."""
    path = posixpath.normpath("/" + path.strip("/"))
    return "/" if path in ("/", "//") else path


def store_key(path: str, leaf: str) -> str:
    """Store key of ``leaf`` (e.g. ``zarr.json``) below the node at ``path``."""
    prefix = path.strip("/")
    return f"{prefix}/{leaf}" if prefix else leaf


def parse_version(version: str) -> tuple[str, str]:
    """Split ``"major.minor"`` into its two parts (missing minor is ``"0"``)."""
    major, _, minor = str(version).partition(".")
    return major, minor or "0"
