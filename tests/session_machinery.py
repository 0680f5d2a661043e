"""The test session's own background machinery, which the audit-hook guards leave out.

The peer suites run from a thread of this process (``_peer_runs.BackgroundRuns``): it makes their scratch
folders and starts their subprocesses while other tests run. The guards of ``hostile_corpus.bounded`` (no
side effects while a hostile file is read) and ``path_trace.tracing`` (every path a block touches) see
audit events from every thread, so that the threads zarr reads on are watched too; they leave out only the
threads named here, which belong to the session and never to the code under test.
"""

from __future__ import annotations

import threading

#: The start of the name of every thread the session itself runs.
THREAD_PREFIX = "test-session-"


def thread_name(purpose: str) -> str:
    """The name to give a thread of the session's machinery."""
    return THREAD_PREFIX + purpose


def in_session_machinery() -> bool:
    """Whether the calling thread is one of the session's own (whose audit events are not the test's)."""
    return threading.current_thread().name.startswith(THREAD_PREFIX)
