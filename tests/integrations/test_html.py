"""``ZarrIO.generate_dataset_html``: the notebook table of a dataset, titled and typed as zarr names them,
with everything taken from the file HTML-escaped."""

from __future__ import annotations

import numpy as np
import zarr
from hdmf.build import DatasetBuilder, GroupBuilder

from hdmf_zarr3 import ZarrIO

HOSTILE = "<script>alert(1)"


def test_a_zarr_array_is_titled_and_typed_as_zarr_names_it():
    z = zarr.create_array(zarr.storage.MemoryStore(), shape=(10, 10), chunks=(5, 5), dtype="i4", compressors=None)
    z[:] = np.arange(100).reshape(10, 10)
    html = ZarrIO.generate_dataset_html(z)
    assert html.startswith("<b>Zarr Array</b>")
    assert "Int32" in html and "(10, 10)" in html and "(5, 5)" in html and "bytes" in html


def test_a_dataset_we_read_is_a_zarr_array_with_its_path_and_storage(tmp_path):
    root = GroupBuilder("root", datasets={"x": DatasetBuilder("x", np.arange(6, dtype="float32"))})
    with ZarrIO(tmp_path / "f.zarr", mode="w") as io:
        io.write_builder(root)
    with ZarrIO(tmp_path / "f.zarr", mode="r") as io:
        html = ZarrIO.generate_dataset_html(io.read_builder()["x"].data)
    assert html.startswith("<b>Zarr Array")
    for text in ("Float32 (float32)", "/x", "Chunk shape", "Stored size", "[0. 1. 2. 3. 4. 5.]"):
        assert text in html


def test_data_not_from_zarr_says_so():
    html = ZarrIO.generate_dataset_html(np.float64(5))
    assert "(not a Zarr array)" in html and "float64" in html and "Zarr Array" not in html


def test_names_and_values_from_the_file_are_escaped(tmp_path):
    root = GroupBuilder("root", datasets={HOSTILE: DatasetBuilder(HOSTILE, [HOSTILE, "<b>bold</b>"], dtype="text")})
    with ZarrIO(tmp_path / "f.zarr", mode="w") as io:
        io.write_builder(root)
    with ZarrIO(tmp_path / "f.zarr", mode="r") as io:
        html = ZarrIO.generate_dataset_html(io.read_builder()[HOSTILE].data)
    assert "<script" not in html and "<b>bold" not in html
    assert "/&lt;script&gt;alert(1)" in html and "&lt;b&gt;bold&lt;/b&gt;" in html  # the path and a value
    zhtml = ZarrIO.generate_dataset_html(zarr.open_array(tmp_path / "f.zarr" / HOSTILE, mode="r"))
    assert "<script" not in zhtml and "&lt;script&gt;" in zhtml
    assert "<script" not in ZarrIO.generate_dataset_html(np.array([HOSTILE]))


def test_a_dataset_of_a_closed_file_is_described_without_its_values(tmp_path):
    root = GroupBuilder("root", datasets={"x": DatasetBuilder("x", np.arange(3))})
    with ZarrIO(tmp_path / "f.zarr", mode="w") as io:
        io.write_builder(root)
    with ZarrIO(tmp_path / "f.zarr", mode="r") as io:
        data = io.read_builder()["x"].data
    html = ZarrIO.generate_dataset_html(data)
    assert "(3,)" in html and "Logical size" in html
    assert "Stored size" not in html and "<pre>" not in html  # neither read from the closed file
