"""Bytes in and out: stores (local, zip, memory, object stores, icechunk), locks, the write journal and
rollback, node documents, and the raw chunk and shard codecs of the direct paths.

Its rooms, bottom up; each imports only those below it (import-linter's ``storage`` contract), through their
doors (``__all__``):

- :mod:`.paths` -- every path a write touches, below the file's real root, never through a symlink.
- :mod:`.stores` -- a store's keys and node documents, zarr's private API, local keys, one chunk's bytes.
- :mod:`.safety` -- nothing lost, nothing read that should not be: locks, journal, rollback, guarded reads.
- :mod:`.codecs` -- chunks and shards encoded and decoded directly, without zarr's per-array machinery.
- :mod:`.writes` -- many keys stored at once: appended rows, whole write units.
- :mod:`.remote` -- object stores and web servers: opening, options, retries, one version per reader.
- :mod:`.zip` -- single-file stores: a zip replaced atomically or changed in place.
- :mod:`.virtual` -- icechunk repositories whose chunks are read in place from HDF5 files.
- :mod:`.handles` -- a path, URL or Store opened as a StoreHandle; recovery; breaking a lock.
"""

__all__ = ["codecs", "handles", "paths", "remote", "safety", "stores", "virtual", "writes", "zip"]
