"""The storage specification's examples are what the code writes today."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_storage_spec_examples_are_current():
    result = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "_examples" / "make_storage_examples.py"), "--check",
         str(ROOT / "docs" / "storage.md")], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, (
        f"docs/storage.md is stale; regenerate with make_storage_examples.py --update\n{result.stdout}{result.stderr}")
