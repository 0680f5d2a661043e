"""pytest plugin for hdmf-zarr 0.14's own unit tests: its public classes are bound to hdmf_zarr3's before
its test modules import them (``-p bind_hdmf_zarr3`` with this folder on ``PYTHONPATH``)."""

import hdmf_zarr
import hdmf_zarr.backend
import hdmf_zarr.nwb
import hdmf_zarr.utils

import hdmf_zarr3

for module in (hdmf_zarr, hdmf_zarr.backend, hdmf_zarr.nwb, hdmf_zarr.utils):
    for name in ("ZarrIO", "NWBZarrIO", "ZarrDataIO"):
        if hasattr(module, name):
            setattr(module, name, getattr(hdmf_zarr3, name))
