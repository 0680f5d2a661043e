"""neuroconv, the conversion tool most NWB files come from, and our files (issue #42, point 4).

neuroconv 0.10.2 cannot be imported beside zarr-python 3: ``neuroconv.tools.nwb_helpers`` reads zarr-python 2's
``zarr.codec_registry`` at import (catalystneuro/neuroconv#2062), and a plain ``pip install neuroconv`` now resolves
hdmf-zarr 0.14 and zarr 3.4, so it fails to import. hdmf_zarr3 needs zarr-python >= 3.4, so the two cannot share an
environment; neuroconv runs in its own venv (``.cache/venv-neuroconv``: neuroconv 0.10.2 with ``hdmf_zarr<0.14``,
hence zarr-python 2, and spikeinterface for its mock recording), created from the package index when missing.

There, neuroconv converts a mock recording through its own write path, to NWB HDF5 and (its ``backend="zarr"``,
hdmf-zarr 0.13) to Zarr v2. Here, our reader reads both, and ``convert`` turns the HDF5 file into our format with
the same values: the route a neuroconv user has today.
"""

from __future__ import annotations

import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest
from peer_venvs import peer_venv, tool_env
from pynwb import NWBHDF5IO

from hdmf_zarr3 import NWBZarrIO, convert

pytestmark = [pytest.mark.peer, pytest.mark.filterwarnings("ignore")]

VENV = Path(__file__).resolve().parents[2] / ".cache" / "venv-neuroconv"
#: neuroconv's newest release, kept on zarr-python 2 (see the module's description), and its mock recording's library.
REQUIREMENTS = ["neuroconv==0.10.2", "hdmf_zarr<0.14", "spikeinterface"]

#: Run in neuroconv's venv: a 4-channel, 0.5 s mock recording converted by neuroconv to HDF5 and to Zarr v2.
CONVERSION = """
import sys, datetime
from dateutil.tz import tzutc
from neuroconv.tools.testing.mock_interfaces import MockRecordingInterface
interface = MockRecordingInterface(num_channels=4, durations=[0.5], sampling_frequency=30_000.0, seed=0)
metadata = interface.get_metadata()
metadata["NWBFile"]["session_start_time"] = datetime.datetime(2025, 1, 1, tzinfo=tzutc())
for backend, name in (("hdf5", "neuroconv.nwb"), ("zarr", "neuroconv.nwb.zarr")):
    interface.run_conversion(nwbfile_path=f"{sys.argv[1]}/{name}", metadata=metadata, backend=backend, overwrite=True)
from importlib.metadata import version
print(version("neuroconv"), version("zarr"))
"""


def _neuroconv_python() -> Path:
    return peer_venv(VENV.name, REQUIREMENTS) / "bin" / "python"


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """neuroconv's two files of the mock recording, and the versions it ran with."""
    folder = tmp_path_factory.mktemp("neuroconv")
    env = tool_env()
    done = subprocess.run(
        [str(_neuroconv_python()), "-W", "ignore", "-c", CONVERSION, str(folder)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    neuroconv_version, zarr_version = done.stdout.split()[-2:]
    assert neuroconv_version == "0.10.2" and zarr_version.startswith("2."), done.stdout
    return folder


def _series(nwbfile):
    return nwbfile.acquisition["ElectricalSeries"]


def test_a_recording_neuroconv_wrote_as_hdf5_converts_to_our_format_with_the_same_values(converted, tmp_path):
    with NWBHDF5IO(str(converted / "neuroconv.nwb"), mode="r") as io:
        expected = _series(io.read())
        values, conversion, rate = expected.data[:], expected.conversion, expected.rate
        electrodes = expected.electrodes.table.to_dataframe().drop(columns="group")  # (objects of each file)
    convert(converted / "neuroconv.nwb", tmp_path / "ours.nwb.zarr")
    with NWBZarrIO(tmp_path / "ours.nwb.zarr", mode="r") as io:
        ours = _series(io.read())
        assert values.shape == (15_000, 4) and np.array_equal(ours.data[:], values)
        assert (ours.conversion, ours.rate) == (conversion, rate)
        assert ours.electrodes.table.to_dataframe().drop(columns="group").equals(electrodes)


def test_the_zarr_file_neuroconv_writes_through_its_own_path_reads_with_our_io(converted):
    """neuroconv's ``backend="zarr"`` writes through hdmf-zarr 0.13 (Zarr v2): our reader reads it."""
    with NWBHDF5IO(str(converted / "neuroconv.nwb"), mode="r") as io:
        values = _series(io.read()).data[:]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with NWBZarrIO(converted / "neuroconv.nwb.zarr", mode="r") as io:
            nwbfile = io.read()
            assert np.array_equal(_series(nwbfile).data[:], values)
            assert len(nwbfile.electrodes) == 4
