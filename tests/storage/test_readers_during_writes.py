"""A reader in one process and a writer in another (local directories): the reader never mixes two
versions of a file. A file replaced by mode ``w`` while it is open is refused from the reader's next read
(:class:`FileReplacedError`, naming the file) instead of serving the old metadata with the new file's chunks;
rows appended by another process leave what the reader already knows readable as it was."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hdmf.build import DatasetBuilder, GroupBuilder
from hostile_corpus import write_ephys_nwb
from writing import write_builder

import hdmf_zarr3
from hdmf_zarr3 import FileReplacedError, NWBZarrIO, StoreError, ZarrDataIO, ZarrIO

SOURCE = str(Path(hdmf_zarr3.__file__).parent.parent)


def _tree(values) -> GroupBuilder:
    data = ZarrDataIO(np.asarray(values), chunks=(10,), shards=None)
    return GroupBuilder("root", datasets={"d": DatasetBuilder("d", data)})


def _in_another_process(code: str) -> None:
    subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=True, env={"PYTHONPATH": SOURCE}, timeout=300)


def test_a_file_replaced_while_open_is_refused_on_the_next_read(tmp_path):
    path = tmp_path / "f.zarr"
    write_builder(path, _tree(np.arange(100, dtype="i4")))
    with ZarrIO(path, mode="r") as reader:
        data = reader.read_builder()["d"].data
        assert list(data[:10]) == list(range(10))
        _in_another_process(
            f"""
            import numpy as np
            from hdmf.build import DatasetBuilder, GroupBuilder
            from hdmf_zarr3 import ZarrIO
            with ZarrIO({str(path)!r}, mode="w") as io:
                new = DatasetBuilder("d", -np.arange(100, dtype="i4"))
                io.write_builder(GroupBuilder("root", datasets={{"d": new}}))
            """
        )
        with pytest.raises(FileReplacedError, match="replaced") as caught:
            data[50:60]  # the new file's chunk, under the old file's metadata: never served
        assert caught.value.path == str(path) and isinstance(caught.value, StoreError)
        with pytest.raises(FileReplacedError):
            data[:10]  # even a chunk read before
    with ZarrIO(path, mode="r") as again:  # a new reader reads the new file
        assert list(again.read_builder()["d"].data[:3]) == [0, -1, -2]


def test_rows_appended_by_another_process_leave_the_readers_view_as_it_was(tmp_path):
    path = tmp_path / "f.zarr"
    write_builder(path, _tree(np.arange(15, dtype="i4")))
    with ZarrIO(path, mode="r") as reader:
        data = reader.read_builder()["d"].data
        _in_another_process(
            f"""
            from hdmf_zarr3 import ZarrIO
            with ZarrIO({str(path)!r}, mode="a") as io:
                io.read_builder()["d"].data.extend(list(range(100, 120)))
            """
        )
        assert list(data[:]) == list(range(15))  # the partly filled chunk was rewritten whole: same first rows
    with ZarrIO(path, mode="r") as again:
        assert len(again.read_builder()["d"].data) == 35


def test_a_file_replaced_while_its_tables_are_built_is_refused_as_ours(tmp_path):
    """HDMF reads a DynamicTableRegion's rows while it builds the containers: the reader's next read of a
    file replaced since it opened is our FileReplacedError naming the file, not HDMF's ConstructError around it."""
    path = tmp_path / "f.nwb.zarr"
    write_ephys_nwb(path)
    with NWBZarrIO(path, mode="r") as reader:
        reader.read_builder()  # the tree is read: the region's rows are read only when HDMF builds it
        _in_another_process(
            f"""
            import sys
            sys.path.insert(0, {str(Path(__file__).parent.parent)!r})
            from hostile_corpus import write_ephys_nwb
            write_ephys_nwb({str(path)!r})
            """
        )
        with pytest.raises(FileReplacedError, match="replaced") as caught:
            reader.read()
    assert caught.value.path == str(path)
    assert "while HDMF built the container of /general/extracellular_ephys/electrodes" in str(caught.value)
