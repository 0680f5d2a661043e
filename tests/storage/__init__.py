"""Tests of ``hdmf_zarr3.storage``: stores (local, zip, memory, S3, icechunk), locks, the journal, chunk codecs."""
