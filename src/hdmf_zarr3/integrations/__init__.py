"""Adapters to other libraries: Dask arrays in and out, HTML for Jupyter, and the narrow hdmf shims."""
