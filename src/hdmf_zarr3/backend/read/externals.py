"""Other files that a file's links and references point into.

A target in another file is handed to HDMF the way HDF5IO hands it over: as a parentless builder
for the target (with its subtree), not as a member of the other file's full tree, so HDMF treats it
as data linked from that file. One cache per opened file maps (file, path) to those builders, and
references read inside the other file resolve through the same cache, so a link and a reference to
the same node give the same builder (and so the same container).

Another file is opened only if it lies inside the directory holding the file being read or one of
the directories the caller allowed (``external_roots``). The check is made on
the resolved location, before anything is opened: an absolute path, ``..``, a URL, or a symlink
that leads out of the allowed directories is refused with :class:`UnsafeLinkError`.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hdmf.backends.errors import UnsupportedOperation
from hdmf.backends.io import HDMFIO
from hdmf.build import Builder, DatasetBuilder, GroupBuilder, LinkBuilder, ReferenceBuilder

from ...errors import CorruptStoreError, UnsafeLinkError
from ...format.data import Reference
from ...storage.stores import locations

if TYPE_CHECKING:
    from hdmf.build import BuildManager

    from ..contexts import ForeignZarrFile

#: Opens another Zarr file read-only (with the opening file's store options), its links and references
#: resolving through the given cache: ``(location, cache) -> io``.
OpenZarr = Callable[[str, "ForeignFiles"], "ForeignZarrFile"]


class ForeignFiles:
    """The other files opened while reading one file, and the builders handed out for them.

    Parameters
    ----------
    directory : callable
        The directory (or URL prefix) holding the file being read, ``None`` if it has none (or is closed).
    external_roots : list of str, optional
        The other directories (or URL prefixes) the caller allowed.
    manager : callable
        The build manager of the file being read (other files are read with it).
    open_zarr : callable
        Opens another Zarr file (:data:`OpenZarr`); given by the io, so this module never imports it.
    """

    def __init__(
        self,
        directory: Callable[[], str | None],
        external_roots: list[str] | None,
        manager: Callable[[], BuildManager],
        open_zarr: OpenZarr,
    ):
        self.directory = directory
        self.external_roots = external_roots
        self.manager = manager
        self.open_zarr = open_zarr
        self.ios: dict[str, HDMFIO] = {}
        self.zarr: dict[str, ForeignZarrFile] = {}  # those of ``ios`` that are Zarr files
        self.cache: dict[tuple[str, str], Builder] = {}
        self._reading: set[str] = set()  # files whose tree is being read (a link back to one is a cycle)

    def roots(self) -> list[str]:
        """Where other files may be: the directory holding the file, and the caller's ``external_roots``."""
        directory = self.directory()
        given = ([] if directory is None else [directory]) + list(self.external_roots or [])
        return [
            locations.absolute(r) if locations.is_remote(r) else os.path.realpath(locations.local_path(r))
            for r in given
        ]

    def confine(self, source: str, target: str, where: str) -> None:
        """Refuse a ``target`` (``source`` resolved) outside the allowed roots, before it is opened."""
        roots = self.roots()
        if locations.is_remote(target):
            inside = any(
                locations.is_remote(r) and (target == r or target.startswith(r.rstrip("/") + "/")) for r in roots
            )
        else:
            real = os.path.realpath(target)
            inside = any(
                not locations.is_url(r) and (real == r or real.startswith(r.rstrip(os.sep) + os.sep)) for r in roots
            )
        if not inside:
            raise UnsafeLinkError(
                f"source {source!r} resolves to {target}, outside the allowed directories "
                f"{roots}; to follow it, open the file with external_roots=[...] naming "
                "its directory",
                where,
            )

    def close(self) -> None:
        for io in self.ios.values():
            io.close()
        self.ios.clear()
        self.zarr.clear()
        self.cache.clear()

    def builder(self, ref: Reference, directory: str | None, where: str, missing_ok: bool = False) -> Builder | None:
        """The builder a reference with a file ``source`` (relative to ``directory``) points to."""
        problem = locations.url_problem(ref.source, None) if locations.is_url(ref.source) else None
        if problem is not None:  # (a URL urllib cannot split raised its ValueError below)
            raise CorruptStoreError(f"source {ref.source[:300]!r} {problem}", where)
        if directory is None and not (os.path.isabs(ref.source) or locations.is_url(ref.source)):
            raise CorruptStoreError(f"cannot resolve relative source {ref.source!r} without a file location", where)
        target = locations.join(directory or "", ref.source)
        if target not in self.ios:  # every file opened here was confined when it was opened
            self.confine(ref.source, target, where)
            if not locations.is_remote(target) and not os.path.exists(target):
                if missing_ok:
                    return None
                raise CorruptStoreError(f"external file {ref.source!r} does not exist", where)
            try:
                self.ios[target] = self._open(target, ref, where)
            except UnsupportedOperation:  # a remote file that is not there
                if missing_ok:
                    return None
                raise CorruptStoreError(f"external file {ref.source!r} does not exist", where) from None
        found = self.node(target, ref.path)
        if found is None:
            zarr_file = self.zarr.get(target)  # a Zarr file says why (e.g. a link to a link)
            why = zarr_file.why_missing(ref.path, "") if zarr_file is not None else f"{ref.path!r} does not exist"
            raise CorruptStoreError(f"in external file {ref.source!r}: {why}", where)
        return found

    def _open(self, target: str, ref: Reference, where: str) -> HDMFIO:
        if locations.is_remote(target) or os.path.isdir(target) or target.endswith(".zip"):
            # Another file in the same place is opened with the same store options (credentials); its
            # links and references resolve through this cache.
            zarr_file = self.zarr[target] = self.open_zarr(target, self)
            return zarr_file
        import h5py
        from hdmf.backends.hdf5 import HDF5IO

        if not h5py.is_hdf5(target):
            raise CorruptStoreError(f"external file {ref.source!r} is neither a Zarr store nor an HDF5 file", where)
        return HDF5IO(target, mode="r", manager=self.manager())

    def node(self, file: str, path: str) -> Builder | None:
        """The parentless builder handed out for ``path`` in ``file`` (made on first use)."""
        key = (file, path)
        if key in self.cache:
            return self.cache[key]
        io = self.ios[file]
        zarr_file = self.zarr.get(file)
        if zarr_file is not None and not zarr_file.tree_is_read:
            if file in self._reading:
                raise CorruptStoreError(f"links between files form a cycle back into {file}", path)
            self._reading.add(file)
        try:
            original = zarr_file.builder_at(path) if zarr_file is not None else _builder_at(io, path)
        finally:
            self._reading.discard(file)
        return None if original is None else self._copy(file, path, original)

    def _copy(self, file: str, path: str, original: Builder) -> Builder:
        if isinstance(original, DatasetBuilder):
            copy: Builder = DatasetBuilder(
                original.name, data=None, dtype=original.dtype, source=file, dimension_labels=original.dimension_labels
            )
        else:
            copy = GroupBuilder(original.name, source=file)
        copy.location = posixpath.dirname(path) if path != "/" else "/"
        self.cache[(file, path)] = copy  # before the children: cycles end here
        if isinstance(original, GroupBuilder):
            for child in list(original.groups.values()) + list(original.datasets.values()):
                child_path = posixpath.join(path, child.name)
                sub = self.cache.get((file, child_path))
                if sub is None or sub.parent is not None:
                    sub = self._copy(file, child_path, child)
                (copy.set_group if isinstance(sub, GroupBuilder) else copy.set_dataset)(sub)
            for link in original.links.values():
                copy.set_link(LinkBuilder(builder=self._map(file, link.builder), name=link.name, source=file))
        else:
            data = original.data
            if isinstance(data, ReferenceBuilder):
                data = ReferenceBuilder(self._map(file, data.builder))
            copy["data"] = data
        for key, value in original.attributes.items():
            copy.set_attribute(key, self._map(file, value))
        return copy

    def _map(self, file: str, value: Any) -> Any:
        """Builders of the other file's own tree, replaced by the ones this cache hands out."""
        if isinstance(value, list):
            return [self._map(file, v) for v in value]
        if not isinstance(value, Builder) or any(value is b for b in self.cache.values()):
            return value
        top, names = value, []
        while top.parent is not None:
            names.append(top.name)
            top = top.parent
        if top is not self.ios[file].read_builder():
            return value  # already a builder of a third file
        return self.node(file, "/" + "/".join(reversed(names)))


def _builder_at(io: HDMFIO, path: str) -> Builder | None:
    """The builder at ``path`` in the full tree another backend's ``io`` reads (HDF5IO's)."""
    node: Any = io.read_builder()
    for part in [p for p in path.split("/") if p]:
        if not isinstance(node, GroupBuilder):
            return None
        node = node.groups.get(part) or node.datasets.get(part) or node.links.get(part)
        if isinstance(node, LinkBuilder):
            node = node.builder
    return node
