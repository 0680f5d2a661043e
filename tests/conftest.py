"""Session-wide set-up: PyNWB's battery runs beside the rest of the suite (see _battery.py)."""

from __future__ import annotations

import pytest

try:
    from ._battery import BackgroundBattery
except ImportError:  # tests/ is not a package: pytest puts tests/ itself on sys.path
    from _battery import BackgroundBattery

BATTERY_MODULE = "test_pynwb_battery.py"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Collect the battery last, so its runs have the whole session to progress in the background."""
    items.sort(key=lambda item: item.path.name == BATTERY_MODULE)  # stable: the order is otherwise kept


@pytest.fixture(scope="session", autouse=True)
def battery_in_background(request, tmp_path_factory):
    """Start the battery's runs now, one at a time, if any battery test was selected."""
    if not any(item.path.name == BATTERY_MODULE for item in request.session.items):
        yield None
        return
    job = BackgroundBattery(tmp_path_factory.mktemp("battery"), slots=1).start()
    yield job
    job.cancel()
