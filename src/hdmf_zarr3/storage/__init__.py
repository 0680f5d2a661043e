"""Bytes in and out: stores (local, zip, memory, object stores, icechunk), locks, the write journal and
rollback, node documents, and the raw chunk and shard codecs of the direct paths.

Its rooms, each with a door (``__all__``) the others import through:

- :mod:`.stores` -- opening a store: what a user passes becomes a StoreHandle with its documents.
- :mod:`.codecs` -- chunks and shards encoded and decoded directly, without zarr's per-array machinery.
- :mod:`.writes` -- many keys stored at once: local directories, appended rows, whole write units.
- :mod:`.safety` -- nothing lost, nothing read that should not be: locks, journal, rollback, recovery.
- :mod:`.remote` -- object stores and web servers: opening, options, retries, one version per reader.
- :mod:`.virtual` -- icechunk repositories whose chunks are read in place from HDF5 files.
- :mod:`.zip` -- single-file stores: a zip replaced atomically or changed in place.
- :mod:`.paths` -- every path a write touches, below the file's real root, never through a symlink.
"""

__all__ = ["codecs", "paths", "remote", "safety", "stores", "virtual", "writes", "zip"]
