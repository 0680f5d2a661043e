"""Chunks and shards encoded and decoded directly, without zarr's per-array machinery."""

__all__: list[str] = []
