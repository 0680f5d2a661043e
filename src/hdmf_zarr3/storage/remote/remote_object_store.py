"""Failed requests to object stores: retried with a bound, then :class:`~hdmf_zarr3.RemoteStoreError` naming
the node and the key.

obstore retries a failed request (5xx, a dropped connection, a timeout) by its ``retry_config`` (bounded: see
:data:`DEFAULT_RETRY`) and then raises its own ``GenericError``, whose message names an HTTP URL but
no array; zarr passes it through, and decoding would otherwise take it for a damaged chunk. zarr's
``ObjectStore`` is subclassed here so that every request it makes raises our typed error instead, naming
the array (or group) the key belongs to, the key, and obstore's first line (which says how many retries were
made). A missing object stays a missing key (zarr answers ``None``), as before.

Objects are stored with one PUT each up to S3's limit for one (5 GiB), never as multipart uploads: a
multipart upload that its writer does not finish (killed) stays in the bucket, invisible, until it is
aborted, and obstore can neither list nor abort other writers' uploads.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Iterator, Mapping
from datetime import timedelta
from typing import Any

from zarr.abc.buffer import Buffer, BufferPrototype
from zarr.abc.store import ByteRequest, OffsetByteRequest, RangeByteRequest, SuffixByteRequest
from zarr.storage import ObjectStore

from ...errors import RemoteStoreError
from ..safety import DOCUMENT_NAMES, ReadBounds, too_large
from ..stores import ChunkPromises, object_store_url
from .allowance import ByteAllowance
from .generations import GENERATION, ROOT_KEY, check_generation, new_generation

#: Retries of a failed request (5xx, dropped connection, timeout), unless ``storage_options`` give
#: ``retry_config``: at most 5, none started 30 s after the first attempt; then a ``RemoteStoreError``.
DEFAULT_RETRY: dict[str, Any] = {
    "max_retries": 5,
    "retry_timeout": timedelta(seconds=30),
    "backoff": {"init_backoff": timedelta(milliseconds=100), "max_backoff": timedelta(seconds=5), "base": 2.0},
}


def bounded(kwargs: dict[str, Any]) -> dict[str, Any]:
    """obstore's keyword arguments (from :func:`.options.to_obstore`) with our retries where they give none: obstore's
    own retry a request for 3 minutes, so an endpoint that accepts connections and never answers held a writer
    for minutes (issue #27). Timeouts stay obstore's (connect 5 s, a whole request 30 s): giving
    ``client_options`` here would replace those obstore reads from the environment (``AWS_ALLOW_HTTP``...)."""
    return {**kwargs, "retry_config": kwargs.get("retry_config") or dict(DEFAULT_RETRY)}


#: The largest object stored with one PUT (S3's limit); larger ones are multipart uploads.
SINGLE_PUT_LIMIT = 5 * 1024**3


def _failed(exc: BaseException) -> bool:
    """Whether ``exc`` is a request that failed (not a missing key, nor a conditional write refused)."""
    import obstore.exceptions as oe

    return isinstance(exc, (oe.GenericError, oe.JoinError, oe.PermissionDeniedError, oe.UnauthenticatedError))


def node_of(key: str) -> str:
    """The node a key belongs to: ``"acquisition/ts/data/c/0/1"`` -> ``"/acquisition/ts/data"``."""
    parts = key.strip("/").split("/")
    if parts[-1] == "zarr.json":
        return "/" + "/".join(parts[:-1])
    for i in range(len(parts) - 1, -1, -1):
        rest = parts[i + 1 :]
        if (parts[i] == "c" and all(p.isdigit() for p in rest)) or (parts[i].startswith("c.") and not rest):
            return "/" + "/".join(parts[:i])
    return "/" + "/".join(parts[:-1])


class RemoteObjectStore(ReadBounds, ObjectStore):
    """zarr's ``ObjectStore`` whose failed requests raise :class:`RemoteStoreError` (``location``: the URL of
    the store's root, for messages), and which reads no object larger than its metadata allows (as the
    guarded local stores: its size comes with the response, before the body)."""

    def __init__(self, store: Any, *, read_only: bool = False, location: str = "") -> None:
        super().__init__(store, read_only=read_only)
        self.location = location.rstrip("/")
        self._init_bounds()
        self.documents_in_flight = ByteAllowance()  # node documents downloading at once
        #: The file version this store reads or writes (:mod:`.generations`): a new file's, or the root's.
        self.generation: str | None = None
        # (obstore keeps user metadata on S3, GCS and Azure; its local and memory stores refuse it)
        self.tags = object_store_url(store) is not None

    def start_generation(self) -> None:
        """Tag what this store writes as a new file (mode ``w``, ``w-``, ``x``)."""
        self.generation = new_generation()

    def with_read_only(self, read_only: bool = False) -> RemoteObjectStore:
        store = type(self)(self.store, read_only=read_only, location=self.location)
        store.promises, store.generation = self.promises, self.generation
        if self.limited_by is not None:
            store.limit(self.limited_by)
            store.promises = self.promises
        return store

    def limit_reads(self, documents: Mapping[str, dict[str, Any]], promised: bool = True) -> None:
        """Know the node documents the reader uses: a chunk that must be stored and is not is an error
        (``promised``: not in an incomplete file), and no object is read past what its array allows."""
        self.limit(documents, promised)

    def __getstate__(self) -> dict[Any, Any]:
        state = super().__getstate__()
        state.pop("documents_in_flight", None)  # (bound to this process's event loop: a new one is made)
        extra = {"location": self.location, "promises": self.promises.portable(), "generation": self.generation}
        return {**state, **extra, "bounds": self._state_bounds()}

    def __setstate__(self, state: dict[Any, Any]) -> None:
        location = state.pop("location", "")
        promises = state.pop("promises", None) or ChunkPromises()
        generation = state.pop("generation", None)
        bounds = state.pop("bounds", {})
        super().__setstate__(state)
        self._init_bounds()
        self.documents_in_flight = ByteAllowance()
        self.location, self.promises, self.generation, self._bounds = location, promises, generation, bounds

    @contextlib.contextmanager
    def named(self, what: str, key: str) -> Iterator[None]:
        """Turn a failed request of the block (obstore's errors, once its retries are spent) into
        :meth:`error`; anything else passes as it is."""
        try:
            yield
        except Exception as exc:
            if _failed(exc):
                raise self.error(what, key, exc) from exc
            raise

    def error(self, what: str, key: str, exc: BaseException) -> RemoteStoreError:
        """``exc``, raised by a request for ``key``, as our error."""
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        node = node_of(key) if key else "/"
        return RemoteStoreError(
            f"{what} of {key or 'the root listing'!r} (node {node}) failed on the object store: {first[:400]}",
            f"{self.location}/{key}" if key else self.location,
        )

    async def get(self, key: str, prototype: BufferPrototype, byte_range: ByteRequest | None = None) -> Buffer | None:
        with self.named("reading", key):
            found, generation = await self._get(key, prototype, byte_range)
        if found is None:
            if self.read_only:
                self.promises.check(key)
            return None
        if key == ROOT_KEY and self.generation is None:
            self.generation = generation  # (a reader's: the version it opened; an appender's: the one it extends)
        elif self.read_only and not key.endswith(ROOT_KEY):
            # chunks only: node documents are read at open, from the root's copy or, in a file that is not
            # complete (a failed `w` leaves old ones), from the listing, which the completion check judges
            check_generation(generation, self.generation, key, self.location)
        return found

    async def _get(
        self, key: str, prototype: BufferPrototype, byte_range: ByteRequest | None
    ) -> tuple[Buffer | None, str | None]:
        """The bytes of ``key`` (``None`` if absent) and the generation they were stored with (one GET)."""
        import obstore
        from obstore.exceptions import NotSupportedError

        if byte_range is None:
            options: dict[str, Any] = {}
        elif isinstance(byte_range, RangeByteRequest):
            options = {"range": (byte_range.start, byte_range.end)}
        elif isinstance(byte_range, OffsetByteRequest):
            options = {"range": {"offset": byte_range.offset}}
        elif isinstance(byte_range, SuffixByteRequest):
            options = {"range": {"suffix": byte_range.suffix}}
        else:
            raise ValueError(f"unexpected byte range {byte_range!r}")
        try:
            response = await obstore.get_async(self.store, key, options=options)  # type: ignore[arg-type]
            if not isinstance(byte_range, (RangeByteRequest, SuffixByteRequest)):  # a range bounds itself
                node, what, bound = self.owner(key)
                size = int(response.meta["size"]) - (byte_range.offset if byte_range is not None else 0)
                if size > bound:
                    raise too_large(node, what, size, bound)
                if what in DOCUMENT_NAMES:  # (read many at once by a listing reader: their bytes together bounded)
                    async with self.documents_in_flight.take(size):
                        data = await response.bytes_async()
                    return prototype.buffer.from_bytes(data), response.attributes.get(GENERATION)  # type: ignore[arg-type]
            data = await response.bytes_async()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None, None
        except NotSupportedError:  # a store without suffix requests (Azure): zarr asks for the size first
            return await super().get(key, prototype, byte_range), None
        return prototype.buffer.from_bytes(data), response.attributes.get(GENERATION)  # type: ignore[arg-type]

    async def get_partial_values(
        self, prototype: BufferPrototype, key_ranges: Iterable[tuple[str, ByteRequest | None]]
    ) -> list[Buffer | None]:
        key_ranges = list(key_ranges)
        with self.named("reading", key_ranges[0][0] if key_ranges else ""):
            found = await super().get_partial_values(prototype, key_ranges)
        if self.read_only:
            for (key, _), value in zip(key_ranges, found):
                if value is None:
                    self.promises.check(key)
        return found

    async def exists(self, key: str) -> bool:
        with self.named("looking up", key):
            return await super().exists(key)

    async def set(self, key: str, value: Buffer) -> None:
        import obstore

        self._check_writable()
        data = value.as_buffer_like()
        attributes = {GENERATION: self.generation} if self.generation is not None and self.tags else None
        with self.named("writing", key):
            # one PUT below S3's limit for one (5 GiB): obstore would otherwise start a multipart upload
            # above 5 MB, which a killed writer leaves behind, invisible and billed, and obstore cannot list
            await obstore.put_async(
                self.store, key, data, attributes=attributes, use_multipart=len(value) > SINGLE_PUT_LIMIT
            )

    async def set_if_not_exists(self, key: str, value: Buffer) -> None:
        with self.named("creating", key):
            await super().set_if_not_exists(key, value)

    async def delete(self, key: str) -> None:
        with self.named("deleting", key):
            await super().delete(key)

    async def delete_dir(self, prefix: str) -> None:
        with self.named("deleting", prefix):
            await super().delete_dir(prefix)

    async def getsize(self, key: str) -> int:
        with self.named("looking up", key):
            return await super().getsize(key)

    def list(self) -> AsyncGenerator[str, None]:
        return self._checked(super().list(), "")

    def list_prefix(self, prefix: str) -> AsyncGenerator[str, None]:
        return self._checked(super().list_prefix(prefix), prefix)

    def list_dir(self, prefix: str) -> AsyncGenerator[str, None]:
        return self._checked(super().list_dir(prefix), prefix)

    async def _checked(self, names: AsyncIterator[str], prefix: str) -> AsyncGenerator[str, None]:
        with self.named("listing", prefix):
            async for name in names:
                yield name
