"""Bytes in and out: stores (local, zip, memory, object stores, icechunk), locks, the write journal and
rollback, node documents, and the raw chunk and shard codecs of the direct paths."""
