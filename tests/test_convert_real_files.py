"""``convert`` keeps a file exactly, on the 27 NWB files of the pynwb sdist (``tests/back_compat/*.nwb``).

Every file is converted once (a module-scoped cache shared by the tests): HDF5 → Zarr, that Zarr file
back to HDF5, and Zarr → Zarr. Each result must read back container-equal to the original read with
``NWBHDF5IO`` (``container_diff.first_difference``: the whole tree, data values, attributes, links
and references by path, tables; the first difference is reported by path), and must cache exactly
the original's specifications: the same namespaces, versions, document names and JSON texts, read
here with plain h5py and zarr-python. A file that caches none (NWB 1.x) gains only the namespaces its
nodes use, as the type map has them.
"""

from __future__ import annotations

import json

import h5py
import numpy as np
import pytest
import zarr
from _pynwb_sdist import back_compat_files
from container_diff import first_difference
from pynwb import NWBHDF5IO

from hdmf_zarr3 import NWBZarrIO, convert

FILES = back_compat_files()

pytestmark = pytest.mark.filterwarnings(
    "ignore::UserWarning", "ignore::DeprecationWarning", "ignore::FutureWarning",
)

ROUTES = {  # result name: (its source, reader)
    "hdf5-to-zarr": ("original", NWBZarrIO),
    "zarr-to-hdf5": ("hdf5-to-zarr", NWBHDF5IO),
    "zarr-to-zarr": ("hdf5-to-zarr", NWBZarrIO),
}
SUFFIX = {NWBZarrIO: ".nwb.zarr", NWBHDF5IO: ".nwb"}


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """``converted(path)``: the file's conversions by route name (made once, on first use)."""
    done: dict[str, dict[str, str]] = {}
    base = tmp_path_factory.mktemp("converted")

    def get(path):
        if path.name not in done:
            files = {"original": str(path)}
            for route, (source, reader) in ROUTES.items():  # in order: each source is made first
                files[route] = str(base / f"{path.stem}.{route}{SUFFIX[reader]}")
                convert(files[source], files[route])
            done[path.name] = files
        return done[path.name]
    return get


# --- cached specifications, read without hdmf_zarr3 ----------------------------------------------


def hdf5_specs(path) -> dict[str, str]:
    """``{"namespace/version/document": JSON text}`` of an HDF5 file's cached specifications."""
    out = {}
    with h5py.File(path, "r") as f:
        if ".specloc" not in f.attrs:
            return out
        group = f[f.attrs[".specloc"]]

        def visit(name, node):
            if isinstance(node, h5py.Dataset):
                value = node[()]
                value = value.reshape(-1)[0] if isinstance(value, np.ndarray) else value
                out[name] = value.decode("utf-8") if isinstance(value, bytes) else value
        group.visititems(visit)
    return out


def zarr_specs(path) -> dict[str, str]:
    """The same for a Zarr file, read with zarr-python."""
    root = zarr.open_group(path, mode="r")
    if ".specloc" not in root.attrs:
        return {}
    group = root[root.attrs[".specloc"]]
    return {f"{ns}/{version}/{name}": str(array[()])
            for ns, versions in group.groups() for version, documents in versions.groups()
            for name, array in documents.arrays()}


def specs(path) -> dict[str, str]:
    return zarr_specs(path) if str(path).endswith(".zarr") else hdf5_specs(path)


def namespaces(cached: dict[str, str]) -> set[str]:
    return {key.split("/")[0] for key in cached}


# --- the checks ----------------------------------------------------------------------------------


@pytest.mark.parametrize("route", list(ROUTES))
@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_conversion_reads_back_equal(path, route, converted):
    files = converted(path)
    reader = ROUTES[route][1]
    with h5py.File(path, "r") as f:
        object_ids = "object_id" in f.attrs  # else HDMF mints random ids at every read
    with NWBHDF5IO(str(path), "r") as a_io, reader(files[route], "r") as b_io:
        difference = first_difference(a_io.read(), a_io, b_io.read(), b_io, object_ids=object_ids)
    assert difference is None, f"{path.name} {route} (a = original, b = converted): {difference}"


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_conversion_keeps_cached_specifications(path, converted):
    files = converted(path)
    original = hdf5_specs(path)
    for route in ROUTES:
        found = specs(files[route])
        if original:
            assert found.keys() == original.keys(), f"{route}: {sorted(found.keys() ^ original.keys())}"
            changed = [key for key in original if found[key] != original[key]]
            assert not changed, f"{route}: documents changed: {changed}"
        else:  # nothing cached: the namespaces the file uses, as the type map has them, and they load
            assert namespaces(found) == {"core", "hdmf-common"}, sorted(found)
            for key, text in found.items():
                assert isinstance(json.loads(text), dict), key


def test_ophys_devices_extension_keeps_every_device(converted):
    """The file the issue was seen on: its extension redefines core's DeviceModel. HDMF's re-generated
    cache renamed ``ndx-ophys-devices.extensions`` and dropped that type, and 7 of the 15 devices
    (the ``*_model`` ones) were not read back."""
    path = next(p for p in FILES if p.name == "3.0.0_ophys_devices_extension.nwb")
    files = converted(path)
    with NWBHDF5IO(str(path), "r") as io:
        expected = sorted(io.read().devices)
    assert len(expected) == 15
    for route, (_, reader) in ROUTES.items():
        with reader(files[route], "r") as io:
            assert sorted(io.read().devices) == expected, route
        assert "ndx-ophys-devices/0.2.0/ndx-ophys-devices.extensions" in specs(files[route]), route
