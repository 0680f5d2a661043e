"""
Getting an NWB Zarr file onto DANDI
===================================

DANDI, the archive most NWB data goes to, validates every asset with dandi-cli before it uploads it.
dandi-cli opens every Zarr v3 array with TensorStore, which has no text type, so it refuses every NWB Zarr
file (each holds text: ``identifier``, ``session_description``, the cached specifications;
`dandi/dandi-cli#1918 <https://github.com/dandi/dandi-cli/issues/1918>`_). And even one uploaded with
``--validation ignore`` is taken as plain Zarr: DANDI reads no NWB metadata from it (no subject, species,
approach or technique), and ``dandi organize`` leaves it out.

The lossless way through is the same file as NWB HDF5, which DANDI validates and reads whole. This tutorial
writes a session as NWB Zarr, asks :func:`hdmf_zarr3.check_dandi` what DANDI would say, converts the file
with :func:`hdmf_zarr3.convert`, and runs ``dandi validate`` on the ``.nwb`` when dandi-cli is installed
(set ``HDMF_ZARR3_DANDI`` to its ``dandi`` command; the project's tests do, with dandi-cli 0.81.0).
"""

# %%
# A session as DANDI wants it, written as NWB Zarr
# ------------------------------------------------
# DANDI requires a subject (its id, species, sex, and age or date of birth) and organizes files as
# ``sub-<id>/sub-<id>_ses-<id>_<modality>.nwb`` inside a Dandiset (a folder holding ``dandiset.yaml``).
import datetime
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
from pynwb import NWBFile
from pynwb.ecephys import ElectricalSeries
from pynwb.file import Subject

from hdmf_zarr3 import NWBZarrIO, check_dandi, convert

dandiset = Path("dandiset")
shutil.rmtree(dandiset, ignore_errors=True)
(dandiset / "sub-mouse7").mkdir(parents=True)
(dandiset / "dandiset.yaml").write_text("identifier: DANDI:000000\n")

nwbfile = NWBFile(
    session_description="a recording on its way to DANDI",
    identifier="dandi-route-1",
    session_start_time=datetime.datetime(2025, 1, 1, 10, 0, tzinfo=datetime.UTC),
    subject=Subject(subject_id="mouse7", species="Mus musculus", sex="F", age="P90D"),
)
device = nwbfile.create_device(name="probe")
group = nwbfile.create_electrode_group("shank0", description="a shank", location="CA1", device=device)
for _ in range(8):
    nwbfile.add_electrode(group=group, location="CA1")
electrodes = nwbfile.create_electrode_table_region(list(range(8)), "all electrodes")
traces = np.random.default_rng(0).normal(0, 50, size=(30_000, 8)).astype("int16")  # 1 s at 30 kHz
nwbfile.add_acquisition(ElectricalSeries(name="ephys", data=traces, electrodes=electrodes, rate=30_000.0))

zarr_file = dandiset / "sub-mouse7" / "sub-mouse7_ses-1_ecephys.nwb.zarr"
with NWBZarrIO(zarr_file, mode="w") as io:
    io.write(nwbfile)

# %%
# What DANDI would say of the Zarr file
# -------------------------------------
# ``check_dandi`` (``hdmf-zarr3 check-dandi`` on the command line) reproduces dandi-cli's verdict rule for
# rule, and names the way through for each error: the lossless route first.
report = check_dandi(zarr_file)
print(f"{len(report.errors)} error(s), e.g. {report.errors[0]}")
for way in report.ways_through:
    print("way through:", way)

# %%
# The lossless route: convert to NWB HDF5
# ---------------------------------------
# Every group, dataset, attribute, link and reference is carried over; numeric data keeps its chunks and
# gets HDF5's gzip. The ``.nwb`` goes where the Zarr file was, and the Zarr file stays yours.
hdf5_file = zarr_file.with_name(zarr_file.name.removesuffix(".zarr"))
convert(zarr_file, hdf5_file)
shutil.rmtree(zarr_file)  # the Dandiset holds the .nwb only
print(hdf5_file, f"{hdf5_file.stat().st_size / 1e6:.1f} MB")

# %%
# dandi-cli's verdict on the ``.nwb``
# -----------------------------------
# ``dandi validate`` on the Dandiset: 0 errors (dandi-cli runs PyNWB's validator and nwbinspector on an NWB
# HDF5 file, and would extract the subject, species and technique when uploading it).
dandi = os.environ.get("HDMF_ZARR3_DANDI") or shutil.which("dandi")
if dandi is None:
    print("dandi-cli is not installed here; with it: dandi validate", dandiset)
else:
    done = subprocess.run([dandi, "validate", str(dandiset)], capture_output=True, text=True, timeout=600)
    print(done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip()[-500:])
    print("dandi validate exit status:", done.returncode)
