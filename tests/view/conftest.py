"""The viewer's tests share one written file (it is only read)."""

from __future__ import annotations

import pytest
from viewer_files import write_viewer_file


@pytest.fixture(scope="session")
def viewer_file(tmp_path_factory) -> str:
    return str(write_viewer_file(tmp_path_factory.mktemp("view") / "session.nwb.zarr"))


@pytest.fixture
def opened(viewer_file):
    from hdmf_zarr3.view.viewed_file import ViewedFile

    opened = ViewedFile(viewer_file)
    yield opened
    opened.close()
