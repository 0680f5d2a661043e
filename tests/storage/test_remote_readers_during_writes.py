"""A reader of an object store and a writer of the same file: the reader never serves its metadata with
another file's chunks. Objects cannot be renamed there, so mode ``w`` replaces the file in place; every object
carries the file version it belongs to (``hdmf-zarr3-generation`` user metadata, storage/remote/generations.py) and
a reader refuses another version's objects with ``FileReplacedError`` (issue #27). Moto's S3 on 127.0.0.1."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hdmf.build import DatasetBuilder, GroupBuilder
from s3_server import new_bucket

import hdmf_zarr3
from hdmf_zarr3 import CorruptStoreError, FileReplacedError, StoreError, ZarrDataIO, ZarrIO
from hdmf_zarr3.storage.remote.generations import GENERATION

#: The package's source, for the other process.
SOURCE = str(Path(hdmf_zarr3.__file__).parent.parent)


def _tree(values) -> GroupBuilder:
    data = ZarrDataIO(np.asarray(values), chunks=(10,), shards=None)
    return GroupBuilder("root", datasets={"d": DatasetBuilder("d", data)})


def _write(url: str, options: dict, values, mode: str = "w") -> None:
    with ZarrIO(url, mode=mode, storage_options=dict(options)) as io:
        io.write_builder(_tree(values))


def _in_another_process(code: str) -> None:
    """Run ``code`` in a new interpreter: a process holding the file open refuses to replace it itself."""
    subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=True, env={"PYTHONPATH": SOURCE}, timeout=300)


def _rewrite_elsewhere(url: str, options: dict, values: list[int]) -> None:
    _in_another_process(
        f"""
        import numpy as np
        from hdmf.build import DatasetBuilder, GroupBuilder
        from hdmf_zarr3 import ZarrDataIO, ZarrIO
        data = ZarrDataIO(np.asarray({values!r}, dtype="i4"), chunks=(10,), shards=None)
        with ZarrIO({url!r}, mode="w", storage_options={options!r}) as io:
            io.write_builder(GroupBuilder("root", datasets={{"d": DatasetBuilder("d", data)}}))
        """
    )


def _objects(s3, url: str) -> tuple[str, str, list[str]]:
    bucket, prefix = url[5:].split("/", 1)
    listed = s3["client"]().list_objects_v2(Bucket=bucket, Prefix=prefix + "/")
    return bucket, prefix, [o["Key"] for o in listed.get("Contents", [])]


def test_a_file_replaced_while_open_is_refused_on_the_next_read(s3):
    url = f"s3://{new_bucket(s3)}/f.zarr"
    _write(url, s3["options"], np.arange(100, dtype="i4"))
    with ZarrIO(url, mode="r", storage_options=dict(s3["options"])) as reader:
        data = reader.read_builder()["d"].data
        assert list(data[:10]) == list(range(10))
        _rewrite_elsewhere(url, s3["options"], [-i for i in range(100)])
        with pytest.raises(FileReplacedError, match="reopen it") as caught:
            data[50:60]  # the new file's chunk, under the old file's metadata: never served
        assert isinstance(caught.value, StoreError) and caught.value.path == url
        with pytest.raises(FileReplacedError):
            data[:10]  # a chunk read before: the new file's now
    with ZarrIO(url, mode="r", storage_options=dict(s3["options"])) as again:  # a new reader reads the new file
        assert list(again.read_builder()["d"].data[:3]) == [0, -1, -2]


def test_during_the_replacement_a_deleted_chunk_is_an_error_too(s3):
    url = f"s3://{new_bucket(s3)}/f.zarr"
    _write(url, s3["options"], np.arange(100, dtype="i4"))
    bucket, prefix, keys = _objects(s3, url)
    with ZarrIO(url, mode="r", storage_options=dict(s3["options"])) as reader:
        data = reader.read_builder()["d"].data
        s3["client"]().delete_object(Bucket=bucket, Key=f"{prefix}/d/c/5")  # as `w` does before it writes
        with pytest.raises(CorruptStoreError, match="chunk c/5 is missing"):
            data[50:60]


def test_rows_appended_by_another_writer_leave_the_readers_view_as_it_was(s3):
    url = f"s3://{new_bucket(s3)}/f.zarr"
    _write(url, s3["options"], np.arange(15, dtype="i4"))
    with ZarrIO(url, mode="r", storage_options=dict(s3["options"])) as reader:
        data = reader.read_builder()["d"].data
        _in_another_process(
            f"""
            from hdmf_zarr3 import ZarrIO
            with ZarrIO({url!r}, mode="a", storage_options={s3["options"]!r}) as io:
                io.read_builder()["d"].data.extend(list(range(100, 120)))
            """
        )
        assert list(data[:]) == list(range(15))  # the partly filled chunk, rewritten by the append: same version
    with ZarrIO(url, mode="r", storage_options=dict(s3["options"])) as again:
        assert len(again.read_builder()["d"].data) == 35


def test_every_object_carries_its_file_version_and_objects_without_one_are_read(s3):
    url = f"s3://{new_bucket(s3)}/f.zarr"
    _write(url, s3["options"], np.arange(100, dtype="i4"))
    client = s3["client"]()
    bucket, prefix, keys = _objects(s3, url)
    versions = {client.head_object(Bucket=bucket, Key=k)["Metadata"].get(GENERATION) for k in keys}
    assert len(versions) == 1 and None not in versions
    _write(url, s3["options"], np.arange(100, dtype="i4"))
    again = {client.head_object(Bucket=bucket, Key=k)["Metadata"].get(GENERATION) for k in keys}
    assert len(again) == 1 and again != versions  # each `w` is a new version
    for key in keys:  # a tool that copies objects without their metadata
        body = client.get_object(Bucket=bucket, Key=key)["Body"].read()
        client.put_object(Bucket=bucket, Key=key, Body=body)
    with ZarrIO(url, mode="r", storage_options=dict(s3["options"])) as reader:
        assert list(reader.read_builder()["d"].data[:]) == list(range(100))
