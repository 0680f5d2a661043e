"""Text from a file never reaches the terminal raw: names, types, attribute values and error messages holding
ESC sequences, CR, BEL, C1 controls or bidirectional overrides are printed as escapes by every command, so a
file cannot erase, rewrite or reorder what a command says (``validate``'s verdict is the true one)."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from hostile_corpus import TERMINAL_TEXT, write_hostile_text_file

from hdmf_zarr3.cli import main
from hdmf_zarr3.cli.output import escaped_warnings
from hdmf_zarr3.format.data import printable
from hdmf_zarr3.format.data.terminal_text import UNSAFE

TESTS = Path(__file__).resolve().parents[1]
#: How the hostile text looks once escaped.
SHOWN = printable(TERMINAL_TEXT)


def assert_clean(text: str) -> None:
    """No line of ``text`` holds a character a terminal obeys or reorders."""
    for line in text.split("\n"):
        assert not UNSAFE.search(line), f"raw control or bidi character in {line!r}"


@pytest.fixture(scope="module")
def hostile_files(tmp_path_factory) -> dict[str, Path]:
    """A file whose names and attributes hold :data:`TERMINAL_TEXT` (its own name too), and one whose TimeSeries
    has a neurodata_type of that text (one problem)."""
    top = tmp_path_factory.mktemp("terminal")
    (top / "good").mkdir()
    (top / "bad").mkdir()
    return {
        "good": write_hostile_text_file(top / "good" / f"f{TERMINAL_TEXT}.nwb.zarr"),
        "bad": write_hostile_text_file(top / "bad" / f"f{TERMINAL_TEXT}.nwb.zarr", unknown_type=True),
        "top": top,
    }


def test_the_escape_shows_every_control_and_bidi_character():
    assert printable("a\x1b[2K\rb\x07\u202ec\x9b\x00\x7f\t\n\u2066\u200f\udc80 é ß 日本") == (
        "a\\x1b[2K\\rb\\x07\\u202ec\\x9b\\x00\\x7f\\t\\n\\u2066\\u200f\\udc80 é ß 日本"
    )
    assert printable(3) == "3" and printable("plain text, / and \\ kept") == "plain text, / and \\ kept"


@pytest.mark.parametrize(
    ("command", "which", "status"),
    [
        (["info"], "good", 0),
        (["info"], "bad", 0),
        (["validate"], "good", 0),
        (["validate"], "bad", 1),
        (["check-dandi"], "good", 1),
        (["recover"], "good", 0),
        (["convert", "--no-progress"], "good", 0),
        (["convert", "--no-progress"], "bad", 0),
        (["info"], "missing", 1),
    ],
)
def test_every_command_prints_text_from_the_file_escaped(hostile_files, capsys, command, which, status):
    top = hostile_files["top"]
    path = hostile_files.get(which, top / f"missing{TERMINAL_TEXT}.nwb.zarr")
    argv = [*command, str(path)]
    if command[0] == "convert":
        argv.append(str(top / which / f"out{TERMINAL_TEXT}.nwb"))
    assert main(argv) == status
    out, err = capsys.readouterr()
    assert_clean(out)
    assert_clean(err)
    assert SHOWN in out + err  # the file's text is there, escaped


def test_validate_says_its_true_verdict(hostile_files, capsys):
    for which, verdict in (("good", "valid"), ("bad", "1 problem(s)")):
        main(["validate", str(hostile_files[which])])
        lines = capsys.readouterr().out.splitlines()
        assert lines[-1] == f"{printable(hostile_files[which])}: {verdict}"
        assert all("valid" not in line.split(SHOWN)[0] for line in lines[:-1])  # no verdict but the last


def test_validate_in_a_terminal_writes_no_raw_byte_of_the_file(hostile_files):
    """The command as a user runs it (its own process: warnings and errors printed as they are)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    for which in ("good", "bad"):
        done = subprocess.run(
            [sys.executable, "-m", "hdmf_zarr3.cli", "validate", str(hostile_files[which])],
            capture_output=True,
            env=env,
            timeout=300,
        )
        out, err = done.stdout.decode(), done.stderr.decode()
        assert_clean(out)
        assert_clean(err)
        assert out.splitlines()[-1].endswith(": valid" if which == "good" else ": 1 problem(s)")


def test_view_announces_the_file_escaped(hostile_files, capsys, monkeypatch):
    import hdmf_zarr3.view

    def serve(location, storage_options=None, port=0, open_browser=True, announce=print):
        announce("http://127.0.0.1:1/?token=t")
        raise KeyboardInterrupt

    monkeypatch.setattr(hdmf_zarr3.view, "serve", serve, raising=False)
    assert main(["view", "--no-browser", str(hostile_files["good"])]) == 0
    out, err = capsys.readouterr()
    assert_clean(out)
    assert SHOWN in out and "stopped" in err


def test_warnings_shown_by_a_command_are_escaped():
    with escaped_warnings():
        shown = warnings.formatwarning(f"node /a{TERMINAL_TEXT} left out", UserWarning, "f.py", 1)
    assert_clean(shown.rstrip("\n"))
    assert SHOWN in shown
    assert warnings.formatwarning("x", UserWarning, "f.py", 1).startswith("f.py:1")  # restored after


def test_a_progress_bar_describes_its_node_escaped(capsys):
    """A conversion's progress bar (shown for large arrays) is described by the node path, escaped."""
    from hdmf_zarr3.backend.write import streaming

    bar = streaming._progress_bar(f"/acquisition/ts{TERMINAL_TEXT}/data", 2)
    bar.update(1)
    bar.close()
    assert bar.desc == f"/acquisition/ts{SHOWN}/data"
    assert_clean(capsys.readouterr().err.replace("\r", ""))  # (tqdm redraws its line with CR)


def test_an_error_naming_a_node_of_the_file_is_printed_escaped(hostile_files, tmp_path, capsys):
    """The one-line error of a command names the node it met the problem at: that name is the file's text."""
    import shutil

    from hostile_corpus import put_raw

    damaged = tmp_path / "damaged.nwb.zarr"
    shutil.copytree(hostile_files["good"], damaged)
    put_raw(damaged, f"/acquisition/ts{TERMINAL_TEXT}/data", b"\x1b[2K not JSON")
    for command in ("info", "validate"):
        main([command, str(damaged)])
        out, err = capsys.readouterr()
        assert_clean(out)
        assert_clean(err)
        assert f"ts{SHOWN}" in out + err
