"""Object stores and web servers: opening, options, retries, one version per reader."""

__all__: list[str] = []
