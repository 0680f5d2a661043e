"""A shard of a local directory is opened once per read and its runs read one after another in the order they are
stored, each decoded as it arrives (issue #40: the kernel then reads ahead of the reader; before, each run was a
file opened again, four at once, and a cold 1 s window came 1.4x slower than the disk allows). The same checks,
errors and bounds hold on this path as on every other read: a disk error or a Ctrl-C at any of its reads, a damaged
or truncated shard, a failed chunk, a reader running ahead of its decoding."""

from __future__ import annotations

import errno
import os
import signal
import threading
import time

import numpy as np
import pytest
from writing import nwbfile_with, write_nwb

from hdmf_zarr3 import CorruptStoreError, NWBZarrIO, StoreError, UnsafeDataError, ZarrDataIO
from hdmf_zarr3.storage.codecs import direct_read, ordered_runs

VALUES = np.random.default_rng(7).integers(-1000, 1000, (1600, 96)).astype("int16")
NODE = "/acquisition/x/data"
#: Selections of every kind the direct reader takes: boxes within one shard and across several, a column, the
#: whole array, strided and listed (orthogonal picks), one element.
SELECTIONS = {
    "window": (slice(130, 350),),
    "across shards": (slice(350, 1250),),
    "one column": (slice(None), 5),
    "whole": (slice(None),),
    "strided": (slice(3, 1590, 7), slice(90, 10, -3)),
    "listed rows": ([1, 399, 400, 1599],),
    "one element": (999, 95),
}


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    path = tmp_path_factory.mktemp("ordered") / "f.nwb.zarr"
    write_nwb(path, nwbfile_with(ZarrDataIO(VALUES, chunks=(100, 32), shards=(400, 96))))
    return path


class Trace:
    """The files of shards opened, and the reads made of them (``(shard, offset, size)``), by every thread."""

    def __init__(self, monkeypatch):
        self.opens: list[str] = []
        self.reads: list[tuple[str, int, int]] = []
        self._fds: dict[int, str] = {}
        self.fail_at: int | None = None
        self.failure: BaseException | None = None
        self.on_read = lambda: None
        real_open, real_pread, real_close = os.open, os.pread, os.close

        def traced_open(path, flags, *args, **kwargs):
            fd = real_open(path, flags, *args, **kwargs)
            if "/data/c/" in os.fspath(path):
                self.opens.append(os.fspath(path).rsplit("/data/", 1)[1])
                self._fds[fd] = self.opens[-1]
            return fd

        def traced_pread(fd, size, offset):
            if fd in self._fds:
                self.reads.append((self._fds[fd], offset, size))
                self.on_read()
                if self.fail_at is not None and len(self.reads) == self.fail_at:
                    raise self.failure
            return real_pread(fd, size, offset)

        def traced_close(fd):
            self._fds.pop(fd, None)
            return real_close(fd)

        monkeypatch.setattr(os, "open", traced_open)
        monkeypatch.setattr(os, "pread", traced_pread)
        monkeypatch.setattr(os, "close", traced_close)


@pytest.mark.parametrize("name", list(SELECTIONS))
def test_each_shard_is_opened_once_and_its_runs_read_in_the_order_stored(written, monkeypatch, name):
    monkeypatch.setattr(direct_read, "RUN_BYTES", {**direct_read.RUN_BYTES, "local": 1})  # one chunk per run
    key = SELECTIONS[name]
    with NWBZarrIO(written, mode="r") as io:
        data = io.read().acquisition["x"].data
        trace = Trace(monkeypatch)
        np.testing.assert_array_equal(data[key], VALUES[key])
    assert len(trace.opens) == len(set(trace.opens)), f"a shard was opened more than once: {trace.opens}"
    for shard in set(trace.opens):
        reads = [(offset, size) for where, offset, size in trace.reads if where == shard]
        index, runs = reads[0], reads[1:]
        assert index[0] + index[1] == os.path.getsize(written / "acquisition/x/data" / shard)  # its index first
        assert runs == sorted(runs) and runs, f"{shard}: runs not read in the order stored: {runs}"


@pytest.mark.parametrize("kind", ["eio", "interrupt"])
def test_a_disk_error_or_a_ctrl_c_at_any_read_of_a_shard_ends_the_read_and_its_threads(written, monkeypatch, kind):
    monkeypatch.setattr(direct_read, "RUN_BYTES", {**direct_read.RUN_BYTES, "local": 1})
    key = SELECTIONS["across shards"]
    with NWBZarrIO(written, mode="r") as io:
        data = io.read().acquisition["x"].data
        trace = Trace(monkeypatch)
        data[key]
        total = len(trace.reads)
        for at in range(1, total + 1):
            trace.reads.clear()
            trace.fail_at = at
            trace.failure = KeyboardInterrupt() if kind == "interrupt" else OSError(errno.EIO, "I/O error")
            expected = KeyboardInterrupt if kind == "interrupt" else StoreError
            with pytest.raises(expected) as caught:
                data[key]
            if kind == "eio":
                assert caught.value.path == NODE and "I/O error" in str(caught.value)
            trace.fail_at = None
            np.testing.assert_array_equal(data[key], VALUES[key])  # the file reads on, as before
    assert total > 8


def test_a_ctrl_c_while_a_shard_is_read_returns_once_nothing_of_the_read_runs_on(written, monkeypatch):
    """A real Ctrl-C (SIGINT to the main thread, waiting for the read) at every read of the shards: the read is
    interrupted, and no read of it happens after (its reader thread stopped, its decodings ended)."""
    monkeypatch.setattr(direct_read, "RUN_BYTES", {**direct_read.RUN_BYTES, "local": 1})
    key = SELECTIONS["whole"]
    main = threading.main_thread().ident
    with NWBZarrIO(written, mode="r") as io:
        data = io.read().acquisition["x"].data
        trace = Trace(monkeypatch)
        data[key]
        total = len(trace.reads)
        for at in range(1, total + 1, 3):
            trace.reads.clear()
            trace.on_read = lambda at=at: len(trace.reads) == at and signal.pthread_kill(main, signal.SIGINT)
            with pytest.raises(KeyboardInterrupt):
                data[key]
            after = len(trace.reads)
            time.sleep(0.05)
            assert len(trace.reads) == after, f"reads went on after the Ctrl-C at read {at}"
            trace.on_read = lambda: None
            np.testing.assert_array_equal(data[key], VALUES[key])
    assert total > 40


def test_a_shard_truncated_after_its_index_was_read_is_a_format_error_naming_it(written, tmp_path, monkeypatch):
    copy = tmp_path / "copy.nwb.zarr"
    os.system(f"cp -r {written} {copy}")
    shard = copy / "acquisition/x/data/c/1/0"
    with NWBZarrIO(copy, mode="r") as io:
        data = io.read().acquisition["x"].data
        trace = Trace(monkeypatch)
        trace.on_read = lambda: len(trace.reads) == 2 and os.truncate(shard, 100)  # its index read, not its runs
        with pytest.raises(CorruptStoreError, match="past the end of the shard") as caught:
            data[500:600]
    assert caught.value.path == NODE


def test_a_damaged_chunk_stops_the_reading_of_its_shard(written, tmp_path, monkeypatch):
    monkeypatch.setattr(direct_read, "RUN_BYTES", {**direct_read.RUN_BYTES, "local": 1})
    monkeypatch.setattr(ordered_runs, "RUNS_AHEAD", 1)  # read one run ahead of the decoding
    copy = tmp_path / "copy.nwb.zarr"
    os.system(f"cp -r {written} {copy}")
    shard = copy / "acquisition/x/data/c/0/0"
    raw = bytearray(shard.read_bytes())
    raw[16:64] = bytes(48)  # the first chunk's compressed bytes (after its 16-byte header)
    shard.write_bytes(bytes(raw))
    with NWBZarrIO(copy, mode="r") as io:
        data = io.read().acquisition["x"].data
        trace = Trace(monkeypatch)
        with pytest.raises(CorruptStoreError) as caught:
            data[0:400]
    assert caught.value.path == NODE
    assert len(trace.reads) < 1 + 12, "every run of the shard was read after its first chunk failed"


class _Source:
    """An object of ``runs`` runs of one byte each, whose reads are counted."""

    def __init__(self):
        self.reads = 0

    def read(self, start: int, stop: int) -> bytes:
        self.reads += 1
        return bytes(stop - start)


def test_a_reader_runs_at_most_runs_ahead_of_its_decoding(monkeypatch):
    monkeypatch.setattr(ordered_runs, "RUNS_AHEAD", 3)
    source, release, started = _Source(), threading.Event(), threading.Event()

    def decode(run):
        started.set()
        release.wait(10)

    runs = [[(i, i, 1)] for i in range(20)]
    stop = threading.Event()
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        reader = threading.Thread(
            target=ordered_runs.read_in_order, args=(source, runs, decode, pool, stop, lambda: ValueError())
        )
        reader.start()
        started.wait(10)
        time.sleep(0.2)
        assert source.reads == 3  # the one being decoded and two waiting: memory bounded
        release.set()
        reader.join(10)
    assert source.reads == 20


def test_a_reader_stopped_reads_no_further_run():
    source, stop = _Source(), threading.Event()
    stop.set()
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        jobs = ordered_runs.read_in_order(source, [[(0, 0, 1)], [(1, 1, 1)]], print, pool, stop, ValueError)
    assert source.reads == 0 and jobs == []


@pytest.mark.parametrize("planted", ["fifo", "symlink out"])
def test_a_shard_that_is_not_a_regular_file_inside_the_file_is_refused_unread(written, tmp_path, planted):
    copy = tmp_path / "copy.nwb.zarr"
    os.system(f"cp -r {written} {copy}")
    shard = copy / "acquisition/x/data/c/1/0"
    shard.unlink()
    if planted == "fifo":
        os.mkfifo(shard)  # a read of it would wait for a writer for ever
    else:
        (tmp_path / "outside").write_bytes(b"secret" * 100)
        shard.symlink_to(tmp_path / "outside")
    previous = signal.signal(signal.SIGALRM, lambda *a: (_ for _ in ()).throw(TimeoutError("the read hung")))
    signal.alarm(20)
    try:
        with NWBZarrIO(copy, mode="r") as io:
            with pytest.raises((CorruptStoreError, UnsafeDataError)) as caught:
                io.read().acquisition["x"].data[500:600]
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert caught.value.path == NODE and ("not a regular file" in str(caught.value) or "outside" in str(caught.value))
