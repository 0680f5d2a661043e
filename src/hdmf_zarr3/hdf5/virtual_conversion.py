"""``convert(src, dst, virtual=True)``: an HDF5 NWB file as an icechunk repository whose large datasets
read their chunks in place from the HDF5 file.

Everything but the large numeric datasets is written in our format as by any conversion (groups,
attributes, links, references, compounds, strings, small datasets, the cached specifications); each
large dataset becomes an array of virtual chunks (:mod:`hdmf_zarr3.backend.write.virtual`). The
repository is created at ``dst``, a local directory or an ``s3://`` prefix (never replacing anything
there), and committed once, when every node is stored: a conversion that fails leaves an empty repository
with no commit on ``main``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..backend.write import MIN_VIRTUAL_BYTES, VirtualOptions
from ..errors import StoreError
from ..storage.stores import locations
from ..storage.virtual import repo as virtual_repo
from ..storage.virtual import sources as virtual_sources


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
    import h5py
    from pynwb import NWBHDF5IO

    from ..backend.zarrio import NWBZarrIO

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
