#!/usr/bin/env bash
# The whole test suite: lint, types, then pytest (unit, store, end-to-end crawls, doctests).
# Arguments go to pytest: `-m "not slow"` is the fast lane (README, "Contributing"); pytest runs
# on two pytest-xdist workers unless the arguments choose (`-n 0`, `-n 4`, `-p no:xdist`).
source "$(dirname "${BASH_SOURCE[0]}")/venv.sh"
.venv/bin/ruff check changewatch tests bench
.venv/bin/mypy
workers=(-n 2)
for arg in "$@"; do
    case "$arg" in
        -n|-n*|--numprocesses|--numprocesses=*|no:xdist|-pno:xdist) workers=() ;;
    esac
done
exec .venv/bin/python -m pytest "${workers[@]}" "$@"
