"""One writer at a time: a second writer on a file open for writing gets FileLockedError naming the
holder (local directories and zips: an exclusively created lock file beside the file; object stores:
a conditional write, If-None-Match); readers are never blocked; a crashed writer's lock is reported as
stale and is broken only explicitly, with break_lock, recover; a writer never closed releases its lock when its io
is garbage collected or the interpreter exits, committing nothing more."""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import textwrap
import weakref
import zipfile
from pathlib import Path

import pytest
import zarr
from hdmf.build import DatasetBuilder, GroupBuilder
from s3_server import new_bucket
from writing import write_builder

from hdmf_zarr3 import FileLockedError, IncompleteFileError, NWBZarrIO, StoreError, ZarrIO, break_lock, recover

TESTS = Path(__file__).resolve().parents[1]  # tests/: the helper modules and scripts


def _tree(n: int = 3) -> GroupBuilder:
    return GroupBuilder("root", datasets={"d": DatasetBuilder("d", list(range(n)))})


@pytest.mark.parametrize("name", ["f.zarr", "f.zarr.zip"])
@pytest.mark.parametrize("second", ["a", "r+", "w"])
def test_a_second_writer_is_refused_while_the_first_is_open(tmp_path, name, second):
    path = tmp_path / name
    write_builder(path, _tree())
    first = ZarrIO(path, mode="a")
    try:
        with pytest.raises(FileLockedError, match=f"open for writing by process {os.getpid()}") as caught:
            ZarrIO(path, mode=second)
        assert str(path) in str(caught.value) and "no longer running" not in str(caught.value)
        with ZarrIO(path, mode="r") as reader:  # readers are not blocked
            assert list(reader.read_builder()["d"].data[:]) == [0, 1, 2]
    finally:
        first.close()
    with ZarrIO(path, mode="a") as again:  # released on close
        again.read_builder()
    assert not Path(str(path) + ".lock").exists()


def test_the_lock_lives_beside_the_file_not_in_it(tmp_path):
    path = tmp_path / "f.zarr"
    with ZarrIO(path, mode="w") as io:
        io.write_builder(_tree())
        assert (tmp_path / "f.zarr.lock").is_file()
        assert not any("lock" in p.name for p in path.rglob("*"))


def _hold(path: Path, ready: str = "ready") -> subprocess.Popen:
    code = textwrap.dedent(f"""
        import sys
        from hdmf_zarr3 import ZarrIO
        io = ZarrIO({str(path)!r}, mode="a")
        print({ready!r}, flush=True)
        sys.stdin.readline()
        io.close()
    """)
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == ready
    return child


def test_a_writer_in_another_process_holds_the_lock_until_it_closes(tmp_path):
    path = tmp_path / "f.zarr"
    write_builder(path, _tree())
    child = _hold(path)
    try:
        with pytest.raises(FileLockedError, match=f"process {child.pid} ") as caught:
            ZarrIO(path, mode="a")
        assert "stale" not in str(caught.value)
    finally:
        child.communicate("\n", timeout=60)
    with ZarrIO(path, mode="a"):
        pass


def test_a_crashed_writer_leaves_a_stale_lock_that_can_be_broken(tmp_path):
    path = tmp_path / "f.zarr"
    write_builder(path, _tree())
    child = _hold(path)
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=60)
    with pytest.raises(FileLockedError, match="no longer running: the lock is stale") as caught:
        ZarrIO(path, mode="a")
    assert "break_lock" in str(caught.value)
    holder = break_lock(path)
    assert holder["pid"] == child.pid and holder["host"]
    assert break_lock(path) is None  # nothing left to break
    with ZarrIO(path, mode="a") as io:
        assert list(io.read_builder()["d"].data[:]) == [0, 1, 2]


def test_a_store_passed_in_is_locked_inside_it():
    store = zarr.storage.MemoryStore()
    write_builder(store, _tree())
    first = ZarrIO(store, mode="a")
    try:
        with pytest.raises(FileLockedError):
            ZarrIO(store, mode="r+")
    finally:
        first.close()
    with ZarrIO(store, mode="a"):
        pass
    assert break_lock(store) is None


def test_object_stores_lock_with_a_conditional_write(s3):
    bucket = new_bucket(s3)
    url, options = f"s3://{bucket}/session.nwb.zarr", s3["options"]
    write_builder(url, _tree(), storage_options=options)
    first = ZarrIO(url, mode="a", storage_options=options)
    try:
        keys = [o["Key"] for o in s3["client"]().list_objects_v2(Bucket=bucket)["Contents"]]
        assert "session.nwb.zarr.lock" in keys  # beside the file, not inside it
        with pytest.raises(FileLockedError, match=f"process {os.getpid()}"):
            ZarrIO(url, mode="a", storage_options=options)
        with ZarrIO(url, mode="r", storage_options=options) as reader:
            assert list(reader.read_builder()["d"].data[:]) == [0, 1, 2]
    finally:
        first.close()
    # a crashed writer's lock (left behind, as if its process died): refused, then broken explicitly
    stale = ZarrIO(url, mode="a", storage_options=options)
    stale.store_handle.lock._finalizer.detach()  # forget it without removing it
    with pytest.raises(FileLockedError):
        ZarrIO(url, mode="a", storage_options=options)
    assert break_lock(url, storage_options=options)["pid"] == os.getpid()
    with ZarrIO(url, mode="a", storage_options=options):
        pass


def test_an_open_that_fails_releases_the_lock(tmp_path):
    from hdmf_zarr3 import ModeError

    path = tmp_path / "f.zarr"
    write_builder(path, _tree())
    with pytest.raises(ModeError, match="new files only"):
        ZarrIO(path, mode="a", convention="hdmf-zarr")
    assert not Path(str(path) + ".lock").exists()
    with ZarrIO(path, mode="a"):
        pass


# --- writers never closed ---------------------------------------------------------------------------
def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith((".lock", ".partial")))


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _contents(path: Path) -> dict[str, bytes]:
    if path.is_file():
        return _members(path)
    return {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def _nwb(path: Path) -> None:
    from nwb_factories import small_nwbfile

    with NWBZarrIO(path, mode="w") as io:
        io.write(small_nwbfile(20))


def _trials(path: Path, **kwargs) -> int:
    with NWBZarrIO(path, mode="r", **kwargs) as io:
        return len(io.read().trials)


NEVER_CLOSED = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    from nwb_factories import small_nwbfile
    from hdmf_zarr3 import NWBZarrIO
    left_open = []
    for path in sys.argv[2:]:
        name = path.rsplit("/", 1)[-1]
        if name.startswith("written"):  # write() finished: what it wrote is committed
            io = NWBZarrIO(path, mode="w")
            io.write(small_nwbfile(20))
        elif name.startswith("appended"):  # a row held until a write() or close() that never comes
            io = NWBZarrIO(path, mode="a")
            io.read().add_trial(start_time=2.0, stop_time=3.0)
        else:  # opened, nothing changed
            io = NWBZarrIO(path, mode="a")
        left_open.append(io)
    print("exiting with", len(left_open), "files open", flush=True)
""")


def test_writers_never_closed_release_their_locks_at_exit(tmp_path):
    """The process exits normally with writers open: each lock is released (zarr's event loop is gone by
    then), a finished write() is kept (a zip is packed), a change never committed is not committed."""
    paths = {
        f"{kind}.{suffix}": tmp_path / f"{kind}.nwb.{suffix}"
        for kind in ("written", "appended", "opened")
        for suffix in ("zarr", "zarr.zip")
    }
    for key, path in paths.items():
        if not key.startswith("written"):
            _nwb(path)
    before = {key: _contents(path) for key, path in paths.items() if not key.startswith("written")}
    child = subprocess.run(
        [sys.executable, "-c", NEVER_CLOSED, str(TESTS), *map(str, paths.values())],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert child.returncode == 0 and "exiting with 6 files open" in child.stdout, child.stderr
    assert _leftovers(tmp_path) == []
    for suffix in ("zarr", "zarr.zip"):
        assert _trials(paths[f"written.{suffix}"]) == 2
        assert _contents(paths[f"opened.{suffix}"]) == before[f"opened.{suffix}"]
    # the appended row, held until a write() or close() that never came, is stored at exit, not committed:
    # a zip stays as it was; a directory keeps it, marked incomplete
    assert (
        paths["appended.zarr.zip"].read_bytes() and _contents(paths["appended.zarr.zip"]) == before["appended.zarr.zip"]
    )
    with pytest.raises(IncompleteFileError, match="an append started at"):
        _trials(paths["appended.zarr"])
    assert _trials(paths["appended.zarr"], allow_incomplete=True) == 3
    # its journal puts the file back as it was before the row, and the next writer gets in (no stale lock)
    assert "restored the file" in recover(paths["appended.zarr"])
    assert _contents(paths["appended.zarr"]) == before["appended.zarr"]
    for path in paths.values():
        with ZarrIO(path, mode="a"):
            pass


@pytest.mark.parametrize("suffix", ["zarr", "zarr.zip"])
def test_a_writer_never_closed_releases_its_lock_when_collected(tmp_path, suffix):
    from nwb_factories import small_nwbfile

    path = tmp_path / f"f.nwb.{suffix}"
    io = NWBZarrIO(path, mode="w")
    io.write(small_nwbfile(20))
    assert Path(f"{path}.lock").exists()
    collected = weakref.ref(io)
    del io
    gc.collect()
    assert collected() is None  # nothing (a finalizer, an exit hook) keeps the io alive
    assert _leftovers(tmp_path) == []
    assert _trials(path) == 2  # write() had committed it; a zip's working copy was packed
    io = NWBZarrIO(path, mode="a")  # an append never committed, then collected
    io.read().add_trial(start_time=2.0, stop_time=3.0)
    before = _contents(path)
    del io
    with pytest.warns(
        RuntimeWarning, match=r"never closed; rows appended to 3 dataset\(s\) since the last write\(\) are not stored"
    ):
        gc.collect()  # (no write or close can follow, and a finalizer may run on any thread: nothing is stored)
    assert _leftovers(tmp_path) == []
    assert _contents(path) == before and _trials(path) == 2  # the held row is dropped, the file as it was
    with ZarrIO(path, mode="a"):
        pass


def test_an_object_store_writer_never_closed_releases_its_lock_at_exit(s3):
    code = textwrap.dedent("""
        import json, sys
        from hdmf_zarr3 import ZarrIO
        io = ZarrIO(sys.argv[1], mode="a", storage_options=json.loads(sys.argv[2]))
        print("open", flush=True)
    """)
    bucket = new_bucket(s3)
    url, options = f"s3://{bucket}/session.nwb.zarr", s3["options"]
    write_builder(url, _tree(), storage_options=options)
    child = subprocess.run(
        [sys.executable, "-c", code, url, json.dumps(options)], capture_output=True, text=True, timeout=300
    )
    assert child.returncode == 0 and child.stdout.strip() == "open", child.stderr
    keys = [o["Key"] for o in s3["client"]().list_objects_v2(Bucket=bucket)["Contents"]]
    assert "session.nwb.zarr.lock" not in keys
    with ZarrIO(url, mode="a", storage_options=options) as io:
        assert list(io.read_builder()["d"].data[:]) == [0, 1, 2]


# --- break_lock on damaged locks; zip working copies ------------------------------------------------
@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "an empty file"),
        (b"garbage", "not a JSON object"),
        (b'{"host": "x", "pi', "not a JSON object"),
        (bytes(range(256)), "not a JSON object"),
        (b"[1, 2]", "not a JSON object"),
        (None, "a directory"),
    ],
)
def test_break_lock_removes_a_corrupt_lock(tmp_path, content, reason):
    path = tmp_path / "f.zarr"
    write_builder(path, _tree())
    lock = Path(f"{path}.lock")
    if content is None:
        lock.mkdir()
    else:
        lock.write_bytes(content)
    with pytest.raises(FileLockedError, match=f"write lock {lock} is unreadable \\({reason}"):
        ZarrIO(path, mode="a")
    assert reason in break_lock(path)["corrupt"]
    assert not lock.exists() and break_lock(path) is None
    with ZarrIO(path, mode="a"):
        pass


def test_break_lock_leaves_a_directory_with_files_alone(tmp_path):
    path = tmp_path / "f.zarr"
    write_builder(path, _tree())
    (tmp_path / "f.zarr.lock").mkdir()
    (tmp_path / "f.zarr.lock" / "notes.txt").write_text("mine")
    with pytest.raises(StoreError, match="directory with files in it"):
        break_lock(path)
    assert (tmp_path / "f.zarr.lock" / "notes.txt").read_text() == "mine"


def test_a_live_zip_writers_working_copy_is_never_removed(tmp_path):
    """Only a writer holding the lock cleans leftovers; another zip's working copies never match."""
    path, other = tmp_path / "f.zarr.zip", tmp_path / "f.zarr.zip.x.zip"
    write_builder(path, _tree())
    write_builder(other, _tree())
    first = ZarrIO(path, mode="a")
    neighbour = ZarrIO(other, mode="a")
    try:
        working = {p.name for p in tmp_path.glob("*.partial")}
        assert len(working) == 2
        with pytest.raises(FileLockedError):
            ZarrIO(path, mode="r+")
        with ZarrIO(path, mode="r") as reader:
            reader.read_builder()
        assert {p.name for p in tmp_path.glob("*.partial")} == working
        first.read_builder()["d"].data.append(3)
    finally:
        first.close()
    neighbours = {n for n in working if n.startswith("f.zarr.zip.x.zip.")}
    with ZarrIO(path, mode="a") as io:  # cleans f.zarr.zip's leftovers (there are none), not the neighbour's
        assert list(io.read_builder()["d"].data[:]) == [0, 1, 2, 3]
        assert neighbours < {p.name for p in tmp_path.glob("*.partial")}
    assert {p.name for p in tmp_path.glob("*.partial")} == neighbours
    neighbour.close()
    assert _leftovers(tmp_path) == []


def test_breaking_a_live_zip_writers_lock_never_replaces_the_zip(tmp_path):
    path = tmp_path / "f.zarr.zip"
    write_builder(path, _tree())
    before = path.read_bytes()
    live = ZarrIO(path, mode="a")
    live.read_builder()["d"].data.append(3)
    assert break_lock(path)["pid"] == os.getpid()  # the user's mistake: the holder is alive
    assert _leftovers(tmp_path) == []  # its working copy went with the lock
    with pytest.raises(StoreError, match="lock was broken while this writer was running"):
        live.close()
    assert path.read_bytes() == before and _leftovers(tmp_path) == []


def test_break_lock_removes_a_zips_leftovers_when_it_is_not_locked(tmp_path):
    path = tmp_path / "f.zarr.zip"
    write_builder(path, _tree())
    (tmp_path / "f.zarr.zip.k1llme_9.partial" / "d").mkdir(parents=True)
    (tmp_path / "f.zarr.zip.k1llme_9.partial").chmod(0o700)  # (private, as a writer makes it)
    (tmp_path / "f.zarr.zip.k1llme_9.partial" / "zarr.json").write_text("{}")
    (tmp_path / "f.zarr.zip.partial").write_bytes(b"PK")
    (tmp_path / "f.zarr.zip.notes").write_text("not ours")
    with ZarrIO(path, mode="r") as io:  # a reader removes nothing
        io.read_builder()
    assert len(_leftovers(tmp_path)) == 2
    assert break_lock(path) is None  # nothing was locked; the leftovers were removed under a lock of its own
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.zarr.zip", "f.zarr.zip.notes"]
    assert break_lock(tmp_path / "missing" / "f.zarr.zip") is None and not (tmp_path / "missing").exists()


def test_a_writer_nobody_refers_to_does_not_lock_out_the_next_one_in_this_process(tmp_path):
    """A writer kept only by a reference cycle (never closed) is collected before a new writer of this
    process is refused; one still in use is not (the same process gets FileLockedError, as another would)."""
    from nwb_factories import small_nwbfile

    path = tmp_path / "f.nwb.zarr"
    with NWBZarrIO(path, mode="w") as io:
        io.write(small_nwbfile(20))
    gc.disable()  # the cycle stays until the next writer looks at the lock
    try:
        forgotten = NWBZarrIO(path, mode="a")
        forgotten.cycle = forgotten  # reachable only from itself
        del forgotten
        with NWBZarrIO(path, mode="a") as io:
            io.read()
        in_use = NWBZarrIO(path, mode="a")
        with pytest.raises(FileLockedError):
            NWBZarrIO(path, mode="a")
        in_use.close()
    finally:
        gc.enable()


def test_one_exit_hook_per_process_however_many_writers(tmp_path):
    """Owners release their locks in close(); the exit hook for writers never closed is registered once."""
    import atexit

    first = ZarrIO(tmp_path / "first.zarr", mode="w")
    hooks = atexit._ncallbacks()
    writers = [ZarrIO(tmp_path / f"f{i}.zarr", mode="w") for i in range(5)]
    assert atexit._ncallbacks() == hooks
    for io in [first, *writers]:
        io.close()
        assert not Path(f"{io.source}.lock").exists()  # released by close(), not left for the hook
    assert atexit._ncallbacks() == hooks


@pytest.mark.parametrize("first_by", ["path", "store"])
def test_a_local_store_passed_in_takes_the_lock_a_path_takes(tmp_path, first_by):
    """One lock per directory (issue #27): a writer given ``LocalStore(path)`` and one given ``path`` exclude
    each other, whichever came first; the lock is ``<path>.lock`` beside the directory either way."""
    path = tmp_path / "f.zarr"
    write_builder(path, _tree())
    spellings = {"path": lambda: path, "store": lambda: zarr.storage.LocalStore(path)}
    first = ZarrIO(spellings[first_by](), mode="a")
    try:
        assert Path(str(path) + ".lock").exists()
        with pytest.raises(FileLockedError):
            ZarrIO(spellings["store" if first_by == "path" else "path"](), mode="a")
    finally:
        first.close()
    assert not Path(str(path) + ".lock").exists()


def test_a_ctrl_c_while_the_lock_request_is_on_its_way_leaves_no_lock():
    """Issue #38 (found by the S3 conversion sweep under load): an object store's conditional write, once sent,
    lands even when the wait for it is cancelled (obstore's requests run in Rust, and the server has the
    request). A Ctrl-C there cancelled the wait, the lock was looked for before it landed, not found, and then
    appeared: left behind with no writer. Now the request is made again to its end (it is conditional: it
    finds the lock or makes it), the lock removed, then the Ctrl-C raised."""
    import asyncio
    import threading
    import time

    from zarr.storage import MemoryStore

    from hdmf_zarr3.storage.safety import WriteLock, lock_place

    class LandsAnyway(MemoryStore):
        """A store whose conditional write lands 0.3 s after it is sent, whether or not anyone still waits."""

        async def set_if_not_exists(self, key, value):
            loop = asyncio.get_running_loop()
            answered = loop.create_future()

            def land():  # (as a request in Rust: no thread of the loop's, nothing a cancellation stops)
                time.sleep(0.3)
                asyncio.run(MemoryStore.set_if_not_exists(self, key, value))
                loop.call_soon_threadsafe(lambda: answered.done() or answered.set_result(None))

            threading.Thread(target=land, daemon=True).start()
            await answered

    store = LandsAnyway()
    place = lock_place(store)
    timer = threading.Timer(0.1, signal.pthread_kill, (threading.main_thread().ident, signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        WriteLock.acquire(place, "memory", "test")
    timer.join()
    time.sleep(0.6)  # (anything still on its way has landed)
    assert place.key not in store._store_dict


@pytest.mark.parametrize("name", ["f.zarr", "f.zarr.zip"])
@pytest.mark.parametrize("mode", ["a", "r+", "w"])
def test_a_lock_temporary_left_by_a_writer_cut_short_is_removed_by_the_next_writer_once_stale(tmp_path, name, mode):
    """A writer whose file system turned read-only between writing its lock's temporary and linking it left
    ``<name>.<32 hex>.partial`` beside the file, and no writer ever removed it (only break_lock did). The next
    writer now removes one older than a minute; a fresh one may be another writer's taking the lock now."""
    from hdmf_zarr3.storage.safety import locks

    path = tmp_path / name
    write_builder(path, _tree())
    stale, fresh = tmp_path / f"{name}.{'a' * 32}.partial", tmp_path / f"{name}.{'b' * 32}.partial"
    for temporary in (stale, fresh):
        temporary.write_text('{"pid": 1}')
    old = os.path.getmtime(fresh) - 2 * locks.STALE_TEMPORARY_SECONDS
    os.utime(stale, (old, old))
    ZarrIO(path, mode=mode).close()
    assert not stale.exists() and fresh.exists()
