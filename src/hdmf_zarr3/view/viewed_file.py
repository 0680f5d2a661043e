"""One NWB Zarr file opened for viewing: the io, the NWBFile, the builder tree, and lookups by node path.

The file is opened read-only through :class:`~hdmf_zarr3.NWBZarrIO` and read lazily: datasets stay
:class:`~hdmf_zarr3.backend.datasets.lazy.ZarrDataset` objects until a view indexes them. Node paths are the
file's own (``/acquisition/ElectricalSeries/data``); HDMF's builders spell the root ``root``.
"""

from __future__ import annotations

import threading
from typing import Any

from hdmf.build import DatasetBuilder, GroupBuilder, LinkBuilder

from ..backend.zarrio import NWBZarrIO
from ..errors import ViewRequestError


def file_path(builder: Any) -> str:
    """The node path of ``builder`` in its file: ``/`` for the root, ``/a/b`` below it."""
    parts = builder.path.split("/")[1:]  # the first part is the root builder's name
    return "/" + "/".join(parts)


class ViewedFile:
    """An NWB Zarr file read by the viewer: the NWBFile and its builder tree, with nodes found by path.

    Not the backend's ``OpenFile`` (what one io holds of its open store) nor storage's ``StoreHandle`` (one open
    store, its mode and lock): a ViewedFile holds an :class:`~hdmf_zarr3.NWBZarrIO` opened read-only and what
    it has read, for the view models to look up.

    Parameters
    ----------
    location : str
        A path or URL (``s3://...``, ``https://...``) of an NWB Zarr file.
    storage_options : dict, optional
        Options of the object store a URL names (as :class:`~hdmf_zarr3.NWBZarrIO` takes them).

    Notes
    -----
    ``lock`` serialises the reads of the request threads: the viewer has one user, and one io read from
    one thread at a time is what the backend is tested for.
    """

    def __init__(self, location: str, storage_options: dict[str, Any] | None = None):
        self.location = str(location)
        self.io = NWBZarrIO(location, mode="r", storage_options=storage_options)
        try:
            self.nwbfile = self.io.read()
            self.root: GroupBuilder = self.io.read_builder()
        except BaseException:
            self.io.close()
            raise
        self.lock = threading.RLock()
        self._paths: dict[str, str] = {}  # object_id -> node path
        self._index(self.root)

    def _index(self, group: GroupBuilder) -> None:
        # links are not followed: a typed node's path is where it is stored
        for child in (*group.groups.values(), *group.datasets.values()):
            object_id = child.attributes.get("object_id")
            if isinstance(object_id, str):
                self._paths.setdefault(object_id, file_path(child))
            if isinstance(child, GroupBuilder):
                self._index(child)
        object_id = group.attributes.get("object_id")
        if isinstance(object_id, str):
            self._paths.setdefault(object_id, file_path(group))

    def close(self) -> None:
        """Close the io (the lazy datasets cannot be read afterwards)."""
        self.io.close()

    def builder_at(self, path: str) -> GroupBuilder | DatasetBuilder | LinkBuilder:
        """The builder at the node ``path`` (links not followed); a :class:`ViewRequestError` (404) if none."""
        node: Any = self.root
        for name in [p for p in path.split("/") if p]:
            if not isinstance(node, GroupBuilder):
                node = None
                break
            node = node.groups.get(name) or node.datasets.get(name) or node.links.get(name)
            if node is None:
                break
        if node is None:
            raise ViewRequestError("the file has no such node", path, status=404)
        return node

    def target_of(self, path: str) -> GroupBuilder | DatasetBuilder:
        """The builder at ``path``, a link followed to what it points at."""
        builder = self.builder_at(path)
        while isinstance(builder, LinkBuilder):
            builder = builder.builder
        return builder

    def container_at(self, path: str) -> Any:
        """The NWB container (``TimeSeries``, ``DynamicTable``, ``Image``...) read from the typed node at ``path``."""
        builder = self.target_of(path)
        object_id = builder.attributes.get("object_id")
        container = self.nwbfile.objects.get(object_id) if isinstance(object_id, str) else None
        if container is None:
            raise ViewRequestError("the node is no NWB object (it has no neurodata type)", path)
        return container

    def path_of(self, obj: Any) -> str | None:
        """The node path of a container or builder read from this file, or ``None`` if it is not one."""
        if isinstance(obj, (GroupBuilder, DatasetBuilder, LinkBuilder)):
            return file_path(obj)
        object_id = getattr(obj, "object_id", None)
        return self._paths.get(object_id) if isinstance(object_id, str) else None
