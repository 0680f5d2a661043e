"""Where the bytes of virtual chunks live: a local file, an object on S3 or a file on a web server.

A :class:`Source` names the file (its URL as virtual chunks record it), its size and what shows that it
changed: the modification time of a local file (nanoseconds), the ETag of an object, the ETag and/or
Last-Modified a web server sends (:mod:`.http_sources`). The same source opens as a file object for h5py
(remote files through obstore's ranged reads), gives the icechunk container and credentials that let a
repository read its chunks, and is checked again when the repository is opened (:func:`check`).
A repository itself may live on S3 too (:func:`repository_storage`), reached with options read the same
way.
"""

from __future__ import annotations

import datetime
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO
from urllib.request import url2pathname

from ...errors import SourceChangedError, StoreError
from ..remote import BlockCachedFile, http_sources, is_http, remote_store, to_obstore


@dataclass(frozen=True)
class Source:
    """A file holding virtual chunks, as it was when it was opened."""

    url: str  # as the chunks record it: file:// (percent-encoded), s3://bucket/key or http(s)://host/path
    size: int
    mtime_ns: int | None = None  # a local file's
    etag: str | None = None  # an object's, a web server's
    modified: str | None = None  # a web server's Last-Modified
    if_match: bool = True  # whether the server honours icechunk's If-Match with the ETag (S3 does)
    redirected_from: str | None = None  # the http(s) URL given, when it redirected here (not recorded)

    @property
    def local_path(self) -> str | None:
        return path_of(self.url)

    def checksum(self) -> dict[str, Any]:
        """What icechunk keeps with each chunk to refuse it once the file changed (``VirtualChunkSpec``)."""
        if self.etag is not None and self.if_match:
            return {"etag_checksum": self.etag}
        if self.modified is not None:  # sent as If-Unmodified-Since
            return {"last_updated_at_checksum": http_sources.modified_at(self.modified)}
        if self.mtime_ns is None:  # a web server that sends neither (warned at the conversion)
            return {}
        # icechunk keeps this stamp to the second and refuses a chunk whose file was modified after it:
        # the next second, then (the exact time is checked at open, see check)
        seconds = -(-(self.mtime_ns or 0) // 10**9)
        return {"last_updated_at_checksum": datetime.datetime.fromtimestamp(seconds, tz=datetime.UTC)}

    def record(self) -> dict[str, Any]:
        """The entry of the repository's record of sources."""
        entry: dict[str, Any] = {"location": self.url, "size": self.size}
        shown = {"mtime_ns": self.mtime_ns, "etag": self.etag, "last_modified": self.modified}
        entry.update({key: value for key, value in shown.items() if value is not None})
        return entry


def is_s3(location: str) -> bool:
    return location[:5].lower() == "s3://"


def path_of(url: str) -> str | None:
    """The local path a ``file://`` URL (percent-encoded) names, or ``None`` for any other URL."""
    return url2pathname(url.removeprefix("file://")) if url.startswith("file://") else None


def local_source(path: str | os.PathLike[str]) -> Source:
    stat = os.stat(path)
    return Source(Path(os.path.realpath(path)).as_uri(), stat.st_size, mtime_ns=stat.st_mtime_ns)


def s3_source(url: str, options: dict[str, Any] | None) -> Source:
    """The object at ``url`` as it is now (one HEAD request)."""
    import obstore

    store, key = _bucket_store(url, options)
    try:
        meta = obstore.head(store, key)
    except Exception as exc:  # obstore's own error types
        try:  # a server may answer an unsigned HEAD with 403 where it serves a GET: ask for one byte
            meta = obstore.get(store, key, options={"range": (0, 1)}).meta
        except Exception:
            raise StoreError(f"cannot read the object: {exc}", url) from exc
    return Source(url, int(meta["size"]), etag=str(meta["e_tag"]))


def http_source(url: str, options: dict[str, Any] | None) -> Source:
    """The file at the http(s) ``url`` as it is now, where its bytes are (after redirects; see
    :mod:`.http_sources`); warns when the server sends nothing but the size to show a change."""
    found = http_sources.resolve(url, options)
    if found.etag is None and found.modified is None:
        warnings.warn(
            f"{found.url}: the server sends neither ETag nor Last-Modified; only a change of the file's size "
            "will be noticed, a file replaced by another of the same size will not",
            http_sources.SizeOnlyWarning,
            stacklevel=3,
        )
    if found.redirected_from is not None:
        warnings.warn(
            f"{url} redirects to {found.url}: the repository reads its chunks from there (allow that prefix "
            "with external_roots)",
            UserWarning,
            stacklevel=3,
        )
    return Source(
        found.url,
        found.size,
        etag=found.etag,
        modified=found.modified,
        if_match=found.if_match,
        redirected_from=found.redirected_from,
    )


def open_file(source: Source, options: dict[str, Any] | None) -> BinaryIO:
    """A file object h5py can read ``source`` through (ranged GETs for a remote file)."""
    if source.local_path is not None:
        return open(source.local_path, "rb")
    import obstore

    if is_http(source.url):
        web = http_sources.WebFile(source.url, source.size, redirected_from=source.redirected_from)
        store, key = http_sources.store_of(web, options)
    else:
        store, key = _bucket_store(source.url, options)

    def fetch(start: int, end: int) -> bytes:
        try:
            return bytes(obstore.get_range(store, key, start=start, end=end))
        except Exception as exc:  # obstore's own error types
            raise OSError(f"cannot read bytes {start}-{end} of {source.url}: {exc}") from exc

    return BlockCachedFile(fetch, source.size)  # type: ignore[return-value]


def container(prefix: str, options: dict[str, Any] | None) -> tuple[Any, Any]:
    """The icechunk virtual chunk container of the S3 URL ``prefix`` (``s3://bucket/``) and the credentials
    that let a repository read it, from the storage options of the source (fsspec or obstore style)."""
    import icechunk

    endpoint, credentials = _s3_settings(options, prefix)
    store = icechunk.s3_store(
        **endpoint, anonymous=bool(credentials.get("anonymous")), s3_compatible=endpoint["endpoint_url"] is not None
    )
    return icechunk.VirtualChunkContainer(prefix, store), icechunk.s3_credentials(**credentials)


def repository_storage(url: str, options: dict[str, Any] | None) -> Any:
    """icechunk's storage of the repository at the S3 URL ``url`` (``s3://bucket/prefix``), reached with
    ``options`` (the storage options of the repository, fsspec or obstore style)."""
    import icechunk

    bucket, _, key = url[5:].partition("/")
    endpoint, credentials = _s3_settings(options, url)
    return icechunk.s3_storage(bucket=bucket, prefix=key.strip("/") or None, **endpoint, **credentials)


def _s3_settings(options: dict[str, Any] | None, url: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """icechunk's settings of the S3 endpoint and of the credentials (``s3_credentials``' arguments) that
    ``options`` name for ``url``, read as obstore reads them (:func:`.options.to_obstore`)."""
    config = to_obstore("s3", options, url)
    endpoint = config.get("endpoint")
    where = {
        "region": config.get("region"),
        "endpoint_url": endpoint,
        "allow_http": bool(config.get("client_options", {}).get("allow_http")),
        "force_path_style": endpoint is not None,  # S3-compatible servers (MinIO, moto) name buckets in paths
    }
    credentials: dict[str, Any]
    if config.get("skip_signature"):
        credentials = {"anonymous": True}
    elif config.get("access_key_id"):
        credentials = {
            "access_key_id": config["access_key_id"],
            "secret_access_key": config.get("secret_access_key"),
            "session_token": config.get("token") or config.get("session_token"),
        }
    else:
        credentials = {"from_env": True}
    return where, credentials


def holds_anything(url: str, options: dict[str, Any] | None) -> bool:
    """Whether an object is at the S3 URL ``url`` or below it, as under a directory (two requests at most).

    Raises
    ------
    StoreError
        The bucket is missing or refuses us.
    """
    import obstore

    store, key = _bucket_store(url, options)
    key = key.strip("/")
    try:
        for batch in obstore.list(store, prefix=key + "/" if key else None, chunk_size=1):
            if batch:
                return True
            break
        if key:
            try:
                obstore.head(store, key)
            except FileNotFoundError:  # what obstore raises for a 404
                return False
            return True
    except Exception as exc:  # obstore's own error types: missing bucket, wrong credentials
        raise StoreError(f"cannot access the destination: {exc}", url) from exc
    return False


def bucket_prefix(url: str) -> str:
    """``s3://bucket/`` of an S3 URL (the container that holds it)."""
    bucket = url[5:].split("/", 1)[0]
    return f"s3://{bucket}/"


def check(entry: dict[str, Any], options: dict[str, Any] | None, where: str) -> None:
    """Refuse (:class:`SourceChangedError`) a source whose recorded size, modification time or ETag
    differs from what it is now, or that is gone."""
    location = entry["location"]
    if is_http(location):
        _check_http(entry, options, where)
        return
    try:
        now = s3_source(location, options) if is_s3(location) else local_source(path_of(location) or location)
    except (OSError, StoreError) as exc:
        raise SourceChangedError(f"the file holding virtual chunks is gone ({location}: {exc})", where) from exc
    then = (entry.get("size"), entry.get("etag") if is_s3(location) else entry.get("mtime_ns"))
    seen = (now.size, now.etag if is_s3(location) else now.mtime_ns)
    if then != seen:
        raise SourceChangedError(
            f"the file holding virtual chunks changed since the repository was made ({location}: size, "
            f"{'ETag' if is_s3(location) else 'modification time'} {then} -> {seen}); make the repository "
            "again from the file as it is now",
            where,
        )


def keys_below(url: str, options: dict[str, Any] | None, most: int) -> list[str] | None:
    """The keys of the objects below the S3 URL ``url`` (relative to it), or ``None`` when there are more than
    ``most`` (the listing stops there)."""
    import obstore

    store, key = _bucket_store(url, options)
    key = key.strip("/")
    found: list[str] = []
    try:
        for batch in obstore.list(store, prefix=key + "/" if key else None, chunk_size=most + 1):
            found += [entry["path"][len(key) + 1 if key else 0 :] for entry in batch]
            if len(found) > most:
                return None
    except Exception as exc:  # obstore's own error types
        raise StoreError(f"cannot list the destination: {exc}", url) from exc
    return found


def delete_below(url: str, options: dict[str, Any] | None) -> None:
    """Delete every object below the S3 URL ``url`` (as under a directory): an unfinished repository."""
    import obstore

    store, key = _bucket_store(url, options)
    key = key.strip("/")
    try:
        for batch in obstore.list(store, prefix=key + "/" if key else None, chunk_size=1000):
            obstore.delete(store, [entry["path"] for entry in batch])
    except Exception as exc:  # obstore's own error types
        raise StoreError(f"cannot remove the unfinished repository: {exc}", url) from exc


def _bucket_store(url: str, options: dict[str, Any] | None) -> tuple[Any, str]:
    """The obstore store of the bucket holding ``url`` (opened as every remote store is) and the key."""
    prefix = bucket_prefix(url)
    wrapped: Any = remote_store(prefix, "r", options)  # (zarr's ObjectStore around an obstore store)
    return wrapped.store, url[len(prefix) :]


def _check_http(entry: dict[str, Any], options: dict[str, Any] | None, where: str) -> None:
    """:func:`check` of a file on a web server: one HEAD request, redirects not followed (a recorded URL
    that now redirects is refused: icechunk would follow it when reading chunks)."""
    location = entry["location"]
    try:
        status, answer = http_sources.head(location, http_sources.request_headers(options, location))
    except StoreError as exc:
        raise SourceChangedError(f"the file holding virtual chunks is gone ({location}: {exc})", where) from exc
    if status in http_sources.REDIRECTS:
        raise SourceChangedError(
            f"the file holding virtual chunks ({location}) now redirects to {answer.get('location')!r}; it "
            "did not when the repository was made: make the repository again from the file as it is now",
            where,
        )
    if status != 200:
        raise SourceChangedError(
            f"the file holding virtual chunks is gone or cannot be read ({location}: HTTP {status})", where
        )
    size = answer.get("content-length")
    seen: dict[str, Any] = {"size": int(size) if size and size.isdigit() else None}
    seen.update(etag=answer.get("etag"), last_modified=answer.get("last-modified"))
    changed = [key for key in ("size", "etag", "last_modified") if key in entry and entry[key] != seen[key]]
    if changed:
        then = tuple(entry[key] for key in changed)
        now = tuple(seen[key] for key in changed)
        raise SourceChangedError(
            f"the file holding virtual chunks changed since the repository was made ({location}: "
            f"{', '.join(_SHOWN[key] for key in changed)} {then} -> {now}); make the repository again from "
            "the file as it is now",
            where,
        )


_SHOWN = {"size": "size", "etag": "ETag", "last_modified": "Last-Modified"}
