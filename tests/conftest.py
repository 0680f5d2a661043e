"""Session-wide set-up: the peer suites (PyNWB's battery, hdmf-zarr's unit tests) run beside the rest
of the suite, in the background (see _peer_runs.py).

The tests live in one folder per layer of the package (``format/``, ``storage/``, ``backend/``, ``hdf5/``,
``integrations/``, ``cli/``), plus ``suites/`` (the peer suites) and ``project/`` (packaging, docs,
benchmarks, layering). Each folder is a package, so basenames may repeat across folders; ``tests/`` itself
is not one: pytest puts it on ``sys.path``, and the helper modules here (``nwb_factories``, ``writing``,
``s3_server``...) import by name from every folder.
"""

from __future__ import annotations

import pytest

try:
    from ._battery import battery_jobs
    from ._hdmf_zarr_peer import hdmf_zarr_jobs
    from ._peer_runs import BackgroundRuns
except ImportError:  # tests/ is not a package: pytest puts tests/ itself on sys.path
    from _battery import battery_jobs
    from _hdmf_zarr_peer import hdmf_zarr_jobs
    from _peer_runs import BackgroundRuns

#: Test module (in tests/suites/) -> the background runs it checks.
PEER_MODULES = {"test_pynwb_battery.py": battery_jobs, "test_hdmf_zarr_suite.py": hdmf_zarr_jobs}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Collect the peer modules last, so their runs have the whole session to progress in the background."""
    items.sort(key=lambda item: item.path.name in PEER_MODULES)  # stable: the order is otherwise kept


@pytest.fixture(scope="session", autouse=True)
def peer_runs(request, tmp_path_factory):
    """Start the runs of the peer modules that were selected, one at a time."""
    selected = {item.path.name for item in request.session.items} & PEER_MODULES.keys()
    if not selected:
        yield None
        return
    jobs = [job for name in PEER_MODULES if name in selected for job in PEER_MODULES[name]()]
    runs = BackgroundRuns(tmp_path_factory.mktemp("peer"), jobs, slots=1).start()
    yield runs
    runs.cancel()
