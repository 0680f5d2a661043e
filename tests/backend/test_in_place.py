"""Changing datasets in place (``ts.data[0] = 42``) in modes 'r+' and 'a', as with h5py; refused in mode 'r'."""

from __future__ import annotations

import json

import numpy as np
import pytest
import zarr
from nwb_factories import small_nwbfile
from pynwb import TimeSeries
from pynwb.core import ScratchData

from hdmf_zarr3 import ModeError, NWBZarrIO, UnsupportedDataError, ZarrDataIO

GRID = np.arange(60.0).reshape(12, 5)


def _content(path):
    """Every stored object: the files of a directory, the members of a zip (re-packed on close in 'r+')."""
    if path.is_file():
        import zipfile

        with zipfile.ZipFile(path) as archive:
            return {name: archive.read(name) for name in sorted(archive.namelist())}
    return {p.relative_to(path): p.read_bytes() if p.is_file() else None for p in sorted(path.rglob("*"))}


@pytest.fixture(params=["f.nwb.zarr", "f.nwb.zarr.zip"])
def path(tmp_path, request):
    nwb = small_nwbfile()
    nwb.add_acquisition(
        TimeSeries(name="grid", data=ZarrDataIO(GRID, chunks=(2, 5), shards=(4, 5)), unit="V", rate=1.0)
    )
    nwb.add_scratch(ScratchData(name="words", description="text", data=["a", "b", "c"]))
    with NWBZarrIO(tmp_path / request.param, mode="w") as io:
        io.write(nwb)
    return tmp_path / request.param


def _consolidated_is_current(path):
    """The root's consolidated metadata lists every node as its own zarr.json does, and no write is pending."""
    root = json.loads((path / "zarr.json").read_text())
    assert "hdmf_zarr3_incomplete" not in root["attributes"]
    members = root["consolidated_metadata"]["metadata"]
    for key, member in members.items():
        assert json.loads((path / key / "zarr.json").read_text()) == member, key
    return zarr.open_group(path, mode="r", use_consolidated=True)


@pytest.mark.parametrize("mode", ["r+", "a"])
def test_changes_in_place_are_stored_and_read_back(path, mode):
    expected = GRID.copy()
    with NWBZarrIO(path, mode=mode) as io:
        nwb = io.read()
        ts, grid = nwb.acquisition["ts"], nwb.acquisition["grid"]
        ts.data[0] = 42
        ts.data[10:20] = -1.0
        grid.data[5] = 7.0  # a row inside the second shard
        grid.data[[0, 11], 1:3] = [[1, 2], [3, 4]]  # orthogonal: rows of the first and last shards
        grid.data[..., 4] = 9.5
        nwb.scratch["words"].data[1] = "β"
        assert ts.data[0] == 42 and grid.data[5, 0] == 7.0  # read back at once, as h5py does
    expected[5] = 7.0
    expected[[0, 11], 1:3] = [[1, 2], [3, 4]]
    expected[..., 4] = 9.5
    with NWBZarrIO(path, mode="r") as io:
        nwb = io.read()
        data = nwb.acquisition["ts"].data[:]
        assert data[0] == 42 and (data[10:20] == -1).all() and data[20] == 20.0 and data[1] == 1.0
        np.testing.assert_array_equal(nwb.acquisition["grid"].data[:], expected)
        assert list(nwb.scratch["words"].data[:]) == ["a", "β", "c"]
    if path.suffix != ".zip":
        group = _consolidated_is_current(path)
        np.testing.assert_array_equal(group["acquisition/grid/data"][:], expected)  # plain zarr agrees


def test_changes_are_refused_in_mode_r(path):
    before = _content(path)
    with NWBZarrIO(path, mode="r") as io:
        data = io.read().acquisition["ts"].data
        with pytest.raises(
            ModeError,
            match=r"/acquisition/ts/data: cannot change the data: the file is open in "
            r"mode 'r' \(use 'r\+' or 'a'\)",
        ):
            data[0] = 42
        assert data[0] == 0.0
    assert _content(path) == before


def test_an_error_inside_with_undoes_changes_in_place(path):
    before = _content(path)
    with pytest.raises(RuntimeError, match="stop"), NWBZarrIO(path, mode="a") as io:
        nwb = io.read()
        nwb.acquisition["ts"].data[3:7] = 5.0
        nwb.acquisition["grid"].data[6:10] = 0.0  # a whole shard and half of another
        nwb.acquisition["grid"].data[:, 0] = 1.0  # every shard (rewritten twice: kept once)
        raise RuntimeError("stop")
    assert _content(path) == before


@pytest.mark.parametrize(
    "key,value,error,message",
    [
        (20_000, 1.0, IndexError, "out of bounds"),
        ((0, 0), 1.0, IndexError, "too many indices"),
        (slice(0, 2), "text", UnsupportedDataError, "cannot store 'text' in a float64 dataset"),
    ],
)
def test_a_bad_change_changes_nothing(path, key, value, error, message):
    before = _content(path)
    with NWBZarrIO(path, mode="r+") as io:
        data = io.read().acquisition["ts"].data
        with pytest.raises(error, match=message):
            data[key] = value
    assert _content(path) == before  # not even re-consolidated


@pytest.mark.parametrize(
    "key,cells",
    [
        (0, [(0, 0), (0, 1)]),
        ((-1, -1), [(2, 1)]),
        ((slice(3, 9), 0), [(0, 0), (1, 0), (2, 0)]),
        ((slice(None, None, 5), 0), [(0, 0), (1, 0), (2, 0)]),
        ((slice(1, None, 8), 0), [(0, 0), (2, 0)]),
        (slice(9, 3), []),
        ((Ellipsis, 6), [(0, 1), (1, 1), (2, 1)]),
        (([0, 11], slice(0, 2)), [(0, 0), (2, 0)]),
        ((np.arange(12) == 5, 0), [(1, 0)]),
    ],
)
def test_the_storage_objects_a_selection_touches(key, cells):
    from hdmf_zarr3.format.data.selection import touched_cells

    assert list(touched_cells(key, (12, 7), (4, 5))) == cells
    assert list(touched_cells((), (), ())) == [()]  # a scalar: its one chunk
