"""The cached specifications: read, written, and kept across an export or conversion."""

__all__: list[str] = []
