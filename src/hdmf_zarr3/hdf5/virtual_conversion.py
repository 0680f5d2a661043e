"""``convert(src, dst, virtual=True)``: an HDF5 NWB file as an icechunk repository whose large datasets
read their chunks in place from the HDF5 file.

Everything but the large numeric datasets is written in our format as by any conversion (groups,
attributes, links, references, compounds, strings, small datasets, the cached specifications); each
large dataset becomes an array of virtual chunks (:mod:`hdmf_zarr3.backend.write.hdf5_in_place`). The
repository is created at ``dst``, a local directory or an ``s3://`` prefix (never replacing anything
there), and committed once, when every node is stored. The destination is locked for the conversion (a
``<dst>.lock`` beside it, as for any writer). A conversion that fails, or is interrupted (Ctrl-C, a full disk,
an I/O error), removes the repository it created; one killed outright leaves a repository without a commit
on ``main``, which reading refuses as incomplete (:class:`~hdmf_zarr3.errors.IncompleteFileError`) and the
next conversion to that destination replaces (once the killed writer's lock is broken).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from ..backend.write import MIN_VIRTUAL_BYTES, VirtualOptions
from ..errors import StoreError
from ..storage.remote import remote_store
from ..storage.safety import WriteLock, lock_place, store_failures
from ..storage.stores import locations
from ..storage.virtual import repo as virtual_repo
from ..storage.virtual import source_files as virtual_sources


def convert_virtual(
    src: str | Path,
    dst: str | Path,
    *,
    progress: bool = False,
    min_bytes: int = MIN_VIRTUAL_BYTES,
    src_storage_options: dict[str, Any] | None = None,
    **io_kwargs: Any,
) -> dict[str, str]:
    """Write the HDF5 NWB file ``src`` (a local path, an ``s3://`` or ``http(s)://`` URL, read with
    ``src_storage_options``) as the new icechunk repository ``dst`` (a local directory, or an ``s3://``
    prefix reached with ``storage_options`` in ``io_kwargs``) with virtual large datasets.

    Returns
    -------
    dict
        Each dataset path considered and what became of it (``"virtual: ..."`` or ``"copied: <why>"``).
    """
    source_text, target = os.fspath(src), os.fspath(dst)
    target_options = io_kwargs.pop("storage_options", None)  # the destination's, as for any conversion
    if virtual_sources.is_s3(target):
        target = locations.absolute(target)
    elif locations.is_url(target):
        raise StoreError("a virtual repository is written to a local directory or an s3:// prefix", target)
    if virtual_sources.is_s3(source_text):
        source = virtual_sources.s3_source(source_text, src_storage_options)
    elif virtual_sources.is_http(source_text):  # where its bytes are, after redirects
        source = virtual_sources.http_source(source_text, src_storage_options)
    elif locations.is_url(source_text):
        raise StoreError("virtual chunks are read from local files, s3:// objects or http(s):// URLs", source_text)
    elif not os.path.isfile(source_text):
        raise StoreError("no such HDF5 file", source_text)
    else:
        source = virtual_sources.local_source(source_text)
    if virtual_sources.is_s3(target):  # (a missing bucket or wrong credentials: said of the destination)
        virtual_sources.holds_anything(target, target_options)
    place = lock_place(target, lambda url: remote_store(url, "a", target_options))
    if place is None:  # (a path or URL always has one)
        raise StoreError("no place for the destination's write lock", target)
    lock = WriteLock.acquire(place, target, "hdmf_zarr3 convert (virtual)")
    try:
        virtual_repo.remove_unfinished(target, target_options)  # a conversion killed before its commit: replaced
        try:
            return _convert(source, target, src_storage_options, target_options, progress, min_bytes, io_kwargs)
        except BaseException as exc:
            # nothing committed (or all of it: a Ctrl-C that came after the commit): no repository left half made;
            # should the removal fail too, what stays is refused as incomplete and replaced by the next conversion
            with contextlib.suppress(Exception):
                virtual_repo.remove_unfinished(target, target_options)
            error = _named(
                store_failures.typed(
                    virtual_repo.storage_failure(exc, target), target, "the virtual conversion failed"
                ),
                target,
            )
            if error is exc:
                raise
            raise error from exc
    finally:
        lock.release()


def _named(error: BaseException, target: str) -> BaseException:
    """``error``, naming the destination: a store's error inside the repository (a full disk, an I/O error)
    names the session's store, which no one can find."""
    if not isinstance(error, StoreError) or error.path == target:
        return error
    named = StoreError(f"the virtual conversion failed: {error}", target)
    named.errno = getattr(error, "errno", None)
    return named


def _convert(
    source: virtual_sources.Source,
    target: str,
    src_storage_options: dict[str, Any] | None,
    target_options: dict[str, Any] | None,
    progress: bool,
    min_bytes: int,
    io_kwargs: dict[str, Any],
) -> dict[str, str]:
    """The conversion itself, into a repository it creates at ``target`` and commits last."""
    import h5py
    from pynwb import NWBHDF5IO

    from ..backend.zarrio import NWBZarrIO

    session = virtual_repo.create(target, [source], src_storage_options, target_options)
    with virtual_sources.open_file(source, src_storage_options) as raw, h5py.File(raw, "r") as h5file:
        options = VirtualOptions(source=source, h5file=h5file, min_bytes=min_bytes)
        with NWBHDF5IO(file=h5file, mode="r") as src_io:
            with NWBZarrIO(session.store, mode="w", **io_kwargs) as dst_io:
                write_args = {"link_data": True, "progress": progress, "virtual": options}
                dst_io.export(src_io=src_io, write_args=write_args)
    virtual_repo.record_sources(session.store, [source])  # checked when the repository is opened
    session.commit(f"hdmf_zarr3: virtual copy of {source.url.rsplit('/', 1)[-1]}")
    return dict(sorted(options.report.items()))
