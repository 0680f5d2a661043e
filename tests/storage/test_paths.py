"""One safe way to touch a path (issue #38): below a file's real root, never through a symlink, only regular
files and directories, never waiting on a FIFO; side files created exclusively beside a file."""

from __future__ import annotations

import os
from pathlib import Path

import path_trace
import pytest
from bounded_calls import returns_within
from path_trace import tracing

from hdmf_zarr3.errors import CorruptStoreError, StoreError, UnsafeDataError
from hdmf_zarr3.storage.paths import (
    AUDIT_EVENT,
    RootDirectory,
    create_side_file,
    open_side_file,
    private_directory,
    remove_private_directory,
    remove_side_file,
    replace_side_file,
)


def _snapshot(directory: Path) -> dict[str, bytes | str]:
    return {
        str(p.relative_to(directory)): (p.read_bytes() if p.is_file() else "dir")
        for p in sorted(directory.rglob("*"))
        if not p.is_symlink()
    }


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """A file ``root`` (``group/array/c/0``) and a directory ``outside`` with ``data.bin`` and ``group/``."""
    root, outside = tmp_path / "file.zarr", tmp_path / "outside"
    (root / "group" / "array" / "c").mkdir(parents=True)
    (root / "group" / "array" / "c" / "0").write_bytes(b"chunk")
    (outside / "group" / "array" / "c").mkdir(parents=True)
    (outside / "group" / "array" / "c" / "0").write_bytes(b"outside chunk")
    (outside / "data.bin").write_bytes(b"outside")
    return root, outside


def _every_operation(tree: RootDirectory, key: str):
    """Each operation of a RootDirectory on ``key``, as (name, call)."""
    return [
        ("write", lambda: tree.write(key, b"new")),
        ("write exclusive", lambda: tree.write(key, b"new", exclusive=True)),
        ("open", lambda: tree.open_file(key)),
        ("read", lambda: tree.read_bytes(key)),
        ("create", lambda: os.close(tree.create_file(key))),
        ("make directories", lambda: tree.make_directories(key + "/below")),
        ("remove below", lambda: tree.remove(key + "/c/0")),
        ("replace into", lambda: tree.replace("group/array/c/0", key + "/moved")),
        ("list", lambda: tree.list_directory(key)),
    ]


def test_a_symlinked_directory_is_never_passed_by_any_operation(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    os.symlink(outside / "group", root / "linked")
    before = _snapshot(outside)
    with RootDirectory(root) as tree:
        for name, call in _every_operation(tree, "linked/array"):
            with pytest.raises(UnsafeDataError) as caught:
                returns_within(call)
            assert caught.value.path == str(root / "linked"), name
            assert "symlink" in str(caught.value), name
    assert _snapshot(outside) == before


@pytest.mark.parametrize("plant", ["symlink out", "dangling symlink", "fifo", "directory"])
def test_a_plant_where_a_file_belongs_is_refused_without_blocking(layout: tuple[Path, Path], plant: str) -> None:
    root, outside = layout
    key, target = "group/array/c/1", root / "group" / "array" / "c" / "1"
    if plant == "symlink out":
        os.symlink(outside / "data.bin", target)
    elif plant == "dangling symlink":
        os.symlink(outside / "missing", target)
    elif plant == "fifo":
        os.mkfifo(target)
    else:
        target.mkdir()
    before = _snapshot(outside)
    expected = UnsafeDataError if "symlink" in plant else CorruptStoreError
    with RootDirectory(root) as tree:
        for name, call in [
            ("write", lambda: tree.write(key, b"new")),
            ("write exclusive", lambda: tree.write(key, b"new", exclusive=True)),
            ("open", lambda: tree.open_file(key)),
            ("create", lambda: os.close(tree.create_file(key))),
            ("replace onto", lambda: tree.replace("group/array/c/0", key)),
        ]:
            with pytest.raises(expected) as caught:
                returns_within(call)
            assert caught.value.path == str(target), name
    assert _snapshot(outside) == before
    assert not (outside / "missing").exists()
    assert (root / "group" / "array" / "c" / "0").read_bytes() == b"chunk"


@pytest.mark.parametrize("plant", ["fifo", "regular file"])
def test_a_plant_where_a_directory_belongs_is_refused(layout: tuple[Path, Path], plant: str) -> None:
    root, _ = layout
    target = root / "group" / "other"
    os.mkfifo(target) if plant == "fifo" else target.write_bytes(b"x")
    with RootDirectory(root) as tree:
        for call in (lambda: tree.write("group/other/zarr.json", b"{}"), lambda: tree.make_directories("group/other")):
            with pytest.raises(CorruptStoreError) as caught:
                returns_within(call)
            assert caught.value.path == str(target)
            assert ("named pipe" if plant == "fifo" else "regular file") in str(caught.value)


def test_writes_reads_renames_and_deletes_inside(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    with RootDirectory(root) as tree:
        tree.write("new/deep/zarr.json", b"{}")
        assert (root / "new" / "deep" / "zarr.json").read_bytes() == b"{}"
        tree.write("new/deep/zarr.json", memoryview(b"[1]"))
        assert tree.read_bytes("new/deep/zarr.json") == b"[1]"
        with pytest.raises(FileExistsError):
            tree.write("new/deep/zarr.json", b"x", exclusive=True)
        tree.write("new/deep/other", b"y", exclusive=True)
        tree.replace("new/deep/other", "new/moved")
        assert tree.read_bytes("new/moved") == b"y"
        assert tree.read_bytes("absent/key") is None and tree.open_file("new/deep/zarr.json/below") is None
        assert tree.remove("new") and not (root / "new").exists()
        assert not tree.remove("new") and not tree.remove_directory("absent")
        with pytest.raises(CorruptStoreError):
            tree.remove_directory("group/array/c/0")
        with pytest.raises(UnsafeDataError):
            tree.write("../escape", b"x")
    assert sorted(os.listdir(root / "group" / "array" / "c")) == ["0"]  # no temporary left behind


def test_a_symlink_inside_a_deleted_tree_is_unlinked_never_entered(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    os.symlink(outside, root / "group" / "array" / "out")
    os.symlink(outside / "data.bin", root / "group" / "array" / "c" / "file-out")
    before = _snapshot(outside)
    with RootDirectory(root) as tree:
        assert tree.remove("group")
        os.symlink(outside, root / "top-link")
        assert tree.remove("top-link")  # the link itself
        tree.write("x/zarr.json", b"{}")
        tree.clear()
    assert os.listdir(root) == [] and _snapshot(outside) == before


def test_a_root_that_is_not_a_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(CorruptStoreError):
        RootDirectory(tmp_path / "file")
    with pytest.raises(StoreError) as caught:
        RootDirectory(tmp_path / "absent")
    assert caught.value.errno is not None
    with RootDirectory(tmp_path / "made" / "here", create=True) as tree:
        tree.write("k", b"v")
    assert (tmp_path / "made" / "here" / "k").read_bytes() == b"v"


@pytest.mark.parametrize("plant", ["symlink out", "dangling symlink", "fifo", "directory", "regular file"])
def test_side_files_refuse_every_plant(tmp_path: Path, plant: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "data.bin").write_bytes(b"outside")
    side = tmp_path / "file.zarr.lock"
    if plant == "symlink out":
        os.symlink(outside / "data.bin", side)
    elif plant == "dangling symlink":
        os.symlink(outside / "missing", side)
    elif plant == "fifo":
        os.mkfifo(side)
    elif plant == "directory":
        side.mkdir()
    else:
        side.write_bytes(b"held")
    expected = {"regular file": FileExistsError, "fifo": CorruptStoreError, "directory": CorruptStoreError}
    with pytest.raises(expected.get(plant, UnsafeDataError)):
        returns_within(create_side_file, side)
    if plant == "regular file":
        fd = returns_within(open_side_file, side)
        assert os.read(fd, 10) == b"held"
        os.close(fd)
    else:
        with pytest.raises(UnsafeDataError if "symlink" in plant else CorruptStoreError) as caught:
            returns_within(open_side_file, side)
        assert caught.value.path == str(side)
    assert sorted(os.listdir(outside)) == ["data.bin"] and (outside / "data.bin").read_bytes() == b"outside"


def test_side_files_are_created_renamed_and_removed_in_their_real_directory(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    os.symlink(real, tmp_path / "alias")  # the user's own directory may be a symlink: it is resolved
    side = tmp_path / "alias" / "file.zarr.partial"
    os.close(create_side_file(side))
    assert (real / "file.zarr.partial").is_file() and open_side_file(tmp_path / "alias" / "absent") is None
    replace_side_file(side, tmp_path / "alias" / "file.zarr")
    assert (real / "file.zarr").is_file()
    assert remove_side_file(tmp_path / "alias" / "file.zarr") and not remove_side_file(side)
    working = private_directory(tmp_path / "alias" / "file.zarr", ".file.zarr.working-")
    assert Path(working).parent == real and oct(os.stat(working).st_mode & 0o777) == "0o700"
    os.symlink(tmp_path / "alias", Path(working) / "loop")
    remove_private_directory(working)
    assert not os.path.exists(working) and real.is_dir()


def test_the_trace_records_every_operation_with_its_full_path(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    with tracing() as trace:
        with RootDirectory(root) as tree:
            tree.write("group/zarr.json", b"{}")
            tree.remove("group/array")
        os.close(create_side_file(root.parent / "file.zarr.lock"))
        (root / "plain.txt").write_text("x")
        os.replace(root / "plain.txt", root / "moved.txt")
    touched = trace.below(root.parent)
    for expected in ["file.zarr/group/zarr.json", "file.zarr/group/array", "file.zarr.lock", "file.zarr/moved.txt"]:
        assert expected in touched
    assert any(op == "rename" and path.endswith("group/zarr.json") for op, path in trace.events)
    with tracing() as idle:
        pass
    assert idle.events == []
    assert path_trace.AUDIT_EVENT == AUDIT_EVENT
