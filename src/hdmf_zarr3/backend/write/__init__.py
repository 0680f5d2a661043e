"""Writing a builder tree: one walk into a WritePlan, then the plan stored in batches."""

__all__: list[str] = []
