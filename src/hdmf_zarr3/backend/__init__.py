"""The HDMF backend: :class:`~.zarrio.ZarrIO` and :class:`~.zarrio.NWBZarrIO` map builders onto Zarr v3 and back.

Its rooms, each with a door (``__all__``) the others import through:

- :mod:`.zarrio` -- ZarrIO and NWBZarrIO: opening, reading, writing, hdmf-zarr's API, delegated below.
- :mod:`.write` -- writing a builder tree: one walk into a WritePlan, then the plan stored in batches.
- :mod:`.read` -- reading a builder tree: one pass over the node documents, and the files it links into.
- :mod:`.datasets` -- lazy, h5py-like datasets handed to HDMF on read, and what changes them in place.
- :mod:`.settings` -- ZarrDataIO: per-dataset storage settings, and what it takes from hdmf-zarr users.
- :mod:`.specs` -- the cached specifications: read, written, and kept across an export or conversion.

Rules come from :mod:`hdmf_zarr3.format`, bytes go through :mod:`hdmf_zarr3.storage`.
"""

__all__ = ["datasets", "read", "settings", "specs", "write", "zarrio"]
