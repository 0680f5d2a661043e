"""Reading and writing the cached specifications (layout in :mod:`.format.specs.cache_layout`)."""

from __future__ import annotations

import json
import math
import posixpath
from typing import Any

from hdmf.backends.utils import NamespaceToBuilderHelper
from hdmf.spec import NamespaceCatalog, SpecReader, SpecWriter

from ...errors import CorruptStoreError, HdmfZarrError, MetadataLimitError, SpecificationError
from ...format.dialects import Convention
from ...format.documents import limits
from ...format.documents import zarr_json as docs
from ...format.layout import chunkless
from ...format.specs import cache_layout as spec_layout
from ...format.specs import check as spec_check
from ...format.vocabulary import dtypes, first_chunk_key
from ...format.vocabulary import names as node_names
from ...storage.handles import StoreHandle
from ...storage.stores import nodes, stored_sizes

_TEXT = dtypes.for_scalar_dtype(dtypes.TEXT)


class CollectingSpecWriter(SpecWriter):
    """Collects the JSON text of each spec document (HDMF's NamespaceBuilder.export target)."""

    def __init__(self) -> None:
        self.documents: dict[str, str] = {}

    def write_spec(self, spec: Any, path: str) -> None:
        self.documents[path] = json.dumps(spec, separators=(",", ":"))

    def write_namespace(self, namespace: Any, path: str) -> None:
        self.documents[path] = json.dumps({"namespaces": [namespace]}, separators=(",", ":"))


class ZarrSpecReader(SpecReader):
    """Reads the spec documents of one cached namespace version (all fetched in one batch)."""

    def __init__(self, handle: StoreHandle, group: str, texts: dict[str, Any]):
        super().__init__(source=f"{handle.location or 'store'}:{group}")
        self._texts = texts
        self._group = group
        self._parsed: dict[str, Any] = {}

    @property
    def group(self) -> str:
        return self._group

    def read(self, name: str) -> Any:
        """The parsed document ``name`` (parsed once: checked, then handed to HDMF)."""
        if name not in self._parsed:
            if name not in self._texts:
                raise CorruptStoreError(f"cached specification {name!r} is missing", self._group)
            self._parsed[name] = limits.load_json(str(self._texts[name]), f"cached specification {name!r}", self._group)
        return self._parsed[name]

    def _read(self, name: str) -> Any:
        # the checked document itself, handed over once: HDMF may change what it is given (asked again, parsed again)
        value = self.read(name)
        del self._parsed[name]
        return value

    def read_spec(self, spec_path: str) -> Any:
        return self._read(spec_path)

    def read_namespace(self, ns_path: str) -> Any:
        return self._read(ns_path)["namespaces"]


def cached_versions(documents: dict[str, dict[str, Any]]) -> tuple[str | None, dict[str, str]]:
    """The spec location and, for each cached namespace, the version a reader loads."""
    base = _specloc(documents)
    if base is None:
        return None, {}
    found: dict[str, list[str]] = {}
    for path, doc in documents.items():
        parts = path[len(base) :].strip("/").split("/") if path.startswith(base + "/") else []
        if len(parts) == 2 and doc["node_type"] == "group":
            found.setdefault(parts[0], []).append(parts[1])
    return base, {ns: spec_layout.latest_version(v) for ns, v in found.items()}


def load_namespaces(
    handle: StoreHandle, documents: dict[str, dict[str, Any]], catalog: Any, namespaces: list[str] | None
) -> dict:
    """Load the namespaces cached in a file (``documents``: its node documents, in our convention)."""
    base, versions = cached_versions(documents)
    if base is None:
        return {}
    groups = {}
    for ns in namespaces if namespaces is not None else list(versions):
        if ns not in versions:
            raise CorruptStoreError(f"namespace {ns!r} is not cached in this file", base)
        groups[ns] = spec_layout.version_group(base, ns, versions[ns])
    texts = _read_groups(handle, documents, list(groups.values()))
    readers = {ns: ZarrSpecReader(handle, group, texts[group]) for ns, group in groups.items()}
    _check_cached(readers, catalog, base)
    try:
        return catalog.load_namespaces(spec_layout.NAMESPACE_DOC, reader=readers)
    except HdmfZarrError:
        raise
    except (ValueError, TypeError, AttributeError, KeyError, IndexError, RecursionError) as exc:
        # what the checks above do not foresee in HDMF's own handling: still the file's fault, and typed
        raise SpecificationError(
            f"the cached specifications of {sorted(readers)} cannot be loaded ({type(exc).__name__}: {str(exc)[:300]})",
            base,
        ) from None


def _check_cached(readers: dict[str, ZarrSpecReader], catalog: Any, base: str) -> None:
    """Check every document to be loaded (:mod:`..format.specs.check`) before HDMF sees any of them."""
    types: dict[str, tuple[str, str | None]] = {}
    uses: list[tuple[str, str, str]] = []
    includes: dict[str, list[str]] = {}
    for ns, reader in readers.items():
        group = reader.group
        for entry in spec_check.check_namespace_document(reader.read(spec_layout.NAMESPACE_DOC), ns, group):
            includes.setdefault(entry["name"], []).extend(
                i["namespace"] for i in entry["schema"] if isinstance(i.get("namespace"), str)
            )
            for item in entry["schema"]:
                if not isinstance(item.get("source"), str):
                    continue
                name = item["source"]  # as HDMF asks the reader for it
                defined, used = spec_check.check_source_document(reader.read(name), ns, name, group)
                for type_name, parent in defined.items():
                    types.setdefault(type_name, (ns, parent))
                uses += [(ns, t, where) for t, where in used]
    spec_check.check_includes(includes, base)
    spec_check.check_types(types, uses, _known_types(catalog, readers), base)


def _known_types(catalog: Any, loading: dict[str, Any]) -> set[str]:
    """Types of the namespaces the reader already has (those the file caches too are checked as cached)."""
    catalog = getattr(catalog, "namespace_catalog", catalog)
    known: set[str] = set()
    for ns in catalog.namespaces:
        if ns not in loading:
            known.update(catalog.get_namespace(ns).get_registered_types())
    return known


def read_cached(handle: StoreHandle, documents: dict[str, dict[str, Any]]) -> spec_layout.Cached:
    """Every cached specification document of a file, every version, as the JSON text stored."""
    base = _specloc(documents)
    if base is None:
        return {}
    groups: dict[str, tuple[str, str]] = {}
    for path, doc in documents.items():
        parts = path[len(base) :].strip("/").split("/") if path.startswith(base + "/") else []
        if len(parts) == 2 and doc["node_type"] == "group":
            groups[path] = (parts[0], parts[1])
    texts = _read_groups(handle, documents, list(groups))
    cached: spec_layout.Cached = {}
    for group, (ns, version) in groups.items():
        for name, value in texts[group].items():
            if not isinstance(value, str):
                raise CorruptStoreError(f"cached specification {name!r} is not text", group)
            cached.setdefault(ns, {}).setdefault(version, {})[name] = value
    return cached


def _specloc(documents: dict[str, dict[str, Any]]) -> str | None:
    return spec_layout.specifications_group(documents)


def _read_groups(
    handle: StoreHandle, documents: dict[str, dict[str, Any]], groups: list[str]
) -> dict[str, dict[str, Any]]:
    """The documents (arrays) in each of ``groups``, by name, all fetched in one batch (one round of
    requests on a remote store)."""
    wanted = set(groups)
    items = [(p, d) for p, d in documents.items() if posixpath.dirname(p) in wanted and d["node_type"] == "array"]
    _check_stored_sizes(handle, items)
    texts: dict[str, dict[str, Any]] = {group: {} for group in groups}
    for (path, _), value in zip(items, nodes.read_arrays(handle.store, items)):
        texts[posixpath.dirname(path)][posixpath.basename(path)] = _text(value)
    return texts


#: The most bytes the stored object of one cached specification may take: twice a document's limit leaves
#: room for what a codec adds (hdmf-zarr <= 0.13's JSON codec escapes every quote of the text).
MAX_STORED_SPEC_BYTES = 2 * limits.MAX_DOCUMENT_BYTES


def _check_stored_sizes(handle: StoreHandle, items: list[tuple[str, dict[str, Any]]]) -> None:
    """Refuse, before reading any, cached specifications whose stored objects are too large.

    Ours are in their documents (parsed within the file's metadata budget); other writers' are one text
    in a chunk each, bounded only by what any variable-length chunk may take (1 GiB), and all of them are
    read at once. So each must hold one element, its object at most :data:`MAX_STORED_SPEC_BYTES`, and
    all of them together at most what a file's metadata may take (:data:`.limits.MAX_FILE_METADATA_BYTES`):
    checked by their sizes, one round of requests that reads no body.
    """
    keyed: list[tuple[str, str]] = []
    for path, doc in items:
        if chunkless.stored_value(doc) is not None:
            continue
        count = math.prod(doc.get("shape") or [])
        if count != 1:
            raise CorruptStoreError(f"a cached specification holds one text, this array holds {count} values", path)
        key = first_chunk_key(doc)
        if key is None:
            raise CorruptStoreError("a cached specification with chunk keys this reader does not know", path)
        keyed.append((path, node_names.store_key(path, key)))
    total = 0
    for (path, key), size in zip(keyed, stored_sizes(handle.store, [key for _, key in keyed])):
        total += size or 0
        if (size or 0) > MAX_STORED_SPEC_BYTES:
            raise MetadataLimitError(
                f"the cached specification stored in {key!r} takes {size} bytes, more than this reader "
                f"accepts for one ({MAX_STORED_SPEC_BYTES})",
                path,
            )
        if total > limits.MAX_FILE_METADATA_BYTES:
            raise MetadataLimitError(
                "the cached specifications of this file take more than "
                f"{limits.MAX_FILE_METADATA_BYTES} bytes together, more than this reader accepts for "
                "one file's metadata; stopped at this one",
                path,
            )


def _text(value: Any) -> Any:
    """The one string a spec document array holds (0-d; one element in hdmf-zarr <= 0.13 files)."""
    if hasattr(value, "shape") and getattr(value, "size", 0) == 1:
        value = value.reshape(())[()]
    return value.decode("utf-8") if isinstance(value, bytes) else value


def catalog_documents(catalog: NamespaceCatalog, namespaces: list[str] | None = None) -> spec_layout.Cached:
    """The spec documents HDMF writes for ``namespaces`` of ``catalog`` (all of them by default)."""
    cached: spec_layout.Cached = {}
    for ns_name in catalog.namespaces if namespaces is None else namespaces:
        writer = CollectingSpecWriter()
        NamespaceToBuilderHelper.convert_namespace(catalog, ns_name).export(spec_layout.NAMESPACE_DOC, writer=writer)
        cached.setdefault(ns_name, {})[str(catalog.get_namespace(ns_name).version)] = writer.documents
    return cached


def cache_specifications(
    handle: StoreHandle,
    catalog: NamespaceCatalog,
    attributes: dict[str, Any] | None = None,
    namespaces: list[str] | None = None,
    names_dimensions: bool = False,
) -> None:
    """Write every namespace of ``catalog`` (or those named) not yet cached, then point ``.specloc`` at them.

    ``attributes``: those of each spec document array (by default its ``zarr_dtype``); ``names_dimensions``:
    as for ``StoreHandle.put_documents`` (the file's convention).
    """
    documents = handle.documents()
    specloc = (documents.get("/") or docs.group_document({}))["attributes"].get(
        node_names.SPECLOC_ATTR, node_names.SPEC_GROUP
    )
    todo = [
        ns
        for ns in (catalog.namespaces if namespaces is None else namespaces)
        if spec_layout.version_group(specloc, ns, catalog.get_namespace(ns).version) not in documents
    ]
    write_cached(handle, catalog_documents(catalog, todo), attributes, names_dimensions)


def write_cached(
    handle: StoreHandle,
    cached: spec_layout.Cached,
    attributes: dict[str, Any] | None = None,
    names_dimensions: bool = False,
) -> None:
    """Write spec documents exactly as given (names and texts), each namespace version not yet cached,
    then point ``.specloc`` at them.

    ``attributes``: those of each spec document array (by default its ``zarr_dtype``); ``names_dimensions``:
    as for ``StoreHandle.put_documents`` (the file's convention).
    """
    documents = handle.documents()
    root = documents.get("/") or docs.group_document({})
    specloc = root["attributes"].get(node_names.SPECLOC_ATTR, node_names.SPEC_GROUP)
    new_docs: dict[str, dict[str, Any]] = {}
    texts: dict[str, str] = {}
    for ns_name, versions in cached.items():
        for version, named in versions.items():
            group = spec_layout.version_group(specloc, ns_name, version)
            if group in documents:
                continue
            for parent in _ancestors(group):
                node_names.check_name(posixpath.basename(parent), posixpath.dirname(parent))
                if parent not in documents:
                    new_docs[parent] = docs.group_document({})
            for name, text in named.items():
                node_names.check_name(name, group)
                texts[node_names.join(group, name)] = text
    spec_attrs = Convention().spec_attributes() if attributes is None else attributes
    for path, text in texts.items():
        doc = docs.array_document((), _TEXT, dict(spec_attrs))
        if spec_attrs.get(node_names.CHUNKLESS_ATTR) is True:  # the text is the fill value; no chunk
            doc = chunkless.chunkless_document(
                {**doc, "attributes": _without_marker(spec_attrs)}, _TEXT, _text_array(text)
            )
        new_docs[path] = doc
    store = handle.store
    jobs = [_fill(store, p, new_docs[p], t) for p, t in texts.items() if not chunkless.is_chunkless(new_docs[p])]
    if new_docs:
        handle.put_documents(new_docs, names_dimensions)  # documents before their chunks
    nodes.run_jobs(jobs)
    if "/" + specloc.strip("/") not in documents and not new_docs:  # nothing cached: .specloc would name no group
        if "/" not in documents:
            handle.put_documents({"/": root}, names_dimensions)
        return
    if root["attributes"].get(node_names.SPECLOC_ATTR) != specloc or "/" not in documents:
        specloc_root = {**root, "attributes": {**root["attributes"], node_names.SPECLOC_ATTR: specloc}}
        handle.put_documents({"/": specloc_root}, names_dimensions)


def _without_marker(attributes: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in attributes.items() if k != node_names.CHUNKLESS_ATTR}


def _text_array(text: str) -> Any:
    import numpy as np

    value = np.empty((), dtype=object)
    value[()] = text
    return value


def _ancestors(group: str) -> list[str]:
    parts = group.strip("/").split("/")
    return ["/" + "/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _fill(store: Any, path: str, doc: dict[str, Any], text: str) -> Any:
    import numpy as np

    value = np.array(text, dtype=object)

    async def job() -> None:
        await nodes.async_array(store, path, doc).setitem((), value)

    return job
