"""The hdmf_zarr3 storage format: how HDMF builders become Zarr v3 metadata, attributes and arrays.

Everything in this package is pure (no I/O). Read together, its rooms are the specification:

- :mod:`.documents` -- the ``zarr.json`` documents: reserved names, the format version, what a node may
  declare (limits), consolidated metadata, whether a file is complete.
- :mod:`.data` -- data types and values: HDMF dtypes as Zarr v3 data types, attribute and compound
  values as JSON, object references and links.
- :mod:`.layout` -- every layout rule: chunks, shards and codecs, default, from HDF5, or refused.
- :mod:`.specs` -- the cached specifications as stored, and checked before HDMF sees them.
- :mod:`.dialects` -- the conventions other HDMF writers used, mapped onto this package's own model.
"""

__all__ = ["data", "dialects", "documents", "layout", "specs"]
