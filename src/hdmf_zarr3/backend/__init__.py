"""The HDMF backend: :class:`~.io.ZarrIO` and :class:`~.nwb.NWBZarrIO` map builders onto Zarr v3 and back.

- :mod:`.io`, :mod:`.nwb` -- the ``HDMFIO`` classes; they orchestrate, the modules below do the work.
- :mod:`.writer`, :mod:`.reader` -- one pass over a builder tree each, mirroring one another.
- :mod:`.datasets` -- lazy datasets handed out by a read; :mod:`.externals` -- links into other files.
- :mod:`.spec_cache`, :mod:`.spec_copy` -- the cached specifications.
- :mod:`.dataio`, :mod:`.layout_choice`, :mod:`.streaming`, :mod:`.parallel` -- how data is laid out
  and written.

Rules come from :mod:`hdmf_zarr3.format`, bytes go through :mod:`hdmf_zarr3.storage`.
"""
