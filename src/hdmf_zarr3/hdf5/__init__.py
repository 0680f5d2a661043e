"""Whole files between HDF5 and Zarr: :func:`~.conversion.convert` copies them through the two backends
(``virtual=True``: into an icechunk repository whose chunks stay in the HDF5 file). ``EVERY`` is the key of
``convert``'s ``chunks``/``shards``/``codec`` mappings standing for every other dataset (``"*"``)."""

from .conversion import EVERY, convert

__all__ = [
    "EVERY",
    "convert",
]
