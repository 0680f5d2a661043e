"""Tests of ``hdmf_zarr3.hdf5``: conversion to and from HDF5, region references, re-layout."""
