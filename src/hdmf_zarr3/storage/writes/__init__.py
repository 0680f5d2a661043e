"""Many keys stored at once: local directories, appended rows, whole write units."""

__all__: list[str] = []
