"""The hdmf_zarr3 storage format: how HDMF builders become Zarr v3 metadata, attributes and arrays.

Everything in this package is pure (no I/O). Read together, its rooms are the specification; from the
bottom up, each imports only the rooms before it (import-linter's "format rooms" contract):

- :mod:`.vocabulary` -- the words of every rule: HDMF dtypes as Zarr v3 data types, reserved names and
  the format version, node paths, what an array document says (:class:`~.vocabulary.ArrayView`).
- :mod:`.layout` -- every layout rule: chunks, shards and codecs, default, from HDF5, or refused.
- :mod:`.documents` -- the ``zarr.json`` documents: groups and arrays, what a node may declare (limits),
  consolidated metadata, whether a file is complete.
- :mod:`.data` -- values: attribute and compound values as JSON, object references and links, a
  dataset's values as the array stored.
- :mod:`.specs` -- the cached specifications as stored, and checked before HDMF sees them.
- :mod:`.dialects` -- the conventions other HDMF writers used, mapped onto this package's own model.
"""

__all__ = ["data", "dialects", "documents", "layout", "specs", "vocabulary"]
