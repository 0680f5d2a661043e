"""A store's keys and node documents: where a store is, zarr's private API (one adapter), the io's thread
pools, node documents read and written (format 3 and 2), the document cache, listings, local keys written
at once, and the bytes of one chunk decoded."""

from . import decoding, locations, nodes
from .decoding import DECODE_ERRORS, check_blosc_frame, checked_pipeline, decode_error, decode_whole
from .document_cache import DocumentCache
from .listing import list_objects, object_sizes, stored_sizes
from .local import finish_cleanup, local_root, put_files, remove_tree, remove_tree_settled
from .locations import BUCKETS, object_store_url, store_location
from .missing_chunks import ChunkPromises
from .nodes import (
    INTERRUPTED_WRITE,
    ZARR_JSON,
    bounded,
    check_document,
    dump_document,
    get_keys,
    parse_document,
    put_documents,
    put_keys,
    read_root,
    reserved_key,
)
from .pools import WorkPools, before_threads_stop
from .recycled_memory import RecycledMemory
from .single_chunk import bytes_to_bytes, decode_chunk, decode_single_chunk, encode_chunk, encode_single_chunk
from .task_groups import Group, ShieldingExecutor, install, record, settled, until_done
from .v2 import ZARRAY, ZGROUP, ZMETADATA
from .zarr_adapter import array_metadata_as_zarr_writes_it, selection_write, sync, wrapped_store

__all__ = [
    "BUCKETS",
    "ChunkPromises",
    "DECODE_ERRORS",
    "DocumentCache",
    "Group",
    "INTERRUPTED_WRITE",
    "RecycledMemory",
    "ShieldingExecutor",
    "WorkPools",
    "ZARRAY",
    "ZARR_JSON",
    "ZGROUP",
    "ZMETADATA",
    "array_metadata_as_zarr_writes_it",
    "before_threads_stop",
    "bounded",
    "bytes_to_bytes",
    "check_document",
    "check_blosc_frame",
    "checked_pipeline",
    "decode_chunk",
    "decode_error",
    "decode_whole",
    "decode_single_chunk",
    "decoding",
    "dump_document",
    "encode_chunk",
    "encode_single_chunk",
    "finish_cleanup",
    "get_keys",
    "install",
    "list_objects",
    "local_root",
    "locations",
    "nodes",
    "object_sizes",
    "object_store_url",
    "parse_document",
    "put_documents",
    "put_files",
    "put_keys",
    "read_root",
    "record",
    "remove_tree",
    "remove_tree_settled",
    "reserved_key",
    "selection_write",
    "settled",
    "store_location",
    "stored_sizes",
    "sync",
    "wrapped_store",
    "until_done",
]
