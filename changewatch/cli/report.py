"""``changewatch report``: one self-contained HTML page of a period's changes: a summary (changes by
kind, failing watches, health warnings), per site small charts of what the watcher observed, and
per change what changed, side by side, with the changed words marked (docs/cli.md)."""

from __future__ import annotations

import argparse
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..report import ReportOptions, write_report
from ..store import ChangeLogStore, ChangeQuery, StoreError
from ..store.health import HealthStore
from .common import (
    LOGGED_KINDS,
    CommandError,
    UsageError,
    add_command,
    add_kind_option,
    add_spider_option,
    add_store_option,
    add_upgrade_option,
    error,
    open_store,
    parse_kinds,
    parse_since,
)

__all__ = ["add_parser"]

NAME = "report"

DEFAULT_LIMIT = 500


class _ReportStore(ChangeLogStore, HealthStore):
    """What a report reads (a built-in store has both)."""


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of changes (0 or more)")
    return value


def _output(path: str) -> Any:
    """A temporary file beside *path*, renamed to it once the report is whole: a failure half-way
    leaves no half report (and an older report, if there was one, as it was)."""
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"-o {path}: is a directory; name the file to write (-o {target / 'report.html'})")
    try:
        return tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=target.parent, prefix=f".{target.name}.",
                                           suffix=".tmp", delete=False)
    except OSError as exc:
        raise UsageError(f"-o {path}: cannot write there: {exc.strerror or exc}") from None


def run(args: argparse.Namespace) -> int:
    """Exit 0: written (an empty period too: the report says so); 1: the store could not be read
    or the report not written; 2: a bad argument, an output that cannot be written, or a store
    that cannot be opened."""
    now = datetime.now(UTC).replace(microsecond=0)
    query = ChangeQuery(spiders=tuple(dict.fromkeys(args.spider)), kinds=parse_kinds(args.kind),
                        since=parse_since(args.since, now))
    out = _output(args.output)
    try:
        store = _open(args)
    except CommandError:
        _discard(out)
        raise
    try:
        total, shown = _write(store, ReportOptions(args.store, query, args.limit, now, query.kinds or LOGGED_KINDS),
                              out, args.output)
    except (StoreError, OSError) as exc:
        _discard(out)
        error(NAME, f"the report was not written: {getattr(exc, 'strerror', None) or exc}")
        return 1
    finally:
        store.close()
    if total == 0:
        error(NAME, f"no changes since {query.since}: wrote {args.output}, an empty report (the summary and the "
                    "sites' charts say whether anything was crawled)")
    elif shown < total:
        error(NAME, f"{total} changes since {query.since}: the newest {shown} shown in {args.output}, "
                    f"{total - shown} more not shown (--limit)")
    return 0


def _open(args: argparse.Namespace) -> Any:
    store = open_store(args.store, upgrade=args.upgrade, protocol=ChangeLogStore,
                       purpose="make a report of its change log")
    if not isinstance(store, HealthStore):
        store.close()
        raise CommandError(f"store {args.store} cannot make a report: its backend does not implement "
                           "changewatch.store.health.HealthStore", 2)
    return store


def _write(store: Any, options: ReportOptions, out: Any, path: str) -> tuple[int, int]:
    with out:
        result = write_report(store, options, out)
        out.flush()
        os.fsync(out.fileno())
    os.replace(out.name, path)
    return result


def _discard(out: Any) -> None:
    out.close()
    try:
        os.unlink(out.name)
    except OSError:
        pass


def add_parser(sub: Any) -> None:
    parser = add_command(sub, NAME, __doc__, "write one self-contained HTML report of a period's changes")
    add_store_option(parser)
    parser.add_argument("--since", metavar="WHEN", default="7d",
                        help="changes fetched at WHEN or later: an ISO 8601 time, a date, or 30m, 12h, 7d, 2w ago "
                             "(default 7d)")
    parser.add_argument("-o", "--output", metavar="FILE", required=True, help="the HTML file to write")
    add_kind_option(parser)
    add_spider_option(parser)
    parser.add_argument("--limit", type=_limit, default=DEFAULT_LIMIT, metavar="N",
                        help=f"show the newest N changes in full (default {DEFAULT_LIMIT}); the counts cover all")
    add_upgrade_option(parser)
    parser.set_defaults(func=run)
