"""A path, URL or Store opened as a StoreHandle (mode, lock and replacement decided once), and what
undoes a killed writer: recovery of its file, the breaking of its lock."""

from . import local_paths
from .handle import CREATE_MODES, StoreHandle
from .lock_breaking import break_lock
from .recovery import recover
from .store_opening import open_store

__all__ = [
    "CREATE_MODES",
    "StoreHandle",
    "break_lock",
    "local_paths",
    "open_store",
    "recover",
]
