"""The hdmf_zarr3 storage format: how HDMF builders become Zarr v3 metadata, attributes and arrays.

Everything in this package is pure (no I/O). Read together, the modules are the specification:

- :mod:`.names` -- reserved attribute names, the format version, path helpers.
- :mod:`.dtypes` -- HDMF dtype <-> Zarr v3 data type and the ``zarr_dtype`` attribute.
- :mod:`.values` -- encoding of attribute values (typed envelopes) and compound rows as JSON.
- :mod:`.references` -- object reference and link records.
- :mod:`.documents` -- the ``zarr.json`` documents of groups and arrays, chunk and codec defaults.
- :mod:`.speccache` -- the layout of the cached specifications.
"""
