"""ZarrIO and NWBZarrIO: opening, reading, writing, hdmf-zarr's API, delegated below."""

__all__: list[str] = []
