"""ZarrDataIO: per-dataset storage settings, and what it takes from hdmf-zarr users."""

__all__: list[str] = []
