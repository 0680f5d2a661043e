"""The zarr.json documents: what a node may declare and what a file's tree says."""

__all__: list[str] = []
