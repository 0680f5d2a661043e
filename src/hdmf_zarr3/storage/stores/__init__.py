"""Opening a store: what a user passes becomes a StoreHandle with its documents."""

from typing import TYPE_CHECKING

from ..._doors import door

if TYPE_CHECKING:
    from . import local_paths, locations, nodes
    from .handle import CREATE_MODES, StoreHandle
    from .listing import list_objects, object_sizes, stored_sizes
    from .locations import store_location
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
    from .opening import open_store
    from .options import to_obstore
    from .pools import WorkPools
    from .zarr_adapter import array_metadata_as_zarr_writes_it, selection_write, sync

__all__ = [
    "CREATE_MODES",
    "INTERRUPTED_WRITE",
    "StoreHandle",
    "WorkPools",
    "ZARR_JSON",
    "array_metadata_as_zarr_writes_it",
    "bounded",
    "check_document",
    "dump_document",
    "get_keys",
    "list_objects",
    "local_paths",
    "locations",
    "nodes",
    "object_sizes",
    "open_store",
    "parse_document",
    "put_documents",
    "put_keys",
    "read_root",
    "reserved_key",
    "selection_write",
    "store_location",
    "stored_sizes",
    "sync",
    "to_obstore",
]
__getattr__ = door(__name__, __file__)
