#!/usr/bin/env bash
# Set up and run the whole test suite.
source "$(dirname "${BASH_SOURCE[0]}")/_python.sh"
ensure_venv test
cd "$ROOT"
# on every core (pytest-xdist; a test file stays in one process, for its fixtures; `-n 0` after it runs in one
# process); the peer suites run in the controller (tests/conftest.py)
exec "$VENV/bin/python" -m pytest -n auto --dist loadfile "$@"
