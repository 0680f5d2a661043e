"""Lazy, h5py-like datasets handed to HDMF on read, and what changes them in place."""

__all__: list[str] = []
