"""nwbinspector's messages located for the objects our io reads, as they are for an HDF5 file (issue #42).

nwbinspector (0.7) gives a message the location of its object only when a field of the object is an
``h5py.Dataset`` (or a ``zarr.Array`` when hdmf-zarr is installed): its private
``nwbinspector._registration._parse_location``. Our lazy datasets are neither, and must not pretend to be
(HDMF calls h5py's API on whatever passes ``isinstance(x, h5py.Dataset)``), so 13 of the 24 messages of a
file read by us had no location where the HDF5 twin's had the object's path.

This module is the one place naming that private function. :func:`install`, called on every read by our io,
wraps it, once, in the module nwbinspector registered its checks with (now if nwbinspector is imported, else
the moment it is, through a finder on ``sys.meta_path`` that removes itself): where nwbinspector finds no
location for an object read by an io of the class given, the object's node path is given instead, by HDF5's
rule (:func:`node_path`). Anything else is left to nwbinspector as it was; a failure to find the path leaves
the location empty, never fails a check. ``tests/integrations/test_nwbinspector_locations.py`` fails when
nwbinspector moves or renames the function.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import importlib.util
import posixpath
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

#: nwbinspector's module calling :data:`FUNCTION` for every message, and that function's name.
MODULE, FUNCTION = "nwbinspector._registration", "_parse_location"
#: Set on the wrapper: a function already wrapped is not wrapped again.
MARK = "_hdmf_zarr3_located"


def node_path(container: Any, io: Any) -> str | None:
    """Where HDF5 would locate ``container`` read by ``io``: its group's node path, or for a dataset the group
    holding it (``None`` when ``io`` built no builder for it)."""
    from hdmf.build import DatasetBuilder

    builder = io.manager.get_builder(container)
    if builder is None:
        return None
    names = []
    node = builder
    while node is not None and node.parent is not None:
        names.append(node.name)
        node = node.parent
    path = "/" + "/".join(reversed(names))
    return posixpath.dirname(path) if isinstance(builder, DatasetBuilder) else path


def install(io_class: type) -> None:
    """Locate nwbinspector's messages about objects read by an ``io_class`` (see the module's description)."""
    module = sys.modules.get(MODULE)
    if module is not None:
        wrap(module, io_class)
    elif not any(isinstance(finder, _WhenImported) for finder in sys.meta_path):
        sys.meta_path.insert(0, _WhenImported(io_class))


def wrap(module: ModuleType, io_class: type) -> None:
    """Wrap ``module``'s :data:`FUNCTION` (once): no location found there, for an object ``io_class`` read, is
    its :func:`node_path`."""
    found = getattr(module, FUNCTION, None)
    if not callable(found) or getattr(found, MARK, False):
        return

    @functools.wraps(found)
    def located(neurodata_object: Any) -> Any:  # (nwbinspector passes it by this keyword)
        where = found(neurodata_object=neurodata_object)
        if where is not None:
            return where
        try:
            io = neurodata_object.get_read_io()
            return node_path(neurodata_object, io) if isinstance(io, io_class) else None
        except Exception:  # (an object of no file, a builder gone): no location, as nwbinspector says
            return None

    setattr(located, MARK, True)
    setattr(module, FUNCTION, located)


class _WhenImported(importlib.abc.MetaPathFinder):
    """Finds nwbinspector's registration module with the other finders, and wraps it once it is executed."""

    def __init__(self, io_class: type) -> None:
        self.io_class = io_class

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> Any:
        if fullname != MODULE:
            return None
        sys.meta_path.remove(self)  # (once: later reads wrap the module directly; and not found by itself)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _WrappingLoader(spec.loader, self.io_class)
        return spec


class _WrappingLoader(importlib.abc.Loader):
    """``loader``, with :func:`wrap` run on the module it executed."""

    def __init__(self, loader: Any, io_class: type) -> None:
        self.loader, self.io_class = loader, io_class

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        wrap(module, self.io_class)
