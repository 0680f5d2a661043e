# Sourced by the other scripts: finds a Python >= 3.12 and prepares .venv with the project installed.
# Exits with a clear message when no suitable interpreter exists.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"

find_python() {
    local candidates=()
    [ -n "${PYTHON:-}" ] && candidates+=("$PYTHON")
    candidates+=(python3.13 python3.12 python3 python)
    if command -v pyenv >/dev/null 2>&1; then
        local root; root="$(pyenv root)"
        for v in "$root"/versions/3.1[2-9]*/bin/python3; do [ -x "$v" ] && candidates+=("$v"); done
    fi
    for c in "${candidates[@]}"; do
        local exe; exe="$(command -v "$c" 2>/dev/null || true)"
        [ -z "$exe" ] && continue
        if "$exe" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1; then
            echo "$exe"; return 0
        fi
    done
    return 1
}

ensure_venv() {
    local extras="$1"
    if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then
        local py
        if ! py="$(find_python)"; then
            echo "error: hdmf_zarr3 needs Python >= 3.12 (zarr-python >= 3.2 refuses older ones)." >&2
            echo "       Install one, or point PYTHON=/path/to/python3.12 at it." >&2
            exit 2
        fi
        echo "using $py ($("$py" --version 2>&1))" >&2
        rm -rf "$VENV"
        "$py" -m venv "$VENV"
        "$VENV/bin/python" -m pip install --quiet --upgrade pip
    fi
    "$VENV/bin/python" -m pip install --quiet -e "$ROOT[$extras]" 2>&1 | grep -v "^WARNING: Location" >&2 || true
    "$VENV/bin/python" -c 'import hdmf_zarr3' || { echo "error: installing hdmf_zarr3 failed" >&2; exit 2; }
}
