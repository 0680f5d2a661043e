"""Adapters to other libraries: Dask arrays in and out, HTML for Jupyter, and the narrow hdmf shims."""

from typing import TYPE_CHECKING

from .._doors import door

if TYPE_CHECKING:
    from . import dask_arrays, hdmf_shims
    from .dask_arrays import is_dask
    from .h5py_lock import h5py_lock_released
    from .hdmf_private import hdf5io_file, iterator_block
    from .html import dataset_html, describe

__all__ = [
    "dask_arrays",
    "dataset_html",
    "describe",
    "h5py_lock_released",
    "hdf5io_file",
    "hdmf_shims",
    "is_dask",
    "iterator_block",
]
__getattr__ = door(__name__, __file__)
