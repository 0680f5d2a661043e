"""A text holding a NUL converted to HDF5 (issue #27): HDF5's variable-length strings end at the first NUL, and
h5py refuses them. The conversion is refused with ``UnsupportedDataError`` naming the node, and the
destination is left as it was (no new file, an old one byte for byte, nothing beside it)."""

from __future__ import annotations

import numpy as np
import pytest
from nwb_factories import small_nwbfile
from pynwb import NWBHDF5IO, NWBFile, TimeSeries
from writing import write_nwb

from hdmf_zarr3 import UnsupportedDataError, convert


def _with(where: str):
    nwb = small_nwbfile(5)
    if where == "attribute":
        nwb.add_acquisition(TimeSeries(name="nul", data=np.arange(3.0), unit="m", rate=1.0, description="a\x00b"))
    elif where == "dataset":
        nwb.add_unit(spike_times=[2.0], quality="go\x00od")
    else:  # a scalar text dataset
        nwb = NWBFile("a\x00b", "ID", small_nwbfile().session_start_time)
    return nwb


NODES = {
    "attribute": "/acquisition/nul",
    "dataset": "/units/quality",
    "scalar": "/session_description",
}


@pytest.mark.parametrize("where", sorted(NODES))
@pytest.mark.parametrize("existing", [True, False], ids=["over-existing", "new"])
def test_a_text_with_a_nul_is_refused_naming_the_node(tmp_path, where, existing):
    src = write_nwb(tmp_path / "src" / "s.nwb.zarr", _with(where))
    (tmp_path / "out").mkdir()
    dst = tmp_path / "out" / "s.nwb"
    if existing:
        with NWBHDF5IO(dst, "w") as io:
            io.write(small_nwbfile(3))
    old = dst.read_bytes() if existing else None
    with pytest.raises(UnsupportedDataError, match="NUL") as err:
        convert(src, dst)
    assert err.value.path == NODES[where] and str(dst) in str(err.value)
    assert sorted(p.name for p in dst.parent.iterdir()) == (["s.nwb"] if existing else [])
    if existing:
        assert dst.read_bytes() == old


def test_an_attribute_with_a_nul_is_refused_before_anything_is_written(tmp_path):
    """HDF5IO writes a group's attributes after everything below it: they are checked first."""
    from h5_faults import H5Faults

    src = write_nwb(tmp_path / "s.nwb.zarr", _with("attribute"))
    with H5Faults() as faults, pytest.raises(UnsupportedDataError, match="attribute 'description'"):
        convert(src, tmp_path / "s.nwb")
    assert faults.calls == 0 and not (tmp_path / "s.nwb").exists()
