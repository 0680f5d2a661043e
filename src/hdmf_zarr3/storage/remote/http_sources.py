"""HDF5 files on a web server (``http://`` or ``https://``, a DANDI asset URL, say) as sources of virtual
chunks: what the server says of a file, and the icechunk container that reads its byte ranges.

What a server says
    A HEAD request gives the size (``Content-Length``) and whatever shows a change that the server
    sends: its ``ETag``, its ``Last-Modified``, both, or neither. Each virtual chunk carries one of them
    for icechunk to send as a condition of its ranged GET (``If-Match`` or ``If-Unmodified-Since``; the
    server answers 412 once the file changed). icechunk sends the ETag without its quotes, which strict
    servers do not match: the conversion asks the server once (a HEAD with that ``If-Match``) and uses
    the ETag for chunks only if it is honoured, else ``Last-Modified``. A server that sends neither
    leaves the size alone to show a change: the conversion warns (:class:`SizeOnlyWarning`).

Redirects
    The conversion follows redirects (at most :data:`MAX_REDIRECTS`) and records the URL where the
    bytes are, not the one given: a DANDI asset URL (``https://api.dandiarchive.org/api/assets/<id>/
    download/``) becomes the S3 object it redirects to. A target with a query string (a signed URL,
    which expires) is recorded without it, if the server serves it so; else the conversion is refused.
    Headers of ``src_storage_options`` (credentials, often) are sent to the host given only, never
    after a redirect to another host. A reader must allow the recorded URL's prefix
    (``external_roots``), so the other host is never read silently. When the repository is opened, the
    recorded URL is asked again without following redirects: a URL that now redirects is refused
    (:class:`~hdmf_zarr3.errors.SourceChangedError`), because icechunk's HTTP client (icechunk 2.3)
    follows redirects when it reads a chunk and has no setting to stop it.

The repository keeps its http(s) containers without headers or client settings (headers are often
secrets); a reader builds each allowed one again from its own storage options, ignoring what the
repository says of it (a crafted repository cannot route chunk reads through a proxy of its choosing).

URLs with credentials, a query string, a fragment, ``.``/``..`` path segments or an encoded ``/`` or
``\\`` in a segment are refused as sources
and as containers (:func:`unfit`): a container prefix with ``..`` could name a place outside the prefix
a reader allowed.
"""

from __future__ import annotations

import datetime
import email.utils
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

from ...errors import StoreError
from .options import to_obstore

#: Redirects followed from the URL given to the file (DANDI's asset URLs take one).
MAX_REDIRECTS = 5
#: Seconds a HEAD request may take.
TIMEOUT = 30
#: The statuses of a redirect.
REDIRECTS = (301, 302, 303, 307, 308)


class SizeOnlyWarning(UserWarning):
    """The server sends neither ETag nor Last-Modified: only the file's size shows that it changed."""


@dataclass(frozen=True)
class WebFile:
    """A file on a web server as it is now.

    Attributes
    ----------
    url : str
        Where its bytes are (after redirects, without a signed URL's query string).
    size : int
        Its ``Content-Length``.
    etag : str or None
        Its ``ETag`` as sent (quotes, and ``W/`` for a weak one, kept).
    modified : str or None
        Its ``Last-Modified`` as sent.
    if_match : bool
        Whether the server honours icechunk's ``If-Match`` with this ETag.
    redirected_from : str or None
        The URL given, when it redirected.
    """

    url: str
    size: int
    etag: str | None = None
    modified: str | None = None
    if_match: bool = False
    redirected_from: str | None = None


def is_http(location: str) -> bool:
    return location[:7].lower() == "http://" or location[:8].lower() == "https://"


def unfit(url: str) -> str | None:
    """Why ``url`` cannot name a source or a container of virtual chunks, or ``None``."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return "it is not an http:// or https:// URL with a host"
    if parts.username is not None or parts.password is not None:
        return "it holds credentials (give them as headers in the storage options)"
    if "?" in url or "#" in url:
        return "it has a query string or a fragment (a signed URL expires; give the file's plain URL)"
    segments = [unquote(s) for s in parts.path.split("/")]
    if any(s in (".", "..") for s in segments):
        return "its path has '.' or '..' segments"
    if any("/" in s or "\\" in s for s in segments):  # a server that decodes them would go elsewhere
        return "its path has an encoded '/' or '\\' (%2F, %5C)"
    return None


def resolve(url: str, options: dict[str, Any] | None) -> WebFile:
    """The file at ``url`` as it is now, after redirects (HEAD requests, and one more to ask whether
    the server honours ``If-Match``).

    Raises
    ------
    StoreError
        ``url`` is unfit (:func:`unfit`), the server refuses or lacks the file, sends no size, or
        redirects too often, elsewhere than to an http(s) URL, or to a signed URL it serves only signed.
    """
    why = unfit(url)
    if why is not None:
        raise StoreError(f"cannot read virtual chunks from this URL: {why}", url)
    current, headers = url, request_headers(options, url)
    for _ in range(MAX_REDIRECTS + 1):
        status, answer = head(current, headers)
        if status not in REDIRECTS:
            break
        target = urljoin(current, answer.get("location") or "")
        if not is_http(target) or target == current:
            raise StoreError(f"{current} redirects to {target!r}, which is not an http(s) URL", url)
        if _origin(target) != _origin(current):
            headers = {}  # credentials stay with the host they were given for
        current = _plain(target)
    else:
        raise StoreError(f"more than {MAX_REDIRECTS} redirects", url)
    if status != 200:
        signed = current != url and status in (401, 403)
        hint = " (it redirects to a signed URL, and the file is not served without the signature)" if signed else ""
        raise StoreError(f"the server answered {status} for {current}{hint}", url)
    if unfit(current) is not None:
        raise StoreError(f"it redirects to {current}, which cannot hold virtual chunks: {unfit(current)}", url)
    if current.endswith("/"):
        raise StoreError(f"{current} names a directory, not a file", url)
    size = answer.get("content-length")
    if size is None or not size.isdigit():
        raise StoreError(f"the server sends no size (Content-Length) for {current}", url)
    etag, modified = answer.get("etag"), answer.get("last-modified")
    honoured = False
    if etag is not None and not etag.startswith("W/"):  # If-Match never matches a weak ETag
        status, _ = head(current, {**headers, "If-Match": etag.strip('"')})  # as icechunk sends it
        honoured = status == 200
    return WebFile(current, int(size), etag, modified, honoured, url if current != url else None)


def head(url: str, headers: dict[str, str]) -> tuple[int, dict[str, str]]:
    """The status and headers (names in lower case) of a HEAD request to ``url`` (redirects are answers,
    not followed). A server that does not take HEAD (405, 501) is asked for its first byte instead, and
    its answer given as a HEAD's (200, ``Content-Length`` the file's size from ``Content-Range``)."""
    status, answer = _request(url, "HEAD", headers)
    if status not in (405, 501):
        return status, answer
    status, answer = _request(url, "GET", {**headers, "Range": "bytes=0-0"})
    total = answer.get("content-range", "").rpartition("/")[2]
    if status == 206 and total.isdigit():
        return 200, {**answer, "content-length": total}
    return status, answer


def _request(url: str, method: str, headers: dict[str, str]) -> tuple[int, dict[str, str]]:
    request = urllib.request.Request(url, method=method, headers=headers)
    opener = urllib.request.build_opener(_NoRedirects())
    try:
        with opener.open(request, timeout=TIMEOUT) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}
    except urllib.error.HTTPError as error:  # 3xx (not followed), 4xx and 5xx
        return error.code, {k.lower(): v for k, v in error.headers.items()}
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise StoreError(f"cannot reach the server: {getattr(exc, 'reason', exc)}", url) from exc


def modified_at(modified: str) -> datetime.datetime:
    """A ``Last-Modified`` date as the time icechunk sends as ``If-Unmodified-Since``."""
    return email.utils.parsedate_to_datetime(modified).astimezone(datetime.UTC)


def store_of(file: WebFile, options: dict[str, Any] | None) -> tuple[Any, str]:
    """obstore's store of ``file``'s directory and its name there (headers of ``options`` only to the host
    they were given for)."""
    import obstore.store

    directory, name = file.url.rsplit("/", 1)
    config = to_obstore("http", options, file.redirected_from or file.url)
    if file.redirected_from is not None and _origin(file.redirected_from) != _origin(file.url):
        config.get("client_options", {}).pop("default_headers", None)
    try:
        return obstore.store.HTTPStore.from_url(directory, **config), name
    except Exception as exc:  # obstore's own error types
        raise StoreError(f"cannot read the file: {exc}", file.url) from exc


def container(prefix: str, options: dict[str, Any] | None, *, settings: bool = True) -> tuple[Any, Any]:
    """The icechunk virtual chunk container of the URL prefix ``prefix`` (``https://host/dir/``) and the
    grant that lets a repository read it.

    ``options`` (storage options) give the client settings and headers; with ``settings=False`` the
    container has none of them but ``allow_http`` for an ``http://`` prefix: the repository keeps its
    containers, and headers are often secrets. A reader builds the container again with its own options
    (:func:`.virtual_repo.open_readonly`), whatever the repository says.
    """
    import icechunk

    config = to_obstore("http", options if settings else None, prefix)
    client = dict(config.get("client_options", {}))
    headers = {str(k): str(v) for k, v in client.pop("default_headers", {}).items()}
    opts = {str(k): _setting(v) for k, v in client.items()}
    store = icechunk.http_store(opts=opts or None, headers=headers or None)
    return icechunk.VirtualChunkContainer(prefix, store), icechunk.credentials.HttpAccess


def _setting(value: Any) -> str:
    """A client setting as icechunk takes it: text (``"true"``, ``"30000ms"``)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, datetime.timedelta):
        return f"{round(value.total_seconds() * 1000)}ms"
    return str(value)


def request_headers(options: dict[str, Any] | None, url: str) -> dict[str, str]:
    """The headers ``options`` (storage options) add to each request to ``url``."""
    client = to_obstore("http", options, url).get("client_options", {})
    return {str(k): str(v) for k, v in client.get("default_headers", {}).items()}


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


def _plain(url: str) -> str:
    """``url`` without its query string and fragment (a signed URL's signature)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # the 3xx answer is raised as an HTTPError, and read as an answer
