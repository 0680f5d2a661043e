"""Writing files for tests: the one helper each test module used to have its own copy of, and the stores a
store-agnostic test runs on (the ``any_store`` fixture of conftest.py hands out a :class:`StoreCase`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hdmf.build import GroupBuilder
from nwb_factories import small_nwbfile
from pynwb import NWBFile, TimeSeries

from hdmf_zarr3 import NWBZarrIO, ZarrIO


def nwbfile_with(data: Any, name: str = "x") -> NWBFile:
    """The small NWB file (``small_nwbfile()``) plus a TimeSeries ``name`` holding ``data``."""
    nwb = small_nwbfile()
    nwb.add_acquisition(TimeSeries(name=name, data=data, unit="V", rate=1.0))
    return nwb


def write_nwb[Target](target: Target, nwbfile: NWBFile | None = None, *, mode: str = "w", **io_kwargs: Any) -> Target:
    """Write ``nwbfile`` (by default ``small_nwbfile()``) to ``target`` with NWBZarrIO; return ``target``.

    ``target`` is whatever the ios take as ``path`` (a path, a URL, a zarr Store); ``io_kwargs`` go to
    NWBZarrIO (``storage_options``, ``force_overwrite``, ...).
    """
    with NWBZarrIO(target, mode=mode, **io_kwargs) as io:
        io.write(small_nwbfile() if nwbfile is None else nwbfile)
    return target


def write_builder[Target](target: Target, root: GroupBuilder, *, mode: str = "w", **io_kwargs: Any) -> Target:
    """Write the builder tree ``root`` to ``target`` with ZarrIO; return ``target``."""
    with ZarrIO(target, mode=mode, **io_kwargs) as io:
        io.write_builder(root)
    return target


@dataclass
class StoreCase:
    """One file on one kind of store: ``local`` (a directory), ``zip``, ``memory`` (a zarr MemoryStore) or
    ``s3`` (a fresh bucket of the session's moto server). ``location`` is what the ios take as ``path``;
    ``options`` their ``storage_options`` (S3 only)."""

    kind: str
    location: Path | str | Any
    options: dict[str, Any] | None = field(default=None)

    def io_kwargs(self) -> dict[str, Any]:
        """The keywords every io of this file needs (a copy: the ios may keep what they are given)."""
        return {} if self.options is None else {"storage_options": dict(self.options)}

    def open(self, mode: str = "r", io_class: type = NWBZarrIO, **kwargs: Any) -> Any:
        """An io of ``io_class`` on this file, in ``mode``."""
        return io_class(self.location, mode=mode, **self.io_kwargs(), **kwargs)

    def write(self, nwbfile: NWBFile | None = None, *, mode: str = "w") -> StoreCase:
        """Write ``nwbfile`` (by default the small file) here; return this case."""
        write_nwb(self.location, nwbfile, mode=mode, **self.io_kwargs())
        return self
