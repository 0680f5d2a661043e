"""h5py below the backend: region references, layout text, virtual chunks, destinations."""

__all__: list[str] = []
