"""Every layout rule: chunks, shards and codecs, default, from HDF5, or refused."""

__all__: list[str] = []
