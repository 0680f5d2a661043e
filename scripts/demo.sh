#!/usr/bin/env bash
# Set up and run the main job: write a realistic NWB file to Zarr v3, read it back, print a summary.
source "$(dirname "${BASH_SOURCE[0]}")/_python.sh"
ensure_venv test
exec "$VENV/bin/python" "$ROOT/scripts/demo.py" "$@"
