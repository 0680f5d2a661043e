"""Every back_compat file of the pynwb sdist, converted with virtual=True (every numeric dataset read in
place, whatever its size), reads as the same file converted by copying (issue #20, point 2)."""

from __future__ import annotations

import pytest
from _pynwb_sdist import back_compat_files
from hdmf.testing import TestCase
from pynwb import NWBHDF5IO

from hdmf_zarr3 import NWBZarrIO, convert

pytest.importorskip("icechunk")
FILES = back_compat_files()


def _readable(path) -> bool:
    try:
        with NWBHDF5IO(path, "r") as io:
            io.read()
    except Exception:  # noqa: BLE001 - a file PyNWB cannot read is not ours to convert
        return False
    return True


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_a_virtual_conversion_reads_as_a_copying_one(tmp_path, path):
    if not _readable(path):
        pytest.skip(f"PyNWB cannot read {path.name}")
    src = tmp_path / path.name
    src.write_bytes(path.read_bytes())  # (the repository may read only from its own directory)
    convert(src, tmp_path / "copy.nwb.zarr")
    report = convert(src, tmp_path / "virtual.icechunk", virtual=True, min_bytes=0)
    assert all(what.startswith(("virtual", "copied")) for what in report.values())
    assert all(what.count("copied") <= 1 for what in report.values()), report  # (said once, with its reason)
    with NWBZarrIO(tmp_path / "copy.nwb.zarr", "r") as copied, NWBZarrIO(tmp_path / "virtual.icechunk", "r") as virtual:
        TestCase().assertContainerEqual(virtual.read(), copied.read(), ignore_hdmf_attrs=True)
