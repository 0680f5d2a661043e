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
from .obstore_keys import (
    ARGUMENTS,
    CLIENT_KEYS,
    FSSPEC_AS_OBSTORE,
    HTTP_ARGUMENTS,
    HTTP_IGNORED,
    IGNORED,
    KINDS,
    OBSTORE_KEYS,
    PREFIXES,
    STORE_NAMES,
    canonical,
)
from .options import to_obstore
from .ranged_file import BlockCachedFile

__all__ = [
    "ObjectStoreOptions",
    "translate_options",
    "ARGUMENTS",
    "BlockCachedFile",
    "CLIENT_KEYS",
    "FSSPEC_AS_OBSTORE",
    "HTTP_ARGUMENTS",
    "HTTP_IGNORED",
    "IGNORED",
    "KINDS",
    "OBSTORE_KEYS",
    "PREFIXES",
    "STORE_NAMES",
    "canonical",
    "http_sources",
    "is_http",
    "read_root_and_top",
    "read_root_bytes",
    "ready_store",
    "refuse_other_objects",
    "remote_store",
    "to_obstore",
    "unfit",
]
