"""The format version follows the consolidated copy's spelling of compounds (storage.md §2, "Format version"):
2.0 exactly when the root's copy spells a compound as zarr-python 3.1 does, so that a reader of 1.x, which does
not know that spelling, refuses the file with FormatVersionError instead of failing on it; every other file stays
1.2, readable by such a reader."""

from __future__ import annotations

import json

import pytest
from full_nwbfile import make_full_nwbfile, make_link_target_nwbfile, make_manager

from hdmf_zarr3 import NWBZarrIO
from hdmf_zarr3.errors import FormatVersionError
from hdmf_zarr3.format.dialects import native


def _root(path) -> dict:
    return json.loads((path / "zarr.json").read_text())


def _write(path, nwbfile, **keywords) -> None:
    with NWBZarrIO(str(path), mode="w", manager=make_manager()) as io:
        io.write(nwbfile, **keywords)


def _as_a_1_x_reader(monkeypatch) -> None:
    monkeypatch.setattr(native, "READABLE_MAJOR_VERSIONS", frozenset({"1"}))


def test_a_file_with_a_compound_in_its_copy_is_2_0_and_a_1_x_reader_refuses_it(tmp_path, monkeypatch):
    path = tmp_path / "full.nwb.zarr"
    _write(path, make_full_nwbfile())
    root = _root(path)
    assert root["attributes"]["hdmf_zarr3_format"] == "2.0"
    members = root["consolidated_metadata"]["metadata"]
    assert members["processing/ophys/ImageSegmentation/pixel_rois/pixel_mask"]["data_type"]["name"] == "structured"
    with NWBZarrIO(str(path), mode="r", manager=make_manager()) as io:  # (ours reads both spellings)
        mask = io.read().processing["ophys"]["ImageSegmentation"]["pixel_rois"]["pixel_mask"].target.data[:]
        assert mask.dtype.names == ("x", "y", "weight")
    _as_a_1_x_reader(monkeypatch)
    with pytest.raises(FormatVersionError, match=r"format version 2\.0.*upgrade hdmf_zarr3"):
        NWBZarrIO(str(path), mode="r", manager=make_manager()).read()


@pytest.mark.parametrize("case", ["no compound", "not consolidated"])
def test_every_other_file_stays_1_2_and_a_1_x_reader_reads_it(tmp_path, monkeypatch, case):
    path = tmp_path / "f.nwb.zarr"
    if case == "no compound":
        _write(path, make_link_target_nwbfile())
    else:
        _write(path, make_full_nwbfile(), consolidate_metadata=False)
    assert _root(path)["attributes"]["hdmf_zarr3_format"] == "1.2"
    _as_a_1_x_reader(monkeypatch)
    with NWBZarrIO(str(path), mode="r", manager=make_manager()) as io:
        assert io.read().identifier
