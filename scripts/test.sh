#!/usr/bin/env bash
# The whole test suite: lint, types, then pytest (unit, store, end-to-end crawls, doctests).
source "$(dirname "${BASH_SOURCE[0]}")/venv.sh"
.venv/bin/ruff check changewatch tests bench
.venv/bin/mypy
exec .venv/bin/python -m pytest "$@"
