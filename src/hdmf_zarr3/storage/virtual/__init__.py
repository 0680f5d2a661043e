"""Icechunk repositories whose chunks are read in place from HDF5 files."""

__all__: list[str] = []
