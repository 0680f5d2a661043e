"""The suite's own set-up: its Ctrl-C tests hold when the suite is started with SIGINT ignored, as a script's
background job (``bash .ci/run &``) starts it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: A Ctrl-C sent to the test's own process, and one sent to a command the test starts.
CTRL_C_TESTS = [
    "tests/storage/test_task_groups.py::test_ctrl_c_while_waiting_is_raised_once_everything_has_ended",
    "tests/view/test_cli_view.py::test_view_serves_until_ctrl_c_and_stops_cleanly",
]


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_ctrl_c_tests_pass_in_a_session_started_with_sigint_ignored(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", *CTRL_C_TESTS],
        cwd=ROOT,
        env=env,
        preexec_fn=_ignore_sigint,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "2 passed" in done.stdout, done.stdout[-2000:]
