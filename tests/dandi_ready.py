"""Whether a Zarr NWB file is ready for DANDI as written: ``check-dandi`` finds no error, and
zarr-python (a reader other than ours) opens every array and reads a corner of it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import zarr
from hdmf.build import DatasetBuilder, GroupBuilder

from hdmf_zarr3 import check_dandi

#: What DANDI refuses in every NWB file we (or hdmf-zarr) write, and what only the file's content decides.
NOT_STORAGE = ("zarr.tensorstore_cannot_open", "NWBI.", "pynwb.")


def read_every_array(path: Path) -> int:
    """Open every array of the file at ``path`` with zarr-python and read its first elements; return
    how many arrays there are."""
    arrays = 0
    for _, array in zarr.open_group(str(path), mode="r").members(max_depth=None):
        if isinstance(array, zarr.Array):
            array[tuple(slice(0, min(2, n)) for n in array.shape)]
            arrays += 1
    assert arrays
    return arrays


def assert_dandi_ready(path: Path) -> int:
    """Assert ``path`` passes check-dandi without storage errors (TensorStore's refusal of string arrays and
    the content's requirements aside) and every array reads in zarr-python; return how many arrays were read."""
    errors = [str(f) for f in check_dandi(path).errors if not f.rule.startswith(NOT_STORAGE)]
    assert not errors, errors
    return read_every_array(path)


def deep_lfp_tree(**root_datasets: DatasetBuilder) -> GroupBuilder:
    """A builder tree with a 2-D array as deep as an LFP series in a processing module
    (``processing/ecephys/LFP/ElectricalSeries/data``: nested chunk keys 8 levels deep), plus
    ``root_datasets`` at the root."""
    series = GroupBuilder("ElectricalSeries", datasets={"data": DatasetBuilder("data", np.zeros((4, 3)))})
    lfp = GroupBuilder("LFP", groups={"ElectricalSeries": series})
    processing = GroupBuilder("processing", groups={"ecephys": GroupBuilder("ecephys", groups={"LFP": lfp})})
    return GroupBuilder("root", groups={"processing": processing}, datasets=root_datasets)
