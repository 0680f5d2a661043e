"""The shared model of the dialects (:mod:`hdmf_zarr3.format.dialects`): :class:`ArrayLayout`,
:class:`Dialect` and its hdmf-zarr base, and the write :class:`Convention`. The dialects themselves import
it from here, and the package re-exports it, so no dialect imports the package that picks among them."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np

from ...errors import CorruptStoreError
from ..data import Reference, decode_element, decode_row, encode_attribute, encode_links, encode_values
from ..documents import limits
from ..layout import chunkless_document, marked, one_object_keys
from ..vocabulary import (
    CHUNKLESS_ATTR,
    DTYPE_ATTR,
    FORMAT_ATTR,
    FORMAT_VERSION,
    LINK_ATTR,
    SAME_FILE,
    dtypes,
    from_attribute,
    normalize,
)
from ..vocabulary import SPECLOC_ATTR as SPECLOC

#: How one object reference is stored in an array: a JSON record string (ours), a plain in-file
#: path string (hdmf-zarr 0.14) or a decoded record dict (hdmf-zarr ≤0.13 object codecs).
ReferenceForm = Literal["json", "path", "record"]


@dataclass(frozen=True)
class ArrayLayout:
    """How one stored array holds its HDMF dataset."""

    storage: dtypes.StorageType
    #: A 0-d dataset (stored 0-d, or as one element with hdmf-zarr ≤0.13's ``"scalar"`` marker).
    scalar: bool = False
    references: ReferenceForm = "json"
    #: Elements decoded by :func:`hdmf_zarr3.storage.stores.v2.read_object_arrays` (read whole, eagerly).
    objects: bool = False


class Dialect:
    """The native dialect's behaviour; foreign dialects override what differs."""

    name = "hdmf_zarr3"
    #: Whether files of this dialect may be changed in place (``r+``/``a``).
    writable = True
    #: Whether attribute numbers keep their numpy type (if not, the reader restores it from the spec).
    typed_attributes = True

    def __init__(self, raw: dict[str, dict[str, Any]], store_name: str | None = None):
        self.raw = raw
        self.store_name = store_name
        self.documents = self.translate(raw)
        self._layouts: dict[str, ArrayLayout] = {}

    # --- overridden by dialects -------------------------------------------------------------------
    def translate(self, raw: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """The documents with attributes in this package's convention (the native ones as they are)."""
        return raw

    def _layout(self, path: str, doc: dict[str, Any]) -> ArrayLayout:
        attrs = doc["attributes"]
        if DTYPE_ATTR not in attrs:
            raise CorruptStoreError(f"array has no '{DTYPE_ATTR}' attribute (not written by an HDMF backend?)", path)
        storage = from_attribute(attrs[DTYPE_ATTR], doc.get("data_type"), path)
        return ArrayLayout(storage, scalar=doc.get("shape") == [])

    def source(self, source: str) -> str:
        """A link or reference ``source`` as this package reads it (relative to the file's directory)."""
        return source

    # --- shared -----------------------------------------------------------------------------------
    def layout(self, path: str) -> ArrayLayout:
        found = self._layouts.get(path)
        if found is None:
            found = self._layouts[path] = self._layout(path, self.documents[path])
        return found

    def reference(self, raw: Any, layout: ArrayLayout, where: str) -> Reference | None:
        """The reference one stored element holds (``None`` for a null reference)."""
        if isinstance(raw, np.ndarray) and raw.ndim == 0:
            raw = raw[()]
        if layout.references == "json":
            return decode_element(raw, where)
        if layout.references == "path":
            return _path_reference(raw, where)
        if raw is None:
            return None
        if not isinstance(raw, dict):
            raise CorruptStoreError(f"reference element must be a record, got {type(raw).__name__}", where)
        return Reference.from_json({**raw, "source": self.source(str(raw.get("source", SAME_FILE)))}, where)

    def row(self, raw: Any, layout: ArrayLayout, where: str) -> list[Any]:
        """Field values of one stored compound row; references as :class:`Reference` (or ``None``)."""
        fields = layout.storage.fields
        if layout.references == "json":
            if not isinstance(raw, (str, bytes)):
                raise CorruptStoreError(f"compound row is not text: {str(raw)[:80]!r}", where)
            obj = limits.load_json(raw, "compound row", where, max_values=limits.MAX_ELEMENT_VALUES)
            return decode_row(obj, fields, where)
        values = list(raw.tolist() if isinstance(raw, np.void) else raw)
        if len(values) != len(fields):
            raise CorruptStoreError(f"compound row has {len(values)} values for {len(fields)} fields", where)
        out: list[Any] = []
        for field, value in zip(fields, values):
            if field.dtype in dtypes.REFERENCE_DTYPES:
                out.append(self.reference(value, layout, where))
            elif field.dtype in dtypes.STRING_DTYPES:
                out.append(value.decode("utf-8") if isinstance(value, bytes) else str(value))
            else:
                out.append(np.dtype(cast(str, field.dtype)).type(value))  # a number: compounds are not nested here
        return out


def _path_reference(raw: Any, where: str) -> Reference | None:
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8")
    if not isinstance(raw, str):
        raise CorruptStoreError(f"reference element must be a path string, got {type(raw).__name__}", where)
    if raw == "":
        return None
    if raw.startswith("{"):  # an early hdmf-zarr 0.14 form: a JSON record
        return decode_element(raw, where)
    return Reference(SAME_FILE, normalize(raw))


def relative_to_parent(source: str, store_name: str | None) -> str:
    """hdmf-zarr's ``source`` (relative to the store directory itself) made relative to its parent."""
    if source == SAME_FILE or posixpath.isabs(source) or "://" in source or not store_name:
        return source
    joined = posixpath.normpath(posixpath.join(store_name, source))
    return SAME_FILE if joined == store_name else joined


class HdmfZarrDialect(Dialect):
    """What hdmf-zarr's two conventions share: read-only here, attribute numbers untyped, link and
    reference ``source`` relative to the store itself, HDMF attributes on the root."""

    writable = False
    typed_attributes = False

    @staticmethod
    def hdmf_root(raw: dict[str, dict[str, Any]]) -> bool:
        """Whether the root group carries the attributes HDMF writes on every file."""
        root = raw["/"].get("attributes", {})
        return SPECLOC in root or "neurodata_type" in root or "data_type" in root

    def source(self, source: str) -> str:
        return relative_to_parent(source, self.store_name)

    def translate(self, raw: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return {path: self._document(path, doc) for path, doc in raw.items()}

    def _document(self, path: str, doc: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def _record(self, record: Any, where: str) -> dict[str, Any]:
        """A link or reference record with its ``source`` made ours."""
        if not isinstance(record, dict) or not isinstance(record.get("source", "."), str):
            raise CorruptStoreError(f"malformed link or reference record {str(record)[:80]}", where)
        return {**record, "source": self.source(record.get("source", "."))}


class Convention:
    """How the writer spells a builder tree in Zarr: this package's convention.

    A foreign convention (:class:`.hdmf_zarr_v3.HdmfZarrV3Convention`) overrides what differs. The
    writer (:mod:`hdmf_zarr3.backend.write.writer`) stays the same for every convention.
    """

    name = "hdmf_zarr3"

    def chunk_keys(self, doc: dict[str, Any], chosen: bool) -> dict[str, Any]:
        """The array document with its chunk-key encoding settled: ours keeps the one chunk (or shard) of an
        array stored as one object beside its document (:func:`..layout_policy.one_object_keys`), unless the
        user chose a separator (``chosen``)."""
        return doc if chosen else one_object_keys(doc)

    def root_attributes(self, attrs: dict[str, Any]) -> dict[str, Any]:
        return {**attrs, FORMAT_ATTR: FORMAT_VERSION}

    def link_attribute(self, links: list[Any]) -> tuple[str, Any]:
        """The attribute (name and value) listing a group's links."""
        return LINK_ATTR, encode_links(links)

    def attribute(self, value: Any, ref: Any, where: str) -> Any:
        """The JSON of one attribute value (``ref`` turns a container or builder into a Reference)."""
        return encode_attribute(value, ref, where)

    def region_attributes(self) -> bool:
        """Whether region references can be stored (in attributes and datasets)."""
        return True

    def dataset_attributes(self, storage: dtypes.StorageType) -> dict[str, Any]:
        """Reserved attributes recording a dataset's HDMF dtype, and (ours) that every chunk is stored:
        the writer stores fill-valued chunks too, and drops the promise where it cannot keep it
        (:mod:`..stored_chunks`)."""
        return marked({DTYPE_ATTR: storage.zarr_dtype})

    def encode(self, data: Any, storage: dtypes.StorageType, ref: Any, where: str) -> np.ndarray:
        """A dataset's in-memory values as the array stored (see :func:`..array_encoding.encode_values`)."""
        return encode_values(data, storage, ref, where)

    def needs_values(self, storage: dtypes.StorageType) -> bool:
        """Whether a dataset's whole values are needed to write its document (not streamed)."""
        return False

    def finish_document(self, doc: dict[str, Any], storage: dtypes.StorageType, values: Any = None) -> dict[str, Any]:
        """The array document, adjusted to the convention once its values are known."""
        return doc

    def scalar_document(self, doc: dict[str, Any], storage: dtypes.StorageType, values: np.ndarray) -> dict[str, Any]:
        """The document of a 0-d array holding ``values``: ours holds a number or a string as its
        ``fill_value``, with no chunk (:mod:`..chunkless`)."""
        return chunkless_document(doc, storage, values)

    def spec_attributes(self) -> dict[str, Any]:
        """Attributes of the arrays holding cached spec documents (ours: chunkless, :mod:`..chunkless`)."""
        return {DTYPE_ATTR: dtypes.TEXT, CHUNKLESS_ATTR: True}
