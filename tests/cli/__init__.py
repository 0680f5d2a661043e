"""Tests of ``hdmf_zarr3.cli``: the ``hdmf-zarr3`` command."""
