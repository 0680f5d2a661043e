"""Nothing lost, nothing read that should not be: locks, journal, rollback, recovery."""

from typing import TYPE_CHECKING

from ..._doors import door

if TYPE_CHECKING:
    from . import audit, failures, locks, open_files
    from .guarded import DOCUMENT_NAMES, GuardedLocalStore, GuardedZipStore, ReadBounds, limit_reads, too_large
    from .living_store import LivingStore
    from .lock_places import IN_STORE_KEY, lock_place, transactional
    from .locks import WriteLock
    from .open_files import Lifetime
    from .recovery import recover
    from .replacing import LocalReplacement, replace_in_place, working_directory
    from .rollback import Rollback
    from .self_overwrite import refuse_self_overwrite

__all__ = [
    "DOCUMENT_NAMES",
    "ReadBounds",
    "too_large",
    "GuardedLocalStore",
    "GuardedZipStore",
    "IN_STORE_KEY",
    "Lifetime",
    "LivingStore",
    "LocalReplacement",
    "Rollback",
    "WriteLock",
    "audit",
    "failures",
    "limit_reads",
    "lock_place",
    "locks",
    "open_files",
    "recover",
    "refuse_self_overwrite",
    "replace_in_place",
    "transactional",
    "working_directory",
]
__getattr__ = door(__name__, __file__)
