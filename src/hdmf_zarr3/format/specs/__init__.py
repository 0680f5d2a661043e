"""Cached specifications as stored, and checked before HDMF sees them."""

__all__: list[str] = []
