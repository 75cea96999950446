# Sourced by the scripts: create (once) and use the project's virtual environment in .venv.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "changewatch needs Python 3.11 or newer (set PYTHON=/path/to/python3.11)" >&2
    exit 2
fi
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
stamp=".venv/.changewatch-installed"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e ".[test]"
    touch "$stamp"
fi
