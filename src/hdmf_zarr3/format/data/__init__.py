"""Data types and values: how HDMF values become stored arrays and JSON."""

__all__: list[str] = []
