"""The HDMF backend: :class:`~.zarrio.ZarrIO` and :class:`~.zarrio.NWBZarrIO` map builders onto Zarr v3 and back.

Its rooms, from the top down; each imports only the rooms below it (import-linter's contract in
pyproject.toml), through their doors (``__all__``):

- :mod:`.zarrio` -- ZarrIO and NWBZarrIO: opening, reading, writing, hdmf-zarr's API, delegated below.
- :mod:`.read` -- reading a builder tree: one pass over the node documents, and the files it links into.
- :mod:`.write` -- writing a builder tree: one walk into a WritePlan, then the plan stored in batches.
- :mod:`.datasets` -- lazy, h5py-like datasets handed to HDMF on read, and what changes them in place.
- :mod:`.cached_specs` -- the cached specifications: read, written, and kept across an export or conversion.
- :mod:`.settings` -- ZarrDataIO: per-dataset storage settings, and the layout they choose.
- :mod:`.contexts` -- what the io classes hand the rooms above: frozen contexts, the closed-file registry.

Rules come from :mod:`hdmf_zarr3.format`, bytes go through :mod:`hdmf_zarr3.storage`.
"""

__all__ = ["cached_specs", "contexts", "datasets", "read", "settings", "write", "zarrio"]
