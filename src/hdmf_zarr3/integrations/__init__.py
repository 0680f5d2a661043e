"""Adapters to other libraries: Dask arrays in and out, HTML for Jupyter, the narrow hdmf shims, HDMF's private
names, h5py's global lock, and nwbinspector's locations. Each module imports its library where it is used (dask
inside the functions that need it), so importing this door imports none of them beyond what HDMF already has."""

from . import dask_arrays, hdmf_shims, nwbinspector_locations
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
    "nwbinspector_locations",
]
