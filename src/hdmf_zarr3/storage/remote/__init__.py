"""Object stores and web servers: opening, options, retries, one version per reader."""

from . import http_sources
from .http_sources import is_http, unfit
from .object_stores import (
    ObjectStoreOptions,
    read_root_and_top,
    read_root_bytes,
    ready_store,
    refuse_other_objects,
    remote_store,
    translate_options,
)
from .options import to_obstore
from .ranged_file import BlockCachedFile

__all__ = [
    "BlockCachedFile",
    "ObjectStoreOptions",
    "http_sources",
    "is_http",
    "read_root_and_top",
    "read_root_bytes",
    "ready_store",
    "refuse_other_objects",
    "remote_store",
    "to_obstore",
    "translate_options",
    "unfit",
]
