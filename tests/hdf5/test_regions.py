"""HDF5 region references survive HDF5 -> Zarr as region records and read back lazily."""

from __future__ import annotations

import h5py
import numpy as np
import pytest
import zarr
from hdmf.backends.hdf5 import HDF5IO

from hdmf_zarr3 import FormatError, ZarrIO
from hdmf_zarr3.backend.datasets.lazy import RegionSelection
from hdmf_zarr3.format.data.references import check_region


def _hdf5_with_regions(path):
    with h5py.File(path, "w") as f:
        f.attrs["object_id"] = "oid-root"
        target = f.create_dataset("target", data=np.arange(100).reshape(10, 10))
        target.attrs["object_id"] = "oid-target"
        refs = f.create_dataset("regs", shape=(4,), dtype=h5py.regionref_dtype)
        refs[0] = target.regionref[2:5, 1:3]
        refs[1] = target.regionref[0:10:2, :]
        refs[2] = target.regionref[...]
        space = target.id.get_space()
        space.select_elements(np.array([[0, 0], [9, 9], [3, 4]]))
        refs[3] = h5py.h5r.create(f.id, b"target", h5py.h5r.DATASET_REGION, space)
        f.attrs["areg"] = target.regionref[1:2, 3:5]


def test_region_references_from_hdf5(tmp_path):
    _hdf5_with_regions(tmp_path / "a.h5")
    with HDF5IO(str(tmp_path / "a.h5"), mode="r") as src, ZarrIO(tmp_path / "b.zarr", mode="w") as dst:
        dst.export(src_io=src, cache_spec=False)
    stored = zarr.open_array(tmp_path / "b.zarr" / "regs", mode="r")
    assert stored.attrs["zarr_dtype"] == "region"
    full = np.arange(100).reshape(10, 10)
    with ZarrIO(tmp_path / "b.zarr", mode="r") as io:
        root = io.read_builder()
        regs = root.datasets["regs"].data
        target = root.datasets["target"]
        sels = [regs[i] for i in range(4)]
        assert all(isinstance(s, RegionSelection) and s.target is target for s in sels)
        assert np.array_equal(np.asarray(sels[0]), full[2:5, 1:3])
        assert np.array_equal(np.asarray(sels[1]), full[0:10:2, :])
        assert np.array_equal(np.asarray(sels[2]), full)
        assert np.array_equal(np.asarray(sels[3]), [0, 99, 34])
        assert root.attributes["areg"] is target  # HDMF gets the referenced object, as from HDF5IO
        attr = io.region_attribute("/", "areg")
        assert isinstance(attr, RegionSelection) and np.array_equal(np.asarray(attr), full[1:2, 3:5])
    # a Zarr -> Zarr export keeps both kinds of region references
    with ZarrIO(tmp_path / "b.zarr", mode="r") as src, ZarrIO(tmp_path / "c.zarr", mode="w") as dst:
        dst.export(src_io=src, cache_spec=False)
    with ZarrIO(tmp_path / "c.zarr", mode="r") as io:
        root = io.read_builder()
        assert np.array_equal(np.asarray(root.datasets["regs"].data[0]), full[2:5, 1:3])
        assert np.array_equal(np.asarray(io.region_attribute("/", "areg")), full[1:2, 3:5])


@pytest.mark.parametrize("bad", [{"slices": [[0, 1]]}, {"all": False}, {"points": [[1.5]]}, {"a": 1, "b": 2}])
def test_malformed_regions_are_format_errors(bad):
    with pytest.raises(FormatError, match="/x"):
        check_region(bad, "/x")


def test_converting_regions_to_hdf5_says_why_it_cannot(tmp_path):
    from hdmf_zarr3 import UnsupportedDataError
    from hdmf_zarr3.hdf5.conversion import prepare_for_hdf5

    _hdf5_with_regions(tmp_path / "a.h5")
    with HDF5IO(str(tmp_path / "a.h5"), mode="r") as src, ZarrIO(tmp_path / "b.zarr", mode="w") as dst:
        dst.export(src_io=src, cache_spec=False)
    with ZarrIO(tmp_path / "b.zarr", mode="r") as io:
        with pytest.raises(UnsupportedDataError, match="region references"):
            prepare_for_hdf5(io.read_builder())


def test_convert_to_hdf5_refuses_region_attributes(tmp_path):
    from hdmf_zarr3 import UnsupportedDataError, convert

    with h5py.File(tmp_path / "a.h5", "w") as f:
        target = f.create_dataset("target", data=np.arange(10))
        f.attrs["areg"] = target.regionref[2:4]
    with HDF5IO(str(tmp_path / "a.h5"), mode="r") as src, ZarrIO(tmp_path / "b.nwb.zarr", mode="w") as dst:
        dst.export(src_io=src, cache_spec=False)
    with pytest.raises(UnsupportedDataError, match="'areg' holds region references"):
        convert(tmp_path / "b.nwb.zarr", tmp_path / "c.nwb")
