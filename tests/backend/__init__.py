"""Tests of ``hdmf_zarr3.backend``: ZarrIO and NWBZarrIO, reading and writing, datasets, hdmf-zarr compatibility."""
