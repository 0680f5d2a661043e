"""HDMF's private names this package needs, reached here and nowhere else.

HDMF offers no public name for either: :func:`hdf5io_file` is the open ``h5py.File`` of an ``HDF5IO``
(``HDF5IO._file``; the specifications a conversion copies are read from it and written into it), and
:func:`iterator_block` reads one region of a user's ``GenericDataChunkIterator`` (``_get_data(selection)``,
the method every subclass implements, which the parallel writer's worker processes call for the regions they
write). ``tests/project/test_library_privates.py`` checks both against the installed HDMF, so an HDMF that
renames or changes them fails there, not in a conversion. Imports nothing of this package.
"""

from __future__ import annotations

from typing import Any

__all__ = ["hdf5io_file", "iterator_block"]


def hdf5io_file(io: Any) -> Any:
    """The ``h5py.File`` an open ``hdmf.backends.hdf5.HDF5IO`` reads or writes (``None`` once it is closed).

    Parameters
    ----------
    io : hdmf.backends.hdf5.HDF5IO
        The io (or ``NWBHDF5IO``).
    """
    return io._file


def iterator_block(iterator: Any, selection: tuple[slice, ...]) -> Any:
    """The values of ``selection`` of a ``hdmf.data_utils.GenericDataChunkIterator``, read at random.

    Parameters
    ----------
    iterator : hdmf.data_utils.GenericDataChunkIterator
        The user's iterator (any subclass: each implements ``_get_data``).
    selection : tuple of slice
        The region, one slice per axis.
    """
    return iterator._get_data(selection=selection)
