"""Nothing lost, nothing read that should not be: locks, journal, rollback, recovery."""

__all__: list[str] = []
