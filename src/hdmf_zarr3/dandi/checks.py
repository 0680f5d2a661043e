"""Every check of :func:`check_dandi`, in the order the :mod:`hdmf_zarr3.dandi` door describes: the asset, dandi-cli's
Zarr validation (:mod:`.zarr_rules`), then the NWB content (:mod:`.content`).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..storage.stores import locations
from .findings import ERROR, WARNING, DandiFinding, DandiReport, lossless_route

__all__ = ["check_dandi"]

ZARR_SUFFIXES = (".zarr", ".ngff")  # dandi.consts.ZARR_EXTENSIONS


def check_dandi(path: str | Path, storage_options: dict[str, Any] | None = None) -> DandiReport:
    """Everything DANDI refuses, or requires and misses, in the NWB Zarr file at ``path``.

    Parameters
    ----------
    path : str or Path
        The file: a local directory (what ``dandi upload`` takes), a ``.zip`` or a URL.
    storage_options : dict, optional
        Options of a remote store (as for :class:`~hdmf_zarr3.ZarrIO`).

    Returns
    -------
    DandiReport
        Its findings, errors first; ``report.refused`` is True when there is any error.
    """
    from ..storage.handles import open_store
    from .content import content_findings, layout_findings
    from .zarr_rules import zarr_findings

    location = str(path)
    name = locations.basename(location)
    local = not locations.is_url(location) and os.path.isdir(location)
    found = _asset_findings(location, name, local)
    dandiset = _dandiset_root(location) if local else None
    if local and dandiset is None:
        found.append(
            DandiFinding(
                WARNING,
                "DANDI.NO_DANDISET_FOUND",
                "/",
                "Path is not inside a Dandiset (no dandiset.yaml above it): dandi validate reports it as an "
                "error and dandi upload has nowhere to upload it",
                "dandi download the Dandiset, move the file into it, then dandi upload",
            )
        )
    handle = open_store(location, "r", storage_options, allow_incomplete=True)
    try:
        found += zarr_findings(handle.store, local)
    finally:
        handle.close()
    found += _read_content(location, storage_options, content_findings)
    found = _with_lossless_route(found, name)
    relative = os.path.relpath(os.path.abspath(location), dandiset).replace(os.sep, "/") if dandiset else None
    found += layout_findings(name, relative)
    errors = [f for f in found if f.level == ERROR]
    return DandiReport(location, errors + [f for f in found if f.level != ERROR])


def _with_lossless_route(found: list[DandiFinding], name: str) -> list[DandiFinding]:
    """``found``, each refusal of an array by TensorStore given the lossless way first, and for an NWB Zarr file
    the warning that DANDI takes it as plain Zarr (its metadata unread) whatever it holds."""
    route = lossless_route(name)
    found = [
        replace(f, way_through=f"{route}; or {f.way_through}") if f.rule == "zarr.tensorstore_cannot_open" else f
        for f in found
    ]
    if name.endswith(".nwb.zarr"):
        message = (
            "dandi-cli reads no NWB metadata from a .nwb.zarr asset: uploaded, it gets no subject, species, "
            "approach or technique, and dandi organize leaves it out"
        )
        found.append(DandiFinding(WARNING, "hdmf_zarr3.nwb_metadata_unread", "/", message, route))
    return found


def _read_content(location: str, storage_options: dict[str, Any] | None, check: Any) -> list[DandiFinding]:
    """The content's findings; a file PyNWB cannot read is itself one (dandi-cli: ``pynwb.GENERIC``)."""
    from ..backend.zarrio import NWBZarrIO

    try:
        with NWBZarrIO(location, mode="r", storage_options=storage_options) as io:
            nwbfile = io.read()
            return list(check(nwbfile, io))
    except Exception as exc:  # whatever reading raises, the answer is the same: not an NWB file DANDI takes
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return [
            DandiFinding(
                ERROR, "pynwb.GENERIC", "/", f"it does not read as an NWB file: {type(exc).__name__}: {message}"
            )
        ]


def _asset_findings(location: str, name: str, local: bool) -> list[DandiFinding]:
    if name.endswith(".zip"):
        return [
            DandiFinding(
                ERROR,
                "hdmf_zarr3.not_a_zarr_asset",
                "/",
                "DANDI takes Zarr directories, not zip files",
                f"unpack it: hdmf-zarr3 convert {name} {name.removesuffix('.zip')}",
            )
        ]
    if not name.endswith(ZARR_SUFFIXES):
        return [
            DandiFinding(
                ERROR,
                "hdmf_zarr3.not_a_zarr_asset",
                "/",
                f"{name}: dandi-cli takes only a directory named *.zarr (or *.ngff) for a Zarr asset; it would "
                "neither validate nor upload this one",
                "rename it to *.nwb.zarr",
            )
        ]
    if not name.endswith(".nwb.zarr"):
        return [
            DandiFinding(
                WARNING,
                "hdmf_zarr3.not_nwb_zarr",
                "/",
                f"{name}: DANDI takes it as a plain Zarr asset, not as an NWB file (*.nwb.zarr)",
                "rename it to *.nwb.zarr",
            )
        ]
    return []


def _dandiset_root(location: str) -> str | None:
    """The nearest directory above ``location`` holding a ``dandiset.yaml`` (dandi-cli's Dandiset root)."""
    directory = os.path.dirname(os.path.abspath(location))
    while True:
        if os.path.isfile(os.path.join(directory, "dandiset.yaml")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent
