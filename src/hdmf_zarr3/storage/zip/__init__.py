"""Single-file stores: a zip replaced atomically or changed in place."""

__all__: list[str] = []
