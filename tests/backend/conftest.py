"""Fixtures shared by the backend tests: the hostile-file base files (test_hostile.py, test_hostile_chunks.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_corpus import write_bases


@pytest.fixture(scope="session")
def hostile_bases(tmp_path_factory) -> Path:
    """The directory of the base files the hostile cases start from (hostile_corpus.BASE_FILES), written once."""
    return write_bases(tmp_path_factory.mktemp("bases"))
