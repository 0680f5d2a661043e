"""Nothing lost, nothing read that should not be: locks, journal, rollback, guarded reads, audit."""

from . import audit, journal, locks, open_files, store_failures
from .guarded import DOCUMENT_NAMES, GuardedLocalStore, GuardedZipStore, ReadBounds, limit_reads
from .living_store import LivingStore
from .local_reads import ObjectFile, too_large
from .lock_places import IN_STORE_KEY, LockPlace, lock_place, transactional
from .locks import WriteLock
from .open_files import Lifetime
from .replacing import LocalReplacement, replace_in_place, working_directory
from .rollback import Rollback
from .self_overwrite import refuse_self_overwrite

__all__ = [
    "DOCUMENT_NAMES",
    "GuardedLocalStore",
    "GuardedZipStore",
    "IN_STORE_KEY",
    "Lifetime",
    "LivingStore",
    "LocalReplacement",
    "LockPlace",
    "ObjectFile",
    "ReadBounds",
    "Rollback",
    "WriteLock",
    "audit",
    "journal",
    "limit_reads",
    "lock_place",
    "locks",
    "open_files",
    "refuse_self_overwrite",
    "replace_in_place",
    "store_failures",
    "too_large",
    "transactional",
    "working_directory",
]
