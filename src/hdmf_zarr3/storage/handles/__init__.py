"""A path, URL or Store opened as a StoreHandle (mode, lock and replacement decided once), and what
undoes a killed writer: recovery of its file, the breaking of its lock."""

from . import local_paths
from .handle import CREATE_MODES, StoreHandle
from .lock_breaking import break_lock
from .opening_decisions import Opening, decide
from .recovery import recover
from .store_opening import open_decided, open_store

__all__ = [
    "CREATE_MODES",
    "Opening",
    "StoreHandle",
    "break_lock",
    "decide",
    "local_paths",
    "open_decided",
    "open_store",
    "recover",
]
