"""HDF5 specifics: h5py's region references and layouts met by the writer, and :func:`~.conversion.convert`,
which copies whole files between HDF5 and Zarr through the two backends."""

from typing import TYPE_CHECKING

from .._doors import door

if TYPE_CHECKING:
    from .conversion import convert

__all__ = [
    "convert",
]
__getattr__ = door(__name__, __file__)
