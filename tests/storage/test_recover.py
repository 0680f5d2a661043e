"""``recover`` and the append journal under attack and under accident: a hostile or stale journal is never
applied blindly, an interrupted recovery can be run again, and recovery keeps to the file and its lock."""

from __future__ import annotations

import errno
import json
import subprocess
import sys
from pathlib import Path

import pytest
from file_bytes import files
from planted_paths import interrupted_append
from writing import write_nwb
from zarr.storage import LocalStore

from hdmf_zarr3 import (
    CorruptStoreError,
    FileLockedError,
    IncompleteFileError,
    NWBZarrIO,
    SelfOverwriteError,
    StoreError,
    ZarrIO,
    convert,
    recover,
)

JOURNAL = "__hdmf_zarr3_journal"


@pytest.fixture
def written(tmp_path):
    return write_nwb(tmp_path / "f.nwb.zarr")


def _interrupted_append(path: Path) -> dict[str, bytes]:
    """Leave ``path`` as an append killed half way would (see :func:`planted_paths.interrupted_append`);
    returns the files before the append."""
    before = files(path)
    interrupted_append(path)
    return before


def test_an_interrupted_append_is_recovered(written):
    before = _interrupted_append(written)
    with pytest.raises(IncompleteFileError, match="recover"):
        NWBZarrIO(written, mode="r+")
    assert "restored" in recover(written)
    assert files(written) == before


def test_a_journal_naming_nodes_outside_the_file_is_refused_and_nothing_is_deleted(written, tmp_path):
    """A hostile journal must not make recover delete anything outside the file (or anything at all)."""
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "data.txt").write_text("keep me")
    _interrupted_append(written)
    for entry in (
        ["../precious"],
        ["/acquisition/../../precious"],
        ["__hdmf_zarr3_journal"],
        "not a list",
        ["."],
        [""],
    ):
        (written / JOURNAL / "new" / "9").write_text(json.dumps(entry))
        state = files(written)
        with pytest.raises(CorruptStoreError, match="journal entry"):
            recover(written)
        assert files(written) == state and (outside / "data.txt").read_text() == "keep me"
    (written / JOURNAL / "new" / "9").write_bytes(b"\x00garbage")
    with pytest.raises(CorruptStoreError, match="not JSON"):
        recover(written)


def test_a_stale_journal_beside_a_complete_file_is_never_applied(written):
    """A journal left by a crash between the commit and its deletion (or planted) would delete nodes: a
    complete root means it is stale, so it is removed and the file is not touched."""
    journal = written / JOURNAL
    (journal / "new").mkdir(parents=True)
    (journal / "root").write_bytes(b'{"zarr_format":3,"node_type":"group","attributes":{}}')
    (journal / "new" / "1").write_text(json.dumps(["/acquisition"]))
    (journal / "absent" / "acquisition" / "ts" / "data" / "c").mkdir(parents=True)
    (journal / "absent" / "acquisition" / "ts" / "data" / "c" / "0").write_bytes(b"")
    before = {k: v for k, v in files(written).items() if not k.startswith(JOURNAL)}
    with NWBZarrIO(written, mode="r") as io:  # readers do not see it
        assert len(io.read().acquisition["ts"].data) == 1000
    assert "removed the journal" in recover(written)
    assert files(written) == before
    # an append also starts by discarding it (never applies it)
    (journal / "new").mkdir(parents=True)
    (journal / "new" / "1").write_text(json.dumps(["/acquisition"]))
    with NWBZarrIO(written, mode="a") as io:
        nwb = io.read()
        nwb.add_trial(start_time=7.0, stop_time=8.0)
        io.write(nwb)
    with NWBZarrIO(written, mode="r") as io:
        nwb = io.read()
        assert len(nwb.acquisition["ts"].data) == 1000 and len(nwb.trials) == 3
    assert not journal.exists()


class _FailingStore(LocalStore):
    """A local store whose writes and deletes fail after ``budget`` of them (a crash during recovery)."""

    budget = 10**9

    def _spend(self):
        type(self).budget -= 1
        if type(self).budget < 0:
            raise OSError("the disk went away")

    async def set(self, key, value):
        self._spend()
        return await super().set(key, value)

    async def delete(self, key):
        self._spend()
        return await super().delete(key)


@pytest.mark.parametrize("budget", [0, 1, 2, 4, 7])
def test_a_recovery_interrupted_at_any_step_can_be_run_again(written, budget):
    before = _interrupted_append(written)
    store = _FailingStore(written)
    _FailingStore.budget = budget + 1  # the store's own lock key costs one write
    try:
        recover(store)
    except OSError:
        pass  # interrupted part way
    _FailingStore.budget = 10**9
    (written / "hdmf_zarr3.lock").unlink(missing_ok=True)  # the lock of the interrupted recovery
    recover(written)
    assert files(written) == before


def test_recover_waits_for_a_live_writer(written):
    with NWBZarrIO(written, mode="a"):
        with pytest.raises(FileLockedError):
            recover(written)


def test_recover_says_what_it_cannot_do(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "notes.txt").write_text("not a Zarr file")
    with pytest.raises(StoreError, match="no Zarr store") as caught:  # (ours, naming it, as opening says it)
        recover(plain)
    assert caught.value.path == str(plain)
    assert "notes" not in str(caught.value) and (plain / "notes.txt").exists()


@pytest.mark.parametrize("where", ["directory", "zip", "s3"])
def test_recover_of_a_place_without_a_file_is_our_error_naming_it(where, tmp_path, request):
    """HDMF's UnsupportedOperation ("Unable to open file ... in 'r+' mode") before: a mode the user never chose."""
    options = None
    if where == "s3":
        from s3_server import new_bucket

        s3 = request.getfixturevalue("s3")
        location, options = f"s3://{new_bucket(s3)}/missing.nwb.zarr", s3["options"]
    else:
        location = str(tmp_path / ("missing.nwb.zarr.zip" if where == "zip" else "missing.nwb.zarr"))
    with pytest.raises(StoreError, match="no file there to recover") as caught:
        recover(location, storage_options=options)
    assert caught.value.path == location and caught.value.errno == errno.ENOENT
    assert not (tmp_path / "missing.nwb.zarr").exists() and not (tmp_path / "missing.nwb.zarr.zip").exists()
    done = subprocess.run([sys.executable, "-m", "hdmf_zarr3.cli", "recover", location], capture_output=True, text=True)
    if where != "s3":  # (the command line reaches S3 with the environment's credentials, not the test server's)
        assert done.returncode != 0 and "no file there to recover" in done.stderr and "r+" not in done.stderr


def test_a_symlink_to_a_parent_of_the_source_is_not_a_destination(written, tmp_path):
    link = tmp_path / "elsewhere"
    link.symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(SelfOverwriteError, match="contains the source"):
        convert(written, link)


def test_the_cli_recovers(written):
    before = _interrupted_append(written)
    done = subprocess.run(
        [sys.executable, "-m", "hdmf_zarr3.cli", "recover", str(written)], capture_output=True, text=True
    )
    assert done.returncode == 0 and "restored the file" in done.stdout, done.stderr
    assert files(written) == before
    done = subprocess.run(
        [sys.executable, "-m", "hdmf_zarr3.cli", "info", str(written)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_allow_incomplete_never_writes(written):
    _interrupted_append(written)
    for mode in ("a", "r+", "w"):
        with pytest.raises(Exception, match="mode 'r' only"):
            ZarrIO(written, mode=mode, allow_incomplete=True)


def test_validate_does_not_report_the_journal_as_data(written, capsys):
    """The journal of an interrupted append is no node (Zarr v3 reserves "__" names): validate reports the
    incomplete append once, not stray chunks below no array."""
    from hdmf_zarr3.cli import main

    _interrupted_append(written)
    assert main(["validate", "--allow-incomplete", str(written)]) == 1
    out = capsys.readouterr().out
    assert JOURNAL not in out and "the file is incomplete" in out and out.strip().endswith("1 problem(s)")
