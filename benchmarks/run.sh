#!/usr/bin/env bash
# Issue #4 part 5: set up .venv (project + test extras) and the hdmf-zarr 0.14 scratch venv, then run
# every benchmark part. Arguments go to benchmarks/run.py (e.g. --parts ab, --seconds 10, --no-rival).
# Results: printed, and written to benchmarks/results/latest.json.
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/_python.sh"
ensure_venv test,bench
cd "$ROOT/benchmarks"
start=$SECONDS
"$VENV/bin/python" -c 'import _rival; _rival.ensure()'   # creates .cache/venv-hdmf-zarr-0.14 once; never fails
"$VENV/bin/python" run.py "$@"
echo "run.sh: $((SECONDS - start)) s in all"
