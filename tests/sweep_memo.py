"""What the exhaustive fault sweeps may share between their runs (issue #27: every operation index, in a fraction
of the time).

A sweep repeats one write for every operation index k. Profiled, most of each run was HDMF's own work, the same
in every run and touching no store (so no operation the sweeps count or fail):

- opening a file with ``load_namespaces`` (``NWBZarrIO`` without a manager, as ``convert`` opens its source):
  PyNWB's type map deep-copied, then every namespace cached in the file parsed into HDMF spec objects and its
  types registered (about 0.5 s a run, more than the rest of a conversion);
- opening a new file without a manager (``convert``'s destination): PyNWB's type map deep-copied (0.1 s);
- writing: the type map's namespaces turned into the spec documents cached in every file (about 50 ms a run).

:func:`shared_hdmf_work` does each once per sweep. ``NWBZarrIO`` gets one type map for every file it loads
namespaces from, and another (never loaded into) for every file it creates; the library still reads the cached
documents from the store and checks them in every run, and HDMF is handed them again unless it already loaded
these very documents into that type map. A catalog's spec documents are computed once (a copy is handed to each
write). Every store operation and h5py call of the library still runs, in the same order, in every run.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hdmf.build import BuildManager, TypeMap
from pynwb import get_manager, get_type_map

from hdmf_zarr3.backend.cached_specs import cache as spec_cache
from hdmf_zarr3.backend.zarrio import nwb
from hdmf_zarr3.format.specs import cache_layout as speccache


@contextlib.contextmanager
def shared_hdmf_work() -> Iterator[None]:
    """Within the block, ``NWBZarrIO`` shares its type maps and spec documents are computed once per catalog."""
    loading = _loading_once(get_type_map())  # (copies of PyNWB's: the global one is never loaded into)
    creating = get_type_map()
    documents = spec_cache.catalog_documents
    computed: dict[tuple[int, tuple[tuple[str, str], ...] | None], tuple[Any, Any]] = {}

    @functools.wraps(documents)
    def catalog_documents(catalog: Any, namespaces: list[str] | None = None) -> Any:
        names = list(catalog.namespaces if namespaces is None else namespaces)
        key = (id(catalog), tuple((ns, str(catalog.get_namespace(ns).version)) for ns in names))
        if key not in computed:
            computed[key] = (catalog, documents(catalog, namespaces))  # (the catalog kept: its id stays its own)
        cached = computed[key][1]
        # a copy (ns -> version -> name -> text): a write never sees another's documents
        return {ns: {v: dict(named) for v, named in versions.items()} for ns, versions in cached.items()}

    patch = pytest.MonkeyPatch()
    patch.setattr(nwb, "get_type_map", lambda: loading)
    patch.setattr(nwb, "get_manager", lambda **kw: get_manager(**kw) if kw else BuildManager(creating))
    patch.setattr(spec_cache, "catalog_documents", catalog_documents)
    try:
        yield
    finally:
        patch.undo()


def _loading_once(type_map: TypeMap) -> TypeMap:
    """``type_map``, whose ``load_namespaces`` hands HDMF the same documents only once (then returns what it
    returned then): loading them again changes nothing but costs HDMF its parsing and registering again."""
    load = type_map.load_namespaces
    loaded: dict[str, Any] = {}

    def load_namespaces(namespace_path: str, resolve: bool = True, reader: Any = None) -> Any:
        key = None
        if isinstance(reader, dict):  # (spec_cache's: namespace -> its reader; the documents parsed once)
            key = json.dumps([_documents(ns, r) for ns, r in sorted(reader.items())], sort_keys=True)
        if key is None or key not in loaded:
            done = load(namespace_path, resolve=resolve, reader=reader)
            if key is None:
                return done
            loaded[key] = done
        return copy.deepcopy(loaded[key])

    type_map.load_namespaces = load_namespaces  # type: ignore[method-assign]
    return type_map


def _documents(ns: str, reader: Any) -> list[Any]:
    """What ``reader`` hands HDMF for namespace ``ns``: its namespace document and the sources it names."""
    namespaces = reader.read(speccache.NAMESPACE_DOC)
    sources = [
        item["source"]
        for entry in namespaces.get("namespaces", [])
        for item in entry.get("schema", [])
        if isinstance(item.get("source"), str)
    ]
    return [ns, reader.group, namespaces, *(reader.read(name) for name in sources)]


#: A tmpfs the runs may write into, and the room it must have (a run's files take a few MiB at most).
TMPFS, ROOM = Path("/dev/shm"), 256 * 2**20


@contextlib.contextmanager
def runs_dir(fallback: Path) -> Iterator[Path]:
    """A directory for a sweep's runs: in a tmpfs when there is one with room, else ``fallback``.

    On a disk, the directories and files every run creates, renames and removes cost a third of the run
    (``rmdir`` alone took milliseconds on an ext4 with ``discard``); the sweeps test the library's calls
    (each one counted and failed in turn), not the disk's.
    """
    try:
        usable = TMPFS.is_dir() and os.access(TMPFS, os.W_OK) and shutil.disk_usage(TMPFS).free > ROOM
    except OSError:
        usable = False
    if not usable:
        yield fallback
        return
    where = Path(tempfile.mkdtemp(prefix="hdmf-zarr3-sweep-", dir=TMPFS))
    try:
        yield where
    finally:
        shutil.rmtree(where, ignore_errors=True)
