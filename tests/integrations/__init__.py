"""Tests of ``hdmf_zarr3.integrations``: dask, the notebook HTML, the hdmf shims."""
