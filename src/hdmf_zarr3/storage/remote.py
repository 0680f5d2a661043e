"""Object stores (S3, GCS, Azure, HTTP) opened from a URL, through obstore."""

from __future__ import annotations

from typing import Any

from zarr.abc.store import Store
from zarr.core.sync import sync

from ..errors import StoreError


def remote_store(url: str, mode: str, options: dict[str, Any] | None) -> Store:
    try:
        import obstore.store
        from zarr.storage import ObjectStore
    except ImportError as exc:  # an optional dependency
        raise ImportError(f"opening {url} needs obstore: pip install 'hdmf_zarr3[remote]'") from exc
    options = dict(options or {})
    if options.pop("anon", False) and not url.lower().startswith(("http://", "https://")):
        options["skip_signature"] = True  # plain HTTP has no signature to skip: anon means what it always is
    try:
        backend = obstore.store.from_url(url.rstrip("/"), **options)
    except Exception as exc:  # obstore raises its own error types for bad URLs and options
        raise StoreError(f"cannot open {url}: {exc}") from exc
    return ObjectStore(backend, read_only=(mode == "r"))


def read_root_bytes(store: Store, location: str) -> bytes | None:
    """The root ``zarr.json`` (``None`` if absent); a bucket that is missing or refuses us is a StoreError."""
    from zarr.core.buffer import default_buffer_prototype

    try:
        buf = sync(store.get("zarr.json", prototype=default_buffer_prototype()))
        if buf is None:
            sync(_probe(store))
        return None if buf is None else buf.to_bytes()
    except Exception as exc:  # missing bucket, wrong credentials, unreachable endpoint
        raise StoreError(f"cannot access {location}: {exc}") from exc


async def _probe(store: Store) -> bool:
    """List at most one key: object stores answer a missing key with 404 but a missing bucket with an error."""
    async for _ in store.list_dir(""):
        break
    return False
