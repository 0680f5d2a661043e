"""
Open a real NWB file as Zarr without copying its data
=====================================================

The :doc:`other virtual tutorial <plot_virtual_hdf5>` writes its own HDF5 file. This one takes a file
PyNWB did not write for us: one of the files PyNWB keeps to test that it still reads what earlier
versions wrote (``tests/back_compat/`` of PyNWB's source distribution). It turns the file into a Zarr v3
file, an icechunk repository whose numeric datasets read their bytes in place from the HDF5 file, shows
what became of each dataset, and checks that the repository reads as PyNWB reads the HDF5 file. See
:doc:`/virtual` for the design and its limits.
"""

# %%
# Get the file
# ------------
# The back-compat files are not in PyNWB's wheel, only in its source distribution, which pip downloads
# for the installed version. If the environment variable ``HDMF_ZARR3_PYNWB_SDIST`` names a directory
# where that source distribution is already unpacked (the documentation build sets it, so that the test
# suite's copy is not downloaded again), that one is used. Without the file the tutorial stops with an
# error: it has nothing to show.
import os
import shlex
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np
from pynwb import NWBHDF5IO

import hdmf_zarr3
from hdmf_zarr3 import NWBZarrIO
from hdmf_zarr3.cli import main

WORK = Path("back_compat_tutorial")
NAME = "3.0.0_electrodes_dynamic_table.nwb"  # an ElectricalSeries, an electrodes table, a units table


def pynwb_sdist() -> Path:
    """The unpacked source distribution of the installed PyNWB: ``$HDMF_ZARR3_PYNWB_SDIST``, or downloaded."""
    if os.environ.get("HDMF_ZARR3_PYNWB_SDIST"):
        return Path(os.environ["HDMF_ZARR3_PYNWB_SDIST"])
    download, unpacked = WORK / "download", WORK / "sdist"
    for folder in (download, unpacked):
        shutil.rmtree(folder, ignore_errors=True)
    pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
    command = [*pip, f"pynwb=={version('pynwb')}", "--dest", str(download)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"could not download PyNWB's sdist: {shlex.join(command)}\n{done.stderr[-3000:]}")
    (archive,) = download.glob("pynwb-*.tar.gz")
    shutil.unpack_archive(archive, unpacked, filter="data")
    (root,) = unpacked.iterdir()  # pynwb-<version>/
    return root


WORK.mkdir(exist_ok=True)
found = pynwb_sdist() / "tests" / "back_compat" / NAME
if not found.is_file():
    raise FileNotFoundError(f"{found} does not exist: is HDMF_ZARR3_PYNWB_SDIST an unpacked pynwb sdist?")
# The repository reads virtual chunks only from files in its own directory (and from the
# ``external_roots`` one passes when opening it), so the file goes next to it.
SOURCE = WORK / NAME
REPOSITORY, WITH_DEFAULTS = WORK / "electrodes.icechunk", WORK / "defaults.icechunk"
shutil.copyfile(found, SOURCE)
for old in (REPOSITORY, WITH_DEFAULTS):
    shutil.rmtree(old, ignore_errors=True)  # (a repository is created, never replaced)
print(f"{NAME}: {SOURCE.stat().st_size / 2**10:.0f} KiB")

# %%
# Convert it virtually
# --------------------
# A dataset smaller than ``min_bytes`` (1 MiB unless told otherwise) is copied: each virtual chunk
# costs a request of its own when it is read, which for a small dataset costs more than its bytes.
# Every dataset of the back-compat files is far smaller, so with the default everything is copied,
# and the report says so:
default = hdmf_zarr3.convert(SOURCE, WITH_DEFAULTS, virtual=True)
print(next(iter(default.items())))
print(sum(what.startswith("copied") for what in default.values()), "of", len(default), "copied")

# %%
# ``min_bytes=0`` makes every dataset virtual that can be, whatever its size, as for a real recording
# of gigabytes. The report lists every numeric dataset the conversion met: ``virtual`` with how many
# of its chunks are read in place, or ``copied`` with the reason. Strings, references and the cached
# specifications are always written in this package's format, so they are not listed.
report = hdmf_zarr3.convert(SOURCE, REPOSITORY, virtual=True, min_bytes=0)
for path, what in report.items():
    print(f"{path}: {what}")

# %%
# Which arrays are virtual
# ------------------------
# ``hdmf-zarr3 info`` (here called from Python) lists each array, and for a virtual one, where its
# bytes live.
main(["info", str(REPOSITORY)])

# %%
# Read it back
# ------------
# ``NWBZarrIO`` reads the repository into the same containers as ``NWBHDF5IO`` reads from the HDF5
# file; the data of the virtual arrays comes from the HDF5 file's bytes. The tables compare as data
# frames (units with their electrodes as row indices; the electrodes without their ``group`` column,
# whose ``ElectrodeGroup`` objects belong to one file each, but with the groups' names).
with NWBZarrIO(REPOSITORY, mode="r") as zarr_io, NWBHDF5IO(SOURCE, mode="r") as hdf5_io:
    from_zarr, from_hdf5 = zarr_io.read(), hdf5_io.read()
    series, expected = from_zarr.acquisition["ElectricalSeries"], from_hdf5.acquisition["ElectricalSeries"]
    units = from_zarr.units.to_dataframe(index=True)
    electrodes = from_zarr.electrodes.to_dataframe().drop(columns="group")
    print(series.data[:])
    print(units)
    print(electrodes.head(4))
    same = {
        "data": np.array_equal(series.data[:], expected.data[:]),
        "timestamps": np.array_equal(series.timestamps[:], expected.timestamps[:]),
        "units": units.equals(from_hdf5.units.to_dataframe(index=True)),
        "electrodes": electrodes.equals(from_hdf5.electrodes.to_dataframe().drop(columns="group")),
    }
print("equal to what NWBHDF5IO reads:", same)
assert all(same.values()), same  # (the documentation build fails if they differ)
