#!/usr/bin/env bash
# The demo: a noisy site on 127.0.0.1, crawled, changed and crawled again (SQLite store).
source "$(dirname "${BASH_SOURCE[0]}")/venv.sh"
exec .venv/bin/changewatch demo "$@"
