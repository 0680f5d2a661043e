"""Reading a builder tree: one pass over the node documents, and the files it links into."""

__all__: list[str] = []
