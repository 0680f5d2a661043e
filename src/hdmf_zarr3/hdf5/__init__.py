"""HDF5 specifics: h5py's region references and layouts met by the writer, and :func:`~.conversion.convert`,
which copies whole files between HDF5 and Zarr through the two backends."""
