"""The one module of hdmf_zarr3 that uses zarr-python's private API (``zarr.core.*`` and underscore names).

Everything else in the package imports zarr's public modules only (``zarr``, ``zarr.abc.*``,
``zarr.buffer``, ``zarr.dtype``, ``zarr.storage``, ``zarr.registry``, ``zarr.errors``), and
``tests/project/test_zarr_adapter.py`` holds it to that. What zarr offers only privately is wrapped here, so a zarr
release that moves or changes it breaks one module, and the checks below say what to look at.

Each wrapper was checked against zarr-python 3.4.2 (the version this package is developed with; it needs
zarr >= 3.4). A public equivalent, once zarr has one, should replace the wrapper's body.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import numpy as np
import zarr
from zarr.abc.store import Store, _store_supports_sync_io
from zarr.buffer import default_buffer_prototype
from zarr.core.indexing import BasicIndexer, OrthogonalIndexer, ensure_tuple, replace_lists
from zarr.core.metadata.v3 import ArrayV3Metadata
from zarr.core.sync import _get_loop

from .task_groups import Group, install, settled

__all__ = ["array_metadata_as_zarr_writes_it", "selection_write", "store_supports_sync_io", "sync"]


def sync[T](coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` on zarr's own event loop thread and return its result (or raise its exception).

    Why private: zarr-python 3.4.2 has no public way to run a coroutine on its IO loop
    (``zarr.core.sync.sync``); its synchronous ``zarr.Array`` uses this function. Our synchronous API
    (HDMF's is synchronous) must drive the same loop the stores' async methods were bound to, so the
    coroutines of a store opened by zarr are run here rather than by ``asyncio.run``.

    Unlike zarr's own ``sync``, everything the coroutine starts on the loop (tasks, and the store
    operations they run on the loop's threads) has ended, finished or cancelled, when this returns or
    raises, also when this thread is interrupted (Ctrl-C) while it waits: then the coroutine is cancelled,
    waited for, and the ``KeyboardInterrupt`` raised after. A rollback that follows a failure therefore
    never races the writes of the failed operation (see :mod:`.task_groups`).
    """
    loop = _get_loop()
    install(loop)
    return settled(loop, Group(), coroutine)


def selection_write(array: zarr.Array, selection: Any, values: Any, orthogonal: bool) -> Callable[[], None]:
    """What ``array[selection] = values`` (``array.oindex[selection] = values`` when ``orthogonal``) stores,
    as a function that stores it through :func:`sync`: so a Ctrl-C (or a failure of one chunk) while it runs
    cancels and awaits zarr's write tasks before anything else (an undo) happens.

    The selection and the values are checked here, before anything is stored: an ``IndexError`` or a
    ``ValueError`` (values that do not broadcast to the selection) comes before the first write.

    Why private: zarr-python 3.4.2 runs ``Array.__setitem__`` and ``Array.oindex`` assignment through its
    own ``sync``, which returns to a thread interrupted by Ctrl-C while the chunk writes go on; the
    coroutine underneath (``AsyncArray._set_selection`` with zarr's indexers from ``zarr.core.indexing``,
    as ``Array.set_basic_selection`` and ``Array.set_orthogonal_selection`` build them) is private.
    """
    target = array.async_array
    grid = target._chunk_grid
    if orthogonal:
        indexer: Any = OrthogonalIndexer(replace_lists(ensure_tuple(selection)), target.shape, grid)
    else:
        indexer = BasicIndexer(selection, target.shape, grid)
    value = np.broadcast_to(np.asarray(values), indexer.shape)

    def write() -> None:
        sync(target._set_selection(indexer, value, prototype=default_buffer_prototype()))

    return write


def wrapped_store(store: Any) -> Any:
    """The store that ``store`` wraps, if it is a zarr ``WrapperStore`` (ours: :class:`..safety.LivingStore`,
    the virtual repository's reader), else ``None``.

    Why private: zarr-python 3.4.2's ``WrapperStore`` keeps the store it wraps as ``_store`` and has no public
    name for it; subclasses reach it through here (tests/project/test_zarr_adapter.py checks the name)."""
    return getattr(store, "_store", None)


def store_supports_sync_io(store: Store) -> bool:
    """Whether ``store`` serves zarr's whole synchronous IO surface (``get_sync``, ``set_sync``,
    ``delete_sync``) right now: local files, memory, and wrappers of them.

    Why private: zarr-python 3.4.2 decides this with ``zarr.abc.store._store_supports_sync_io``, which adds
    to the public ``SupportsSyncStore`` protocol a store's own opt-out (a wrapper of a remote store has
    the methods but cannot run them). Using zarr's predicate keeps our fast synchronous paths on exactly
    the stores zarr's codec pipeline itself reads synchronously.
    """
    return _store_supports_sync_io(store)


def array_metadata_as_zarr_writes_it(document: dict[str, Any]) -> dict[str, Any]:
    """The Zarr v3 array document ``document`` parsed by zarr and serialised back: every default filled
    in and the codecs as zarr records them when it creates an array (they may still hold enums).

    Raises whatever zarr raises for a document it refuses (``TypeError``, ``ValueError``, ``KeyError``...)
    and emits the warnings it emits when it repairs one. ``document`` may be changed: pass a copy.

    Why private: zarr-python 3.4.2 parses array metadata only with
    ``zarr.core.metadata.v3.ArrayV3Metadata`` (``from_dict``/``to_dict``); no public function checks a
    document without a store.
    """
    return ArrayV3Metadata.from_dict(document).to_dict()
