"""``convert(src, dst, virtual=True)``: an HDF5 NWB file as an icechunk repository whose large datasets
read their chunks in place from the HDF5 file.

Everything but the large numeric datasets is written in our format as by any conversion (groups,
attributes, links, references, compounds, strings, small datasets, the cached specifications); each
large dataset becomes an array of virtual chunks (:mod:`hdmf_zarr3.backend.virtual_writes`). The
repository is created at ``dst`` (never replacing anything there) and committed once, when every node
is stored: a conversion that fails leaves an empty repository with no commit on ``main``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..backend.virtual_writes import MIN_VIRTUAL_BYTES, VirtualOptions
from ..errors import StoreError
from ..storage import locations, virtual_repo


def convert_virtual(
    src: str | Path,
    dst: str | Path,
    *,
    progress: bool = False,
    min_bytes: int = MIN_VIRTUAL_BYTES,
    **io_kwargs: Any,
) -> dict[str, str]:
    """Write the HDF5 NWB file ``src`` as the icechunk repository ``dst`` with virtual large datasets.

    Returns
    -------
    dict
        Each dataset path considered and what became of it (``"virtual: ..."`` or ``"copied: <why>"``).
    """
    from pynwb import NWBHDF5IO

    from ..backend.nwb import NWBZarrIO

    source, target = os.fspath(src), os.fspath(dst)
    if locations.is_url(source) or locations.is_url(target):
        raise StoreError("virtual conversion reads a local HDF5 file into a local repository", source)
    if not os.path.isfile(source):
        raise StoreError("no such HDF5 file", source)
    session = virtual_repo.create(target, [os.path.dirname(os.path.realpath(source))])
    options = VirtualOptions(source=os.path.realpath(source), min_bytes=min_bytes)
    with NWBHDF5IO(source, mode="r") as src_io:
        with NWBZarrIO(session.store, mode="w", **io_kwargs) as dst_io:
            dst_io.export(src_io=src_io, write_args={"link_data": True, "progress": progress, "virtual": options})
    virtual_repo.record_sources(session.store, [source])  # checked when the repository is opened
    session.commit(f"hdmf_zarr3: virtual copy of {os.path.basename(source)}")
    return dict(sorted(options.report.items()))
