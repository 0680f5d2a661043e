"""Opening a store: what a user passes becomes a StoreHandle with its documents."""

__all__: list[str] = []
