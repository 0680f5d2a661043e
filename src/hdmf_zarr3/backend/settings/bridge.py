"""Keep ``DataIO`` settings that HDMF drops while building reference datasets.

HDMF's ObjectMapper re-wraps the data of reference datasets (object references, compounds with
reference fields) in a ``DataIO`` only for ``H5DataIO`` and hdmf-zarr's ``ZarrDataIO``; for any other
``DataIO`` the builder gets the bare list and the settings are lost. Before a write we remember the
``DataIO`` of every ``Data`` container, and after the build we map it to the container's builder, so
the writer can honour the settings whatever DataIO class carried them.
"""

from __future__ import annotations

from typing import Any

from hdmf.build import BuildManager
from hdmf.container import AbstractContainer, Data
from hdmf.data_utils import DataIO

from .dataio import ZarrDataIO
from .layout_choice import ZarrSettings


def collect(container: AbstractContainer) -> dict[int, tuple[Data, DataIO]]:
    """``DataIO`` wrappers of every ``Data`` container below ``container``, by container id."""
    found: dict[int, tuple[Data, DataIO]] = {}
    stack = [container]
    seen: set[int] = set()
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, Data) and isinstance(obj.data, DataIO):
            found[id(obj)] = (obj, obj.data)
        stack.extend(getattr(obj, "children", ()))
    return found


def by_builder(found: dict[int, tuple[Data, DataIO]], manager: BuildManager) -> dict[int, DataIO]:
    """Map the collected wrappers to the ids of the builders made from their containers."""
    out: dict[int, DataIO] = {}
    for container, dataio in found.values():
        builder = manager.get_builder(container)
        if builder is not None:
            out[id(builder)] = dataio
    return out


def settings(dataio: Any) -> ZarrSettings | dict[str, Any]:
    """The storage settings of a ``DataIO`` as the writer reads them.

    Our ``ZarrDataIO`` spells its ``io_settings`` as hdmf-zarr does (``compressors: None`` for none);
    its :attr:`~hdmf_zarr3.ZarrDataIO.write_settings` carry the same choices in the writer's terms (a
    :class:`~.layout_choice.ZarrSettings`).
    Any other ``DataIO`` (``H5DataIO``...) is read through its ``io_settings``.
    """
    if isinstance(dataio, ZarrDataIO):
        return dataio.write_settings
    return dict(getattr(dataio, "io_settings", None) or {})
