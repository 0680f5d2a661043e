"""Keeping a source file's cached specifications when a file is exported or converted.

HDMF's exports cache the namespaces of the type map in memory, re-generated from the loaded specs.
That is not the source's schema: PyNWB's installed core replaces the version the file cached, and a
namespace loaded from a cache comes back renamed (``ndx-ophys-devices.extensions`` becomes
``ndx-ophys-devices``) and altered (HDMF 6.2 writes resolved specs and drops a type the extension
redefines), so a converted file can read back with containers missing. Here the source's cached
documents are copied exactly as stored instead, and only namespaces the written file uses but the
source does not cache at all come from the type map (:func:`.format.specs.cache_layout.namespaces_to_add`).
"""

from __future__ import annotations

from typing import Any

import h5py
from hdmf.backends.hdf5 import HDF5IO
from hdmf.backends.io import HDMFIO
from hdmf.spec import NamespaceCatalog

from ...errors import CorruptStoreError
from ...format.specs import cache_layout as spec_layout
from ...integrations import hdf5io_file
from . import cache as spec_cache

#: Root attribute of an HDF5 file referencing its cached specifications (HDMF's ``SPEC_LOC_ATTR``).
HDF5_SPECLOC = ".specloc"
HDF5_SPEC_GROUP = "specifications"


def source_specifications(src_io: HDMFIO) -> spec_layout.Cached | None:
    """The specifications cached in the file ``src_io`` reads, exactly as stored (``{}`` if it caches
    none), or ``None`` for a backend whose cache this package cannot read."""
    cached_specifications = getattr(src_io, "cached_specifications", None)  # a ZarrIO's (not imported here)
    if callable(cached_specifications):
        return cached_specifications()
    if isinstance(src_io, HDF5IO) and hdf5io_file(src_io) is not None:
        return read_hdf5(hdf5io_file(src_io))
    return None


def includes(catalog: NamespaceCatalog) -> dict[str, list[str]]:
    """For each namespace of ``catalog``, the namespaces its schema includes."""
    return {
        ns: [s["namespace"] for s in catalog.get_namespace(ns)["schema"] if "namespace" in s]
        for ns in catalog.namespaces
    }


def to_cache(
    kept: spec_layout.Cached | None, catalog: NamespaceCatalog, used: set[str], rebuilt: bool
) -> spec_layout.Cached:
    """The specifications a file written from a source caches.

    Parameters
    ----------
    kept : dict or None
        The source's cached documents (:func:`source_specifications`); ``None`` if unknown, and then
        the whole catalog is cached, as HDMF does.
    catalog : NamespaceCatalog
        The namespaces loaded to read the source (and the destination's).
    used : set of str
        The namespaces the written nodes name.
    rebuilt : bool
        Whether the nodes were rebuilt from containers (``link_data=False``), i.e. written by the
        loaded type map, rather than copied as read. Copied nodes are described by the source's cache:
        it is kept exactly, and only namespaces the file uses that it lacks come from ``catalog``.
        Rebuilt nodes follow the loaded namespaces: each is cached (as HDMF does), from the source's
        documents where the source caches that very version, else re-generated.
    """
    if kept is None:
        return spec_cache.catalog_documents(catalog)
    if not rebuilt:
        extra = spec_layout.namespaces_to_add(kept, used, includes(catalog))
        return {**kept, **spec_cache.catalog_documents(catalog, extra)}
    out: spec_layout.Cached = {}
    for ns in catalog.namespaces:
        version = str(catalog.get_namespace(ns).version)
        documents = kept.get(ns, {}).get(version)
        out[ns] = {version: documents} if documents is not None else spec_cache.catalog_documents(catalog, [ns])[ns]
    return out


def merged_catalog(dst_io: HDMFIO, src_io: HDMFIO) -> NamespaceCatalog:
    """The destination's catalog with the source's namespaces it lacks added (as HDMF's exports do)."""
    catalog = dst_io.manager.namespace_catalog
    source = src_io.manager.namespace_catalog
    for ns in source.namespaces:
        if ns not in catalog.namespaces:
            catalog.add_namespace(name=ns, namespace=source.get_namespace(ns))
    return catalog


def cache_in_zarr(
    dst_io: Any,
    src_io: HDMFIO,
    rebuilt: bool,
    attributes: dict[str, Any] | None = None,
    names_dimensions: bool = False,
) -> None:
    """Cache specifications in a Zarr file (``dst_io``, a ZarrIO) just written from ``src_io``
    (:func:`to_cache`); ``attributes``: those of each spec document array; ``names_dimensions``: the file's
    convention names its arrays' dimensions."""
    handle = dst_io.store_handle
    kept = source_specifications(src_io)
    used = spec_layout.used_namespaces(handle.documents()) if kept is not None and not rebuilt else set()
    cached = to_cache(kept, merged_catalog(dst_io, src_io), used, rebuilt)
    spec_cache.write_cached(handle, cached, attributes, names_dimensions)


# --- HDF5 ----------------------------------------------------------------------------------------


def _hdf5_spec_group(h5file: h5py.File) -> h5py.Group | None:
    ref = h5file.attrs.get(HDF5_SPECLOC)
    if isinstance(ref, h5py.Reference) and ref:
        group = h5file[ref]
        return group if isinstance(group, h5py.Group) else None
    return None


def read_hdf5(h5file: h5py.File) -> spec_layout.Cached:
    """The cached specifications of an open HDF5 file (the group its ``.specloc`` references)."""
    group = _hdf5_spec_group(h5file)
    cached: spec_layout.Cached = {}
    if group is None:
        return cached
    for ns, versions in group.items():
        if not isinstance(versions, h5py.Group):
            continue
        for version, documents in versions.items():
            if not isinstance(documents, h5py.Group):
                continue
            where = documents.name
            named = cached.setdefault(ns, {}).setdefault(version, {})
            for name, node in documents.items():
                if not isinstance(node, h5py.Dataset) or node.size != 1:
                    raise CorruptStoreError(f"cached specification {name!r} is not one text value", where)
                value = node[()]
                value = value.reshape(-1)[0] if hasattr(value, "reshape") else value  # a 1-element array
                if isinstance(value, bytes):
                    value = value.decode("utf-8")
                if not isinstance(value, str):
                    raise CorruptStoreError(f"cached specification {name!r} is not text", where)
                named[name] = value
    return cached


def write_hdf5(h5file: h5py.File, cached: spec_layout.Cached) -> None:
    """Write spec documents exactly as given into an HDF5 file, laid out as HDMF's HDF5IO does
    (``/specifications/<namespace>/<version>/<document>``, scalar variable-length strings); a namespace
    version already cached is left as it is."""
    group = _hdf5_spec_group(h5file)
    if group is None:
        group = h5file.require_group(HDF5_SPEC_GROUP)
        h5file.attrs[HDF5_SPECLOC] = group.ref
    for ns, versions in cached.items():
        for version, named in versions.items():
            if f"{ns}/{version}" in group:
                continue
            target = group.create_group(f"{ns}/{version}")
            for name, text in named.items():
                target.create_dataset(name, shape=(), data=text, dtype=h5py.string_dtype("utf-8"))


def hdf5_namespaces(h5file: h5py.File) -> set[str]:
    """The namespaces named by the ``namespace`` attributes of an HDF5 file's nodes (specs aside)."""
    spec = _hdf5_spec_group(h5file)
    skip = None if spec is None else spec.name
    found: set[str] = set()

    def visit(name: str, node: Any) -> None:
        if skip is not None and ("/" + name == skip or ("/" + name).startswith(skip + "/")):
            return
        value = node.attrs.get("namespace")
        if isinstance(value, bytes):
            value = value.decode("utf-8")
        if isinstance(value, str):
            found.add(value)

    visit("", h5file)
    h5file.visititems(visit)
    return found


def cache_in_hdf5(h5file: h5py.File, kept: spec_layout.Cached | None, catalog: NamespaceCatalog, rebuilt: bool) -> None:
    """Cache specifications in an HDF5 file just written from a source (:func:`to_cache`)."""
    used = hdf5_namespaces(h5file) if kept is not None and not rebuilt else set()
    write_hdf5(h5file, to_cache(kept, catalog, used, rebuilt))
