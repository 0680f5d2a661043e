"""Chunks that cannot be decoded fail as :class:`CorruptStoreError` naming the array and the chunk.

Decoding a damaged chunk raises whatever the codec raises: numcodecs' ``RuntimeError`` (blosc, zstd),
``ValueError`` (a chunk of the wrong size cannot be reshaped), ``zlib.error``, ``TypeError``... and zarr
raises its own errors for metadata it refuses when an array is opened. This module turns them into
``CorruptStoreError`` with ``.path`` the array's path in the file and a message saying which chunk and
what is wrong, on every read path: zarr's codec pipeline (:func:`checked_pipeline`) and this package's
own decoders (:func:`decode_error`).

It also closes a hole in blosc: numcodecs decodes a blosc frame by the sizes its 16-byte header
declares, so a truncated frame is decoded from memory past its end (the chunk reads as whatever bytes
were there) and a frame may claim up to 2 GiB of output. :func:`check_blosc_frame` refuses a frame whose
length is not the one its header declares (installed into numcodecs' ``Blosc.decode`` by :func:`install`
when a store is opened, so zarr's reads are covered too), and this package's decoders also require the
decoded size of a chunk.
"""

from __future__ import annotations

import gzip
import lzma
import struct
import threading
import zlib
from collections.abc import Iterable
from typing import Any

import numcodecs

from ...errors import CorruptStoreError, HdmfZarrError

BLOSC_HEADER = 16
_INSTALL_LOCK = threading.Lock()
#: What decoding a damaged chunk raises (numcodecs, numpy, zlib, lzma, struct); never MemoryError,
#: KeyboardInterrupt or the like, which say nothing about the file.
DECODE_ERRORS = (
    ValueError,
    TypeError,
    RuntimeError,
    OverflowError,
    KeyError,
    IndexError,
    EOFError,
    AttributeError,
    zlib.error,
    lzma.LZMAError,
    struct.error,
    gzip.BadGzipFile,
)


def first_ours(exc: BaseException) -> HdmfZarrError | None:
    """The first of our own errors in ``exc`` (itself, or inside an exception group, or its cause)."""
    seen = set()
    stack = [exc]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, HdmfZarrError):
            return item
        if isinstance(item, BaseExceptionGroup):
            stack.extend(reversed(item.exceptions))
        if item.__cause__ is not None:
            stack.append(item.__cause__)
    return None


def decode_error(exc: BaseException, path: str, what: str) -> HdmfZarrError:
    """``exc`` (raised reading ``what`` of the array at ``path``) as one of our errors."""
    ours = first_ours(exc)
    if ours is not None:
        return ours
    detail = str(exc) or type(exc).__name__
    return CorruptStoreError(f"{what} cannot be decoded ({type(exc).__name__}: {detail[:300]})", path)


def check_blosc_frame(data: Any, expected: int | None = None) -> None:
    """Raise ``ValueError`` unless ``data`` is exactly the blosc frame its header declares (decoding to
    ``expected`` bytes, when given)."""
    view = memoryview(data).cast("B") if not isinstance(data, (bytes, bytearray)) else memoryview(data)
    if len(view) < BLOSC_HEADER:
        raise ValueError(f"blosc frame of {len(view)} bytes is shorter than its {BLOSC_HEADER}-byte header")
    nbytes, _, cbytes = struct.unpack_from("<III", view, 4)
    if cbytes != len(view):
        raise ValueError(f"blosc frame is {len(view)} bytes but its header declares {cbytes}")
    if expected is not None and nbytes != expected:
        raise ValueError(f"blosc frame decodes to {nbytes} bytes, a chunk holds {expected}")


def decode_whole(codec: Any, data: Any) -> Any:
    """Decode one chunk whole with ``codec``. gzip is decoded in one call of ``zlib.decompress`` instead of numcodecs'
    ``GzipFile`` stream (Python 3.12's streaming ``_ZlibDecompressor`` crashed once on a truncated
    chunk in our hostile-file tests); one member, as zarr writes it, nothing after it."""
    if isinstance(codec, numcodecs.GZip):
        inflate = zlib.decompressobj(31)  # 16 + 15: a gzip header and trailer, the largest window
        out = inflate.decompress(bytes(data))
        if not inflate.eof:
            raise EOFError("gzip chunk ends before its end-of-stream marker")
        if inflate.unused_data:
            raise ValueError(f"gzip chunk has {len(inflate.unused_data)} bytes after its end")
        return out
    return codec.decode(data)


def install() -> None:
    """Check every blosc frame numcodecs decodes in this process from now on (idempotent, thread-safe).

    Called when this package opens a store (:func:`.stores.open_store`, so by every ``ZarrIO``), never at
    import. Works around numcodecs' blosc decoder trusting the sizes a frame's header declares (numcodecs
    issue #228, open): a truncated frame is decoded from memory past its end. ``Blosc.decode`` is wrapped
    to run :func:`check_blosc_frame` first and then numcodecs' own ``decode`` unchanged; a well-formed frame
    decodes exactly as before, so other users of numcodecs in the process see no difference. Not
    version-gated: the check is harmless on a numcodecs that validates frames itself.
    """
    from numcodecs.blosc import Blosc

    with _INSTALL_LOCK:
        original = Blosc.decode
        if getattr(original, "_hdmf_zarr3_checked", False):
            return

        def decode(self: Any, buf: Any, out: Any = None) -> Any:
            from numcodecs.compat import ensure_contiguous_ndarray

            check_blosc_frame(ensure_contiguous_ndarray(buf))
            return original(self, buf, out)

        decode._hdmf_zarr3_checked = True  # type: ignore[attr-defined]
        decode.__wrapped__ = original  # type: ignore[attr-defined]
        decode.__doc__ = original.__doc__
        Blosc.decode = decode


class CheckedPipeline:
    """zarr's codec pipeline of one array, whose read errors name the array and the chunk."""

    def __init__(self, inner: Any, path: str):
        self._inner = inner
        self._path = path

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_inner", "_path"):  # (while a copy is being unpickled)
            raise AttributeError(name)
        return getattr(self._inner, name)

    async def read(self, batch_info: Iterable[tuple], out: Any, drop_axes: tuple[int, ...] = ()) -> Any:
        batch = list(batch_info)
        try:
            return await self._inner.read(batch, out, drop_axes)
        except Exception as exc:  # noqa: BLE001 - any codec or zarr error on a chunk of this array
            if isinstance(exc, MemoryError):
                raise
            ours = first_ours(exc)
            if ours is not None:
                raise ours from exc
            culprit = await self._culprit(batch, out, drop_axes) if len(batch) > 1 else batch[0]
            raise decode_error(exc, self._path, self._chunk(culprit)) from exc

    async def _culprit(self, batch: list[tuple], out: Any, drop_axes: tuple[int, ...]) -> tuple:
        """The first chunk of ``batch`` that fails on its own (to name it); the first one if none does."""
        for item in batch:
            try:
                await self._inner.read([item], out, drop_axes)
            except Exception:  # noqa: BLE001 - this is the chunk to name
                return item
        return batch[0]

    def _chunk(self, item: tuple) -> str:
        key = str(getattr(item[0], "path", "") or "")
        prefix = self._path.strip("/") + "/"
        return f"chunk {key[len(prefix) :] if key.startswith(prefix) else key}"


def checked_pipeline(array: Any, path: str) -> Any:
    """``array`` (a zarr ``AsyncArray``) with read errors naming ``path`` and the chunk."""
    pipeline = array.codec_pipeline
    if not isinstance(pipeline, CheckedPipeline):
        object.__setattr__(array, "codec_pipeline", CheckedPipeline(pipeline, path))
    return array
