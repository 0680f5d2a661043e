"""Session-wide set-up: the peer suites (PyNWB's battery, hdmf-zarr's unit tests) run beside the rest
of the suite, in the background (see _peer_runs.py).

The tests live in one folder per layer of the package (``format/``, ``storage/``, ``backend/``, ``hdf5/``,
``integrations/``, ``inspection/``, ``cli/``), plus ``suites/`` (the peer suites) and ``project/`` (packaging, docs,
benchmarks, layering). Each folder is a package, so basenames may repeat across folders; ``tests/`` itself
is not one: pytest puts it on ``sys.path``, and the helper modules here (``nwb_factories``, ``writing``,
``s3_server``...) import by name from every folder.
"""

from __future__ import annotations

import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

try:
    from ._battery import battery_jobs
    from ._hdmf_zarr_peer import hdmf_zarr_jobs
    from ._peer_runs import BackgroundRuns, RunsElsewhere
except ImportError:  # tests/ is not a package: pytest puts tests/ itself on sys.path
    from _battery import battery_jobs
    from _hdmf_zarr_peer import hdmf_zarr_jobs
    from _peer_runs import BackgroundRuns, RunsElsewhere

from writing import StoreCase

#: The stores the store-agnostic tests run on (the ``any_store`` fixture).
STORE_KINDS = ("local", "zip", "memory", "s3")

#: Test module (in tests/suites/) -> the background runs it checks.
PEER_MODULES = {"test_pynwb_battery.py": battery_jobs, "test_hdmf_zarr_suite.py": hdmf_zarr_jobs}


#: pytest-xdist's controller hands its workers the folder where it runs the peer suites under this key.
PEER_ROOT_KEY = "hdmf_zarr3_peer_root"


#: Modules of one long test each (15-60 s: a subprocess, a build), started with the slow sweeps: collected
#: last (tests/project/), one of them was the last file a worker ran while the other had nothing left.
LONG_MODULES = frozenset({"test_benchmarks.py", "test_docs.py", "test_packaging.py", "test_static_checks.py"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slow sweeps and the long modules first (on two or more cores the longest tests should not be the
    last to start), the peer modules last (their runs have the whole session to progress in the background)."""

    def early(item: pytest.Item) -> bool:
        return item.get_closest_marker("slow") is not None or item.path.name in LONG_MODULES

    # a stable sort: the order is otherwise kept
    items.sort(key=lambda item: (item.path.name in PEER_MODULES, not early(item)))


def _peer_jobs(selected: set[str]) -> list:
    return [job for name in PEER_MODULES if name in selected for job in PEER_MODULES[name]()]


class PeerRunsOfTheController:
    """With pytest-xdist (``-n``), the controller runs the peer suites, once for all workers: it starts
    them when the first worker has collected (the selection is known then) and hands each worker the
    folder where every run's outcome appears (``RunsElsewhere``)."""

    def __init__(self, root: Path):
        self.root = root
        self.runs: BackgroundRuns | None = None

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[PEER_ROOT_KEY] = str(self.root)

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if self.runs is not None:
            return
        selected = {node_id.split("::")[0].rsplit("/", 1)[-1] for node_id in ids} & PEER_MODULES.keys()
        self.runs = BackgroundRuns(self.root, _peer_jobs(selected), slots=1).start()

    def pytest_sessionfinish(self, exitstatus: int) -> None:
        if self.runs is not None:
            self.runs.cancel()
        if exitstatus == 0:  # kept to look into otherwise (the failures name its reports)
            shutil.rmtree(self.root, ignore_errors=True)


def pytest_configure(config: pytest.Config) -> None:
    # The Ctrl-C tests send real SIGINTs, to this process and to the commands they start. A suite started in
    # the background by a script (``bash .ci/run &``) inherits SIGINT ignored, and Python then never turns
    # it into KeyboardInterrupt: those tests would fail, or wait for their timeouts. Handled again here, it
    # also reaches the commands started (a handled signal is reset to its default at exec).
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    is_controller = not hasattr(config, "workerinput") and (config.getoption("numprocesses", None) or 0)
    if is_controller and config.pluginmanager.hasplugin("xdist"):
        root = Path(tempfile.mkdtemp(prefix="hdmf-zarr3-peer-"))
        config.pluginmanager.register(PeerRunsOfTheController(root), "hdmf-zarr3-peer-runs")


@pytest.fixture(scope="session", autouse=True)
def peer_runs(request, tmp_path_factory):
    """Start the runs of the peer modules that were selected, one at a time (or, in a pytest-xdist worker,
    see those the controller runs)."""
    selected = {item.path.name for item in request.session.items} & PEER_MODULES.keys()
    if not selected:
        yield None
        return
    worker_input = getattr(request.config, "workerinput", {})
    if PEER_ROOT_KEY in worker_input:
        yield RunsElsewhere(Path(worker_input[PEER_ROOT_KEY]), [label for label, _ in _peer_jobs(selected)])
        return
    runs = BackgroundRuns(tmp_path_factory.mktemp("peer"), _peer_jobs(selected), slots=1).start()
    yield runs
    runs.cancel()


@pytest.fixture(scope="session")
def s3() -> Iterator[dict[str, Any]]:
    """moto's S3 server on 127.0.0.1 (s3_server.py), started once, on first use, for the whole session.

    Each test takes a fresh bucket (``s3_server.new_bucket``), so what one test writes is never another's.
    """
    pytest.importorskip("moto", reason="the S3 tests need moto (pip install '.[test]')")
    from s3_server import s3_server

    with s3_server() as server:
        yield server


@pytest.fixture(params=STORE_KINDS)
def any_store(request: pytest.FixtureRequest, tmp_path) -> StoreCase:
    """A file not written yet, on each kind of store in turn (S3 through the session's server)."""
    kind = request.param
    if kind == "local":
        return StoreCase(kind, tmp_path / "f.nwb.zarr")
    if kind == "zip":
        return StoreCase(kind, tmp_path / "f.nwb.zarr.zip")
    if kind == "memory":
        from zarr.storage import MemoryStore

        return StoreCase(kind, MemoryStore())
    from s3_server import new_bucket

    server = request.getfixturevalue("s3")  # only S3 cases start the server
    return StoreCase(kind, f"s3://{new_bucket(server)}/f.nwb.zarr", server["options"])
