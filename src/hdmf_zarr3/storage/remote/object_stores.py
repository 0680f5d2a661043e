"""Object stores (S3, GCS, Azure, HTTP) opened from a URL, through obstore."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from zarr.abc.store import Store

from ...errors import StoreError
from ..stores import locations, object_store_url, sync
from .options import to_obstore
from .remote_object_store import RemoteObjectStore, bounded


@dataclass(frozen=True)
class ObjectStoreOptions:
    """``storage_options`` translated once (fsspec's or obstore's convention, see :mod:`.options`) into obstore's
    keyword arguments, our bounded retries included: what every object store of one opening is made with (the
    file's own, the one its write lock lies in)."""

    kind: str  # obstore's kind of store: "s3", "gcs", "azure" or "http"
    arguments: Mapping[str, Any]  # (read-only)


def _obstore(url: str) -> Any:
    try:
        import obstore
        import obstore.store
    except ImportError as exc:  # an optional dependency
        raise ImportError(f"opening {url} needs obstore: pip install 'hdmf_zarr3[remote]'") from exc
    return obstore


def _plain_url(url: str) -> str:
    url = url.rstrip("/")
    return "gs://" + url[6:] if url[:6].lower() == "gcs://" else url  # (gcsfs's spelling, unknown to obstore)


def translate_options(url: str, options: Mapping[str, Any] | None) -> ObjectStoreOptions:
    """``storage_options`` for the object store at ``url``, translated and checked (:class:`StoreError` naming
    the option): done once per opening, the result handed to :func:`remote_store` for each store it opens."""
    obstore, given, url = _obstore(url), url, _plain_url(url)
    try:
        kind = obstore.parse_scheme(url)
    except Exception as exc:  # a URL obstore cannot place
        raise StoreError(f"cannot open {given}: {exc}") from exc
    kwargs = bounded(to_obstore(kind, options, given))
    for key, value in kwargs.items():  # checked here: obstore parses an endpoint at the first request, panicking
        if isinstance(value, str) and ("endpoint" in key or key == "base_url") and not key.startswith("use_"):
            problem = locations.url_problem(value, frozenset({"http", "https"}))
            if problem is not None:
                raise StoreError(f"cannot open it: the endpoint {value[:300]!r} ({key}) {problem}", given)
    return ObjectStoreOptions(kind, MappingProxyType(kwargs))


def remote_store(url: str, mode: str, options: Mapping[str, Any] | ObjectStoreOptions | None) -> Store:
    """The zarr ``ObjectStore`` of ``url``, configured by ``storage_options`` in fsspec's or obstore's
    convention (see :mod:`.options`), or by what :func:`translate_options` made of them (not translated again)."""
    settings = options if isinstance(options, ObjectStoreOptions) else translate_options(url, options)
    obstore, given, url = _obstore(url), url, _plain_url(url)
    try:
        backend = obstore.store.from_url(url, **settings.arguments)
    except Exception as exc:  # obstore raises its own error types for bad URLs and options
        raise StoreError(f"cannot open {given}: {exc}") from exc
    return _for_mode(RemoteObjectStore(backend, read_only=(mode == "r"), location=url), mode)


def _for_mode(store: RemoteObjectStore, mode: str) -> RemoteObjectStore:
    """``store``, tagging what it writes as a new file in the modes that write one (:mod:`.generations`)."""
    if mode in ("w", "w-", "x"):
        store.start_generation()
    return store


def ready_store(path: Any, mode: str) -> Any:
    """``path`` as a zarr Store when it is a store of another library that zarr wraps: an obstore store
    (``ObjectStore``) or an fsspec mapper (``FsspecStore``); anything else as it is."""
    library = type(path).__module__.split(".")[0]
    read_only = mode in ("r", "r-")
    if library == "obstore":
        return _for_mode(
            RemoteObjectStore(path, read_only=read_only, location=object_store_url(path) or repr(path)), mode
        )
    if library == "fsspec" and hasattr(path, "fs") and hasattr(path, "root"):  # fsspec.FSMap
        from zarr.storage import FsspecStore

        return FsspecStore.from_mapper(path, read_only=read_only)
    return path


def refuse_other_objects(store: Store, location: str, lock_key: str, top: frozenset[str] | None = None) -> None:
    """Refuse to write a file where ``store`` (an object store prefix or bucket without a Zarr root) already
    holds other objects, as a local directory of other files is refused: the new file would be mixed with
    them, and a later ``w`` would delete them all. ``top``: the names at the top of the store, when listed
    already (no request is then made unless something is there). Our own in-store lock (``lock_key``) is
    not another's."""
    if top is not None and not (top - {lock_key}):
        return
    example = sync(_first_key(store, skip=lock_key))
    if example is not None:
        raise StoreError(
            "this prefix holds other objects and no Zarr file (e.g. "
            f"{location.rstrip('/')}/{example}): writing would mix the new file with them (and mode 'w' "
            "would later delete them); choose a new prefix",
            location,
        )


async def _first_key(store: Store, skip: str) -> str | None:
    async for key in store.list_prefix(""):
        if key != skip:
            return key
    return None


def read_root_bytes(store: Store, location: str) -> bytes | None:
    """The root ``zarr.json`` (``None`` if absent); a bucket that is missing or refuses us is a StoreError."""
    return _read_root(store, location, first_only=True)[0]


def read_root_and_top(store: Store, location: str) -> tuple[bytes | None, frozenset[str]]:
    """The root ``zarr.json`` of an object store opened from a URL (``None`` if absent) and, when it is
    absent, the names at the top of the store.

    Those names come from the listing that tells a missing file from a missing bucket, which is made
    anyway: obstore lists a level whole (every page) before yielding its first name, so knowing them all
    costs no request, and they show an icechunk repository (``virtual_repo.holds_repository``).
    """
    return _read_root(store, location, first_only=False)


def _read_root(store: Store, location: str, first_only: bool) -> tuple[bytes | None, frozenset[str]]:
    from zarr.buffer import default_buffer_prototype

    try:
        buf = sync(store.get("zarr.json", prototype=default_buffer_prototype()))
        if buf is not None:
            return buf.to_bytes(), frozenset()
        return None, frozenset(sync(_probe(store, first_only)))
    except Exception as exc:  # missing bucket, wrong credentials, unreachable endpoint; a full disk or EIO below
        error = StoreError(f"cannot access {location}: {exc}")
        error.errno = exc.errno if isinstance(exc, OSError) else None  # (ENOSPC stays ENOSPC for code checking it)
        raise error from exc


async def _probe(store: Store, first_only: bool) -> list[str]:
    """The names at the top of ``store`` (only the first with ``first_only``: a store given by the caller
    may list lazily): object stores answer a missing key with 404 but a missing bucket with an error."""
    names = []
    async for name in store.list_dir(""):
        names.append(name)
        if first_only:
            break
    return names
