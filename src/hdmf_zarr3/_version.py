"""The package version, in a module of its own so that modules below the package root (the store
layer names its writer) read it without importing ``hdmf_zarr3/__init__.py``."""

__version__ = "0.1.0.dev0"
