"""Read a builder tree: one pass over the node documents, mirroring :mod:`.writer`.

Every ``zarr.json`` is fetched at once (see :mod:`.storage.stores.nodes`); scalar datasets, which HDMF
needs to build containers, are read together in one concurrent batch; every other dataset becomes a
lazy dataset that reads nothing until it is indexed. Builders are made in two steps so that
attributes and links may point anywhere in the file, including at ancestors: first the tree of
groups and datasets, then the attributes and links that hold references.
"""

from __future__ import annotations

import math
import posixpath
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from hdmf.backends.warnings import BrokenLinkWarning
from hdmf.build import Builder, DatasetBuilder, GroupBuilder, LinkBuilder, ReferenceBuilder

from ...errors import CorruptStoreError, IncompleteFileWarning
from ...format.data import Reference, decode_links
from ...format.data import values as data_values
from ...format.dialects import ArrayLayout, Dialect
from ...format.documents import orphans
from ...format.specs import cache_layout as speccache
from ...format.vocabulary import ArrayView, dtypes
from ...format.vocabulary import names as node_names
from ...storage.stores import nodes
from ..datasets import wrap
from .builders import add_child, new_dataset, new_group, set_group_attributes

if TYPE_CHECKING:
    from ..contexts import ReadContext

ROOT_NAME = "root"


def children_index(documents: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    """Child names of every node, sorted (the order h5py lists them in)."""
    index: dict[str, list[str]] = {p: [] for p in documents}
    for path in documents:
        if path != "/":
            index.setdefault(posixpath.dirname(path), []).append(posixpath.basename(path))
    for names in index.values():
        names.sort()
    return index


class BuilderReader:
    """Builds the GroupBuilder tree of one file from its node documents (``context``: what the reader
    needs of its io)."""

    def __init__(self, context: ReadContext, dialect: Dialect):
        self.context = context
        self.dialect = dialect
        self.docs = documents = dialect.documents
        self.children = children_index(documents)
        self.built: dict[str, Builder] = {}
        self._deferred: list[tuple[Builder, str, dict[str, Any]]] = []
        self._pending: dict[str, Any] = {}  # scalar datasets whose value holds references
        self.regions: dict[tuple[str, str], Any] = {}  # (node path, attribute) -> RegionSelection(s)
        self.prefetched: dict[str, Any] = {}  # whole contents of tiny arrays read ahead (remote stores)
        specloc = speccache.specifications_group(documents)  # checked: it must hold only specifications
        self.ignore = {specloc} if specloc is not None else set()

    def read(self) -> GroupBuilder:
        if "/" not in self.docs or self.docs["/"]["node_type"] != "group":
            raise CorruptStoreError("the root of the store is not a Zarr group", "/")
        self._check_orphans()
        scalars = self._prefetch_scalars()
        root = self._group("/", scalars)
        for builder, path, attrs in self._deferred:
            self._finish(builder, path, attrs)
        self._deferred.clear()
        if not self.dialect.typed_attributes:
            from ...format.specs import attribute_types

            attribute_types.restore(root, self.context.manager.namespace_catalog)
        return root

    def _check_orphans(self) -> None:
        """Nodes below a node without a document are not part of the tree: corruption in a complete file
        (a :class:`CorruptStoreError`, rather than losing them silently), expected in one whose write did
        not finish (documents are written concurrently), read with ``allow_incomplete`` (a warning)."""
        missing = orphans.orphans(self.docs, self.ignore)
        if not missing:
            return
        if not self.context.partial():
            raise missing[0]
        warnings.warn(
            f"{self.context.source}: the file is incomplete; not read: {'; '.join(map(str, missing))}",
            IncompleteFileWarning,
            stacklevel=4,
        )

    def _prefetch_scalars(self) -> dict[str, Any]:
        """Scalars, read in one batch; on remote stores also every tiny array (table ids, dates).

        HDMF reads some arrays while it builds containers; fetched one by one, a remote read would
        cost a round trip per table. Batched, ``read()`` costs a constant number of round trips.
        """
        store = self.context.handle.store
        arrays = [(p, d) for p, d in self.docs.items() if d["node_type"] == "array" and not self._ignored(p)]
        items = [(p, d) for p, d in arrays if self.dialect.layout(p).scalar]
        # arrays only a whole read decodes (object arrays of Zarr v2 files), and on remote stores tiny ones
        # that reading a file or its tables uses: table columns, and texts (dates HDMF converts); a tiny
        # number array elsewhere (a TimeSeries' data) waits until it is indexed, as it does locally
        ahead = [
            (p, d)
            for p, d in arrays
            if not self.dialect.layout(p).scalar
            and (
                self.dialect.layout(p).objects
                or (not nodes.local_io(store) and _tiny(d) and (self._in_table(p) or not _numeric(d)))
            )
        ]
        values = nodes.read_arrays(store, items + ahead)
        self.prefetched = {p: v for (p, _), v in zip(ahead, values[len(items) :]) if v is not None}
        return {p: _squeeze(v) for (p, _), v in zip(items, values)}

    def _in_table(self, path: str) -> bool:
        """Whether ``path`` is a column (or the ids) of a table: its group lists ``colnames``."""
        return "colnames" in self.docs.get(posixpath.dirname(path), {}).get("attributes", {})

    def _ignored(self, path: str) -> bool:
        return any(path == i or path.startswith(i + "/") for i in self.ignore)

    # --- structure --------------------------------------------------------------------------
    def _group(self, path: str, scalars: dict[str, Any]) -> GroupBuilder:
        doc = self.docs[path]
        name = ROOT_NAME if path == "/" else posixpath.basename(path)
        builder = new_group(name, self.context.source, posixpath.dirname(path) if path != "/" else "/")
        self.built[path] = builder
        for child in self.children.get(path, []):
            child_path = node_names.join(path, child)
            if self._ignored(child_path):
                continue
            if self.docs[child_path]["node_type"] == "group":
                add_child(builder, self._group(child_path, scalars))
            else:
                add_child(builder, self._dataset(child_path, scalars))
        self._deferred.append((builder, path, doc["attributes"]))
        self.context.mark_written(builder)
        return builder

    def _dataset(self, path: str, scalars: dict[str, Any]) -> DatasetBuilder:
        doc = self.docs[path]
        attrs = doc["attributes"]
        layout = self.dialect.layout(path)
        storage = layout.storage
        if path in scalars:
            data: Any = self._scalar(path, scalars[path], layout)
        else:
            data = wrap(self.context.datasets, path, doc, layout)
            if path in self.prefetched:
                data.prime(self.prefetched[path])
        pending = _has_lazy(data)
        names = doc.get("dimension_names")
        builder = new_dataset(
            posixpath.basename(path),
            None if pending else data,
            dtypes.builder_dtype(storage),
            self.context.source,
            posixpath.dirname(path),
            tuple(names) if isinstance(names, list) else None,
        )
        if pending:
            self._pending[path] = data
        self.built[path] = builder
        self._deferred.append((builder, path, attrs))
        self.context.mark_written(builder)
        return builder

    def _scalar(self, path: str, raw: Any, layout: ArrayLayout) -> Any:
        storage = layout.storage
        if storage.kind == "struct":  # as h5py: a 0-d structured array, not np.void
            return np.asarray(raw, dtype=storage.numpy_dtype).reshape(())
        value = raw[()] if isinstance(raw, np.ndarray) else raw
        if storage.kind == "string":
            return value.decode("utf-8") if isinstance(value, bytes) else str(value)
        if storage.kind == "reference":
            ref = self.dialect.reference(value, layout, path)
            return None if ref is None else _LazyReference(self, ref, path)
        if storage.kind == "rows":
            row = self._lazy_row(self.dialect.row(value, layout, path), path)
            return row if _has_lazy(row) else _record(row, storage)
        return value

    # --- attributes and links -----------------------------------------------------------------
    def _finish(self, builder: Builder, path: str, attrs: dict[str, Any]) -> None:
        decoded_attrs: dict[str, Any] = {}
        for key, value in attrs.items():
            if key in node_names.RESERVED_ATTRS:
                continue
            decoded = data_values.decode_attribute(value, lambda ref: self.resolve(ref, path), f"{path}@{key}")
            if isinstance(value, dict) and value.get(node_names.DTYPE_ATTR) == dtypes.REGION:
                # HDMF expects the referenced object here (HDF5IO gives it too); the selection stays
                # available through ZarrIO.region_attribute and is copied verbatim on export.
                self.regions[(path, key)] = data_values.decode_attribute(
                    value, lambda ref: self.resolve_value(ref, path), f"{path}@{key}"
                )
            if decoded is None and isinstance(value, dict):  # a reference whose target a partial file lacks
                continue
            decoded_attrs[key] = decoded
        if isinstance(builder, DatasetBuilder):  # what its set_attribute does, without a docval call per name
            builder.attributes.update(decoded_attrs)
        else:
            set_group_attributes(builder, decoded_attrs, path)
        if isinstance(builder, DatasetBuilder):
            self._finish_scalar(builder, path)
        if isinstance(builder, GroupBuilder) and node_names.LINK_ATTR in attrs:
            for link in _checked_links(decode_links(attrs[node_names.LINK_ATTR], path), builder, path):
                # A target missing from this file (or from another file that is there) means a corrupt
                # file; another file that is missing altogether is skipped with a warning, as HDF5IO does.
                target = self.resolve(
                    link.target, node_names.join(path, link.name), missing_ok=not link.target.is_internal
                )
                if target is None and link.target.is_internal:  # in a partial file (else resolve raised)
                    continue
                if target is None:
                    warnings.warn(
                        f"{node_names.join(path, link.name)}: link target {link.target.path!r} is in "
                        f"{link.target.source!r}, which does not exist",
                        BrokenLinkWarning,
                        stacklevel=2,
                    )
                    continue
                lb = LinkBuilder(builder=target, name=link.name, source=self.context.source)
                lb.location = path
                builder.set_link(lb)
                self.context.mark_written(lb)

    def _finish_scalar(self, builder: DatasetBuilder, path: str) -> None:
        data = self._pending.pop(path, None)
        if data is None:
            return
        if isinstance(data, _LazyReference):
            resolved = data.resolve()
            builder.data = resolved if data.ref.region is not None else ReferenceBuilder(resolved)
        elif isinstance(data, tuple) and _has_lazy(data):
            builder.data = _record(_resolved_row(data), self.dialect.layout(path).storage)

    def _lazy_row(self, values: Any, path: str) -> tuple:
        """A scalar compound's row, its references (in compound fields too) resolved once every node exists."""
        return tuple(
            self._lazy_row(v, path)
            if isinstance(v, tuple)
            else _LazyReference(self, v, path)
            if isinstance(v, Reference)
            else v
            for v in values
        )

    def resolve_value(self, ref: Reference, where: str) -> Any:
        """What a reference reads as: the target's builder, or a RegionSelection of it."""
        from ..datasets import RegionSelection

        target = self.resolve(ref, where)
        return RegionSelection(target, ref.region) if ref.region is not None else target

    def resolve(self, ref: Reference, where: str, missing_ok: bool = False) -> Builder | None:
        """The builder a reference record points to (in this file or another one)."""
        if ref.is_internal:
            found = self.built.get(ref.path)
            if found is None and not missing_ok:
                if not self.context.partial():
                    raise CorruptStoreError(self.why_missing(ref.path, where), where)
                warnings.warn(
                    f"{self.context.source}: the file is incomplete; {where} is left out: its target "
                    f"{ref.path!r} was not written",
                    IncompleteFileWarning,
                    stacklevel=2,
                )
            return found
        return self.context.external_builder(ref, where, missing_ok)

    def why_missing(self, target: str, where: str) -> str:
        """Why no group or dataset is at ``target``, the target of the link or reference at ``where``:
        it is the link itself, another link (the format has no links to links), or nothing at all."""
        if target == where:
            return "the link points to itself"
        if target in self._link_paths():
            return f"target {target!r} is itself a link; links and references must point to a group or dataset"
        return f"reference target {target!r} does not exist"

    def _link_paths(self) -> set[str]:
        found: set[str] = set()
        for path, doc in self.docs.items():
            links = doc.get("attributes", {}).get(node_names.LINK_ATTR) if doc.get("node_type") == "group" else None
            if links is None:
                continue
            try:
                found.update(node_names.join(path, link.name) for link in decode_links(links, path))
            except CorruptStoreError:  # a damaged record is reported where its own group is read
                continue
        return found


def _checked_links(links: list[Any], builder: GroupBuilder, path: str) -> list[Any]:
    """``links``, unless one has a name no node may have, or one already taken in its group."""
    seen: set[str] = set()
    for link in links:
        name = link.name
        if "/" in name or "\x00" in name or not name.strip("."):
            raise CorruptStoreError(f"link name {name!r} is not a valid node name", path)
        if name in seen:
            raise CorruptStoreError(f"two links are named {name!r}", path)
        if name in builder.groups or name in builder.datasets:
            kind = "group" if name in builder.groups else "dataset"
            raise CorruptStoreError(f"link {name!r} has the name of a {kind} in the same group", path)
        if name in builder.attributes:  # (set before the links)
            raise CorruptStoreError(f"link {name!r} has the name of an attribute of the same group", path)
        seen.add(name)
    return links


def _squeeze(value: Any) -> Any:
    """A 0-d value stored as one element of shape (1,) (hdmf-zarr <= 0.13's scalars), as 0-d."""
    if isinstance(value, np.ndarray) and value.shape == (1,):
        return value.reshape(())
    return value


def _record(values: Sequence[Any], storage: dtypes.StorageType) -> np.ndarray:
    """A scalar compound as a 0-d structured array, as a scalar ``struct`` reads (fields by name)."""
    out = np.empty((), dtype=storage.row_dtype)
    for field, value in zip(storage.fields, values):
        dtypes.put_field(out[field.name], (), value, field)  # field by field: builders are dicts numpy would unpack
    return out


def _resolved_row(row: tuple) -> tuple:
    return tuple(
        _resolved_row(v) if isinstance(v, tuple) else v.resolve() if isinstance(v, _LazyReference) else v for v in row
    )


def _has_lazy(data: Any) -> bool:
    return isinstance(data, _LazyReference) or (isinstance(data, tuple) and any(_has_lazy(v) for v in data))


class _LazyReference:
    """A reference read from a scalar dataset, resolved once every node exists."""

    def __init__(self, reader: BuilderReader, ref: Reference, where: str):
        self.reader, self.ref, self.where = reader, ref, where

    def resolve(self) -> Any:
        return self.reader.resolve_value(self.ref, self.where)


#: Arrays prefetched by ``read()`` on remote stores: one chunk of at most this many bytes.
TINY_BYTES = 64 * 1024


def _numeric(doc: dict[str, Any]) -> bool:
    return isinstance(doc.get("data_type"), str) and doc["data_type"] != "string"


def _tiny(doc: dict[str, Any]) -> bool:
    if not doc.get("shape") or doc.get("zarr_format") == 2:
        return False
    view = ArrayView.from_document(doc)
    if view.shape != view.chunk_grid or 0 in view.shape:
        return False
    return math.prod(view.shape) * view.itemsize <= TINY_BYTES
