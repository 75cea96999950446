#!/usr/bin/env bash
# The whole test suite: lint, types, then pytest (unit, store, end-to-end crawls, doctests).
# Arguments go to pytest: `-m "not slow"` is the fast lane (README, "Contributing"); pytest runs
# on two pytest-xdist workers unless the arguments choose (`-n 0`, `-n 4`, `-p no:xdist`).
source "$(dirname "${BASH_SOURCE[0]}")/venv.sh"
.venv/bin/ruff check changewatch tests bench
.venv/bin/mypy
# Bytecode for the package and the tests, once: every crawl the tests start is a new Python process,
# which would otherwise compile the package again where PYTHONDONTWRITEBYTECODE is set.
PYTHONDONTWRITEBYTECODE= .venv/bin/python -m compileall -q -j 0 changewatch tests >/dev/null || true  # pytest reports what does not compile
workers=(-n 2)
# a whole file at a time to a worker, in the order tests/conftest.py gives (its longest files first),
# so that a file's module fixtures (one crawl shared by its tests) run once
dist=(--dist loadfile --no-loadscope-reorder)
for arg in "$@"; do
    case "$arg" in
        -n|-n*|--numprocesses|--numprocesses=*) workers=() ;;
        --dist|--dist=*|-d) dist=() ;;
        no:xdist|-pno:xdist) workers=(); dist=() ;;
    esac
done
exec .venv/bin/python -m pytest "${workers[@]}" "${dist[@]}" "$@"
