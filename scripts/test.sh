#!/usr/bin/env bash
# Set up and run the whole test suite.
source "$(dirname "${BASH_SOURCE[0]}")/_python.sh"
ensure_venv test
cd "$ROOT"
exec "$VENV/bin/python" -m pytest "$@"
