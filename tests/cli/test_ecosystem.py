"""The rows of docs/ecosystem.md that no other test backs: what the field's entry points do with our two
conventions today. A row that changes upstream (a PyNWB with a backend registry, a TensorStore with strings)
fails here, and the table is updated."""

from __future__ import annotations

import warnings

import pynwb
import pytest
from writing import write_nwb

pytestmark = pytest.mark.filterwarnings("ignore")


@pytest.fixture(params=["hdmf_zarr3", "hdmf-zarr"])
def convention_file(request, tmp_path):
    return request.param, write_nwb(tmp_path / "s.nwb.zarr", convention=request.param)


def test_pynwb_read_nwb_reads_only_the_hdmf_zarr_convention(convention_file):
    convention, path = convention_file
    if convention == "hdmf-zarr":
        nwbfile = pynwb.read_nwb(str(path))
        assert nwbfile.identifier == "TEST123"
        nwbfile.get_read_io().close()
    else:  # pynwb 4.2 opens every Zarr path with hdmf_zarr.NWBZarrIO, which does not know our attributes
        with pytest.raises(NotImplementedError, match="zarr_dtype"):
            pynwb.read_nwb(str(path))


def test_pynwb_validate_by_path_fails_on_both(convention_file):
    _, path = convention_file  # it passes HDF5-only arguments (driver, aws_region) to hdmf_zarr's load_namespaces
    with pytest.raises(TypeError, match="driver"):
        pynwb.validate(path=str(path))


def test_nwbinspector_by_path_reports_only_a_read_error(convention_file):
    from nwbinspector import inspect_nwbfile

    _, path = convention_file
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        messages = list(inspect_nwbfile(nwbfile_path=str(path)))
    assert len(messages) == 1 and messages[0].importance.name == "ERROR"  # io.read() failed: nothing inspected
    message = messages[0].message
    assert "Traceback" in message and ("zarr_dtype" in message or "driver" in message)


def test_nwbinspector_by_object_works_on_both_and_locates_the_messages(convention_file):
    from nwbinspector import inspect_nwbfile_object

    from hdmf_zarr3 import NWBZarrIO, check_dandi

    _, path = convention_file
    with NWBZarrIO(path, mode="r") as io:
        plain = list(inspect_nwbfile_object(io.read()))
    # through our io the message has the object's path, as on HDF5 (integrations/nwbinspector_locations.py)
    assert any(m.check_function_name == "check_units_resolution_is_set" and m.location == "/units" for m in plain)
    located = {(f.rule, f.path) for f in check_dandi(path).findings}
    assert ("NWBI.check_units_resolution_is_set", "/units") in located


def test_export_to_hdf5_from_both(convention_file, tmp_path):
    from hdmf_zarr3 import NWBZarrIO

    _, path = convention_file
    with NWBZarrIO(path, mode="r") as src, pynwb.NWBHDF5IO(str(tmp_path / "out.nwb"), mode="w") as dst:
        dst.export(src_io=src, write_args={"link_data": False})
    with pynwb.NWBHDF5IO(str(tmp_path / "out.nwb"), mode="r") as io:
        assert io.read().identifier == "TEST123"
