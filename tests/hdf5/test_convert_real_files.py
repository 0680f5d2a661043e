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
from datetime import UTC

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
    "ignore::UserWarning",
    "ignore::DeprecationWarning",
    "ignore::FutureWarning",
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
    return {
        f"{ns}/{version}/{name}": str(array[()])
        for ns, versions in group.groups()
        for version, documents in versions.groups()
        for name, array in documents.arrays()
    }


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


def test_ophys_devices_extension_keeps_every_device(converted, tmp_path):
    """The file the issue was seen on: its extension redefines core's DeviceModel. HDMF's re-generated
    cache renamed ``ndx-ophys-devices.extensions`` and dropped that type, and 7 of the 15 devices
    (the ``*_model`` ones) were not read back. ``NWBZarrIO.export`` with its defaults too."""
    path = next(p for p in FILES if p.name == "3.0.0_ophys_devices_extension.nwb")
    files = dict(converted(path), exported=str(tmp_path / "exported.nwb.zarr"))
    with NWBHDF5IO(str(path), "r") as io:
        expected = sorted(io.read().devices)
        NWBZarrIO.export_io(files["exported"], io)
    assert len(expected) == 15
    for route, (_, reader) in {**ROUTES, "exported": (None, NWBZarrIO)}.items():
        with reader(files[route], "r") as io:
            assert sorted(io.read().devices) == expected, route
        assert "ndx-ophys-devices/0.2.0/ndx-ophys-devices.extensions" in specs(files[route]), route


# --- the comparator itself -----------------------------------------------------------------------


def _sample(path, variant: str = "") -> None:
    """A small NWB file; ``variant`` changes one thing in it."""
    from datetime import datetime

    from pynwb import NWBFile, TimeSeries
    from pynwb.ecephys import ElectricalSeries

    start = datetime(2020, 1, 1, tzinfo=UTC)
    nwb = NWBFile(session_description="s", identifier="i", session_start_time=start, file_create_date=start)
    devices = [nwb.create_device(name=name) for name in ("d1", "d2")]
    group = nwb.create_electrode_group("g", description="g", location="x", device=devices[variant == "link"])
    for _ in range(3):
        nwb.add_electrode(group=group, location="x")
    nwb.add_acquisition(
        TimeSeries(
            name="ts",
            data=[1.0, 2.0, 3.0 if variant != "data" else 4.0],
            unit="V",
            rate=1.0,
            description="changed" if variant == "attribute" else "no description",
        )
    )
    if variant == "child":
        nwb.add_acquisition(TimeSeries(name="extra", data=[1.0], unit="V", rate=1.0))
    region = nwb.create_electrode_table_region([0, 2 if variant == "region" else 1], "r")
    nwb.add_acquisition(ElectricalSeries(name="es", data=np.zeros((2, 2)), electrodes=region, rate=1.0))
    nwb.add_trial(start_time=0.0, stop_time=1.0 if variant != "table" else 2.0)
    with NWBHDF5IO(str(path), "w") as io:
        io.write(nwb)


@pytest.mark.parametrize(
    ("variant", "expected"),
    [
        ("data", "/acquisition/ts.data: values differ in 1 of 3, first [2]: 3.0 != 4.0"),
        ("attribute", "/acquisition/ts.description: 'no description' != 'changed'"),
        ("link", "/general/extracellular_ephys/g.device: refers to /general/devices/d1 != /general/devices/d2"),
        ("child", "/.acquisition: keys only in a: [], only in b: ['extra']"),
        ("region", "/acquisition/es/electrodes.data: values differ in 1 of 2, first [1]: 1 != 2"),
        ("table", "/intervals/trials/stop_time.data: values differ in 1 of 1, first [0]: 1.0 != 2.0"),
    ],
)
def test_container_diff_reports_the_first_difference_by_path(tmp_path, variant, expected):
    _sample(tmp_path / "a.nwb")
    _sample(tmp_path / "b.nwb", variant)
    with NWBHDF5IO(str(tmp_path / "a.nwb"), "r") as a, NWBHDF5IO(str(tmp_path / "b.nwb"), "r") as b:
        assert first_difference(a.read(), a, b.read(), b, object_ids=False) == expected


def test_container_diff_compares_object_ids_and_finds_equal_files_equal(tmp_path):
    _sample(tmp_path / "a.nwb")
    _sample(tmp_path / "b.nwb")  # the same content, new object ids
    with NWBHDF5IO(str(tmp_path / "a.nwb"), "r") as a, NWBHDF5IO(str(tmp_path / "b.nwb"), "r") as b:
        fa, fb = a.read(), b.read()
        assert first_difference(fa, a, fb, b, object_ids=False) is None
        assert first_difference(fa, a, fb, b).startswith("/: object_id ")
        assert first_difference(fa, a, fa, a) is None


# --- what is cached besides the source's documents -----------------------------------------------


def test_rebuilt_files_cache_the_loaded_namespaces_and_the_extension_as_cached(tmp_path):
    """``NWBZarrIO.export(write_args={"link_data": False})`` and HDF5 → HDF5 ``convert`` (PyNWB's export)
    rebuild every node with the loaded type map, so they cache its namespaces (PyNWB's installed core):
    those the source caches in that very version, the extension here, are copied exactly."""
    from pynwb import get_type_map

    path = next(p for p in FILES if p.name == "3.0.0_ophys_devices_extension.nwb")
    zarr_path, hdf5_path = tmp_path / "rebuilt.nwb.zarr", tmp_path / "rebuilt.nwb"
    with NWBHDF5IO(str(path), "r") as io:
        NWBZarrIO.export_io(zarr_path, io, write_args={"link_data": False})
    convert(path, hdf5_path)
    original = hdf5_specs(path)
    extension = {k: v for k, v in original.items() if k.startswith("ndx-ophys-devices/")}
    core = get_type_map().namespace_catalog.get_namespace("core").version
    for rebuilt, reader in ((zarr_path, NWBZarrIO), (hdf5_path, NWBHDF5IO)):
        found = specs(rebuilt)
        assert {k: v for k, v in found.items() if k.startswith("ndx-ophys-devices/")} == extension
        assert {k.rsplit("/", 1)[0] for k in found if k.startswith("core/")} == {f"core/{core}"}
        with NWBHDF5IO(str(path), "r") as a_io, reader(str(rebuilt), "r") as b_io:
            assert first_difference(a_io.read(), a_io, b_io.read(), b_io) is None


def test_a_namespace_used_but_not_cached_comes_from_the_type_map(tmp_path):
    """A source that caches core but not hdmf-common, whose tables it uses: the copy caches core exactly
    and hdmf-common as loaded; hdmf-experimental, unused, is not added."""
    from pynwb import get_type_map

    source, target = tmp_path / "partial.nwb", tmp_path / "partial.nwb.zarr"
    _sample(source)
    with h5py.File(source, "a") as f:
        del f["specifications/hdmf-common"], f["specifications/hdmf-experimental"]
    convert(source, target)
    found, original = specs(target), hdf5_specs(source)
    common = get_type_map().namespace_catalog.get_namespace("hdmf-common").version
    assert {k: v for k, v in found.items() if k.startswith("core/")} == original
    assert namespaces(found) == {"core", "hdmf-common"}
    assert f"hdmf-common/{common}/namespace" in found
    with NWBHDF5IO(str(source), "r") as a_io, NWBZarrIO(target, "r") as b_io:
        assert first_difference(a_io.read(), a_io, b_io.read(), b_io) is None


def test_a_cached_document_name_zarr_cannot_hold_is_refused_by_path(tmp_path):
    from hdmf_zarr3 import InvalidNameError

    source = tmp_path / "bad.nwb"
    _sample(source)
    with h5py.File(source, "a") as f:
        version = next(iter(f["specifications/core"]))
        f.create_dataset(f"specifications/core/{version}/__bad", data="{}", dtype=h5py.string_dtype())
    with pytest.raises(InvalidNameError) as info:
        convert(source, tmp_path / "bad.nwb.zarr")
    assert info.value.path == f"/specifications/core/{version}" and "'__bad'" in str(info.value)
