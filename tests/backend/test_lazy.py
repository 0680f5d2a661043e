"""Reading builds containers without reading array data; datasets behave like h5py datasets."""

from __future__ import annotations

import re

import numpy as np
from counting_store import CountingStore
from nwb_factories import small_nwbfile
from zarr.storage import LocalStore

from hdmf_zarr3 import NWBZarrIO


def test_read_fetches_metadata_and_scalars_only(tmp_path):
    with NWBZarrIO(tmp_path / "f.zarr", mode="w") as io:
        io.write(small_nwbfile())
    store = CountingStore(LocalStore(tmp_path / "f.zarr", read_only=True))
    io = NWBZarrIO(store, mode="r")
    store.keys.clear()
    nwb = io.read()
    chunk_keys = [k for k in store.keys if not k.endswith("zarr.json")]
    # only what HDMF needs to build containers is read: scalars (0-d arrays, key "c"), the first id of
    # each table (DynamicTable validates it) and the file creation dates (PyNWB parses them)
    needed = [
        k
        for k in chunk_keys
        if not (k.endswith("/c") or re.search(r"/id/c[./]", k) or k.startswith("file_create_date/"))
    ]
    assert needed == [], needed
    assert not any(k.startswith("acquisition/ts/data") for k in store.keys if not k.endswith("zarr.json"))
    store.keys.clear()
    data = nwb.acquisition["ts"].data
    assert data[10] == 10.0 and isinstance(data[10], np.float64)
    assert store.keys and all(k.startswith("acquisition/ts/data/") for k in store.keys)
    io.close()


def test_datasets_behave_like_h5py(tmp_path):
    with NWBZarrIO(tmp_path / "f.zarr", mode="w") as io:
        io.write(small_nwbfile())
    with NWBZarrIO(tmp_path / "f.zarr", mode="r") as io:
        nwb = io.read()
        data = nwb.acquisition["ts"].data
        assert len(data) == 1000 and data.shape == (1000,) and data.ndim == 1
        assert np.array_equal(data[5:8], [5.0, 6.0, 7.0])
        assert np.array_equal(data[[1, 3, 5]], [1.0, 3.0, 5.0])
        assert np.array_equal(np.asarray(data), np.arange(1000.0))
        assert sum(1 for _ in data) == 1000
        quality = nwb.units["quality"].data
        assert quality[0] == "good" and isinstance(quality[0], str)
        assert quality[:].dtype == object and list(quality) == ["good", "noise"]
        html = io.generate_dataset_html(data)
        assert "Chunk shape" in html and "blosc" in html and "Stored size" in html


def test_spec_dims_become_zarr_dimension_names(tmp_path):
    import zarr
    from pynwb.ecephys import ElectricalSeries

    nwb = small_nwbfile()
    device = nwb.create_device(name="d")
    group = nwb.create_electrode_group("g", description="g", location="x", device=device)
    for _ in range(3):
        nwb.add_electrode(group=group, location="x")
    region = nwb.create_electrode_table_region([0, 1, 2], "all")
    nwb.add_acquisition(ElectricalSeries(name="es", data=np.zeros((10, 3), dtype="int16"), electrodes=region, rate=1.0))
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="w") as io:
        io.write(nwb)
    arr = zarr.open_array(tmp_path / "f.nwb.zarr" / "acquisition" / "es" / "data", mode="r")
    assert arr.metadata.dimension_names == ("num_times", "num_channels")
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="r") as io:
        builder = io.read_builder()["acquisition/es/data"]
        assert builder.dimension_labels == ("num_times", "num_channels")
