"""``changewatch changes``: the change log as JSON lines, filtered in the store, oldest first; with
``--mark-delivered``, a pull for consumers that read the log instead of a crawl's feed.

What is marked delivered is only what was printed in full: every line is written and flushed (and
synced, for a file) first, and a failed write (a closed pipe, a full disk) marks nothing."""

from __future__ import annotations

import argparse
import os
import stat
import sys
from array import array
from collections.abc import Iterator
from datetime import UTC, datetime
from itertools import islice
from typing import IO, Any, Protocol

from ..core.observation import utc_now
from ..store import ChangeLogStore, ChangeQuery, LogEntry, Store, StoreError
from .common import (
    add_command,
    add_kind_option,
    add_site_watch_option,
    add_spider_option,
    add_store_option,
    add_upgrade_option,
    entry_json,
    error,
    json_line,
    open_store,
    parse_kinds,
    parse_since,
    silence_stdout,
)

__all__ = ["add_parser"]

NAME = "changes"

_BATCH = 1000  # changes read, written and forgotten at a time
_MARK_CHUNK = 10_000  # ids per mark_delivered call


class _LogStore(Store, ChangeLogStore, Protocol):
    """A store whose change log can be listed."""


def _batches(entries: Iterator[LogEntry]) -> Iterator[list[LogEntry]]:
    while batch := list(islice(entries, _BATCH)):
        yield batch


def _write_all(out: IO[bytes], entries: Iterator[LogEntry], mark: bool) -> dict[str, array[int]]:
    """Write every entry, flush and sync; the ids of the undelivered ones written, per spider
    (8 bytes each: a million is 8 MB, the records themselves are never kept)."""
    written: dict[str, array[int]] = {}
    for batch in _batches(entries):
        _write(out, b"".join(json_line(entry_json(e)).encode() + b"\n" for e in batch))
        if mark:
            for e in batch:
                if e.delivered_at is None:
                    written.setdefault(e.spider, array("q")).append(e.id)
    out.flush()
    _sync(out)
    return written


def _write(out: IO[bytes], data: bytes) -> None:
    """Write all of *data*. A buffered write that meets a closed pipe part-way returns how much it
    wrote and raises nothing: a short count is written again, so that the failure is raised."""
    view = memoryview(data)
    while view:
        written = out.write(view)
        if not written:  # None: a non-blocking stdout that is full; 0: nothing taken
            raise OSError(f"stdout took {written!r} bytes of {len(view)}")
        view = view[written:]


def _sync(out: IO[bytes]) -> None:
    """Sync a file to disk before its changes count as delivered (a pipe has nothing to sync)."""
    try:
        fileno = out.fileno()
    except (OSError, ValueError):
        return  # not a real file (tests capture stdout)
    if stat.S_ISREG(os.fstat(fileno).st_mode):
        os.fsync(fileno)


def run(args: argparse.Namespace) -> int:
    """Exit 0: listed (nothing matching too); 1: the log could not be read or written, or marked;
    2: a bad argument or a store that cannot be opened."""
    since = parse_since(args.since, datetime.now(UTC)) if args.since is not None else None
    query = ChangeQuery(spiders=tuple(dict.fromkeys(args.spider)), keys=tuple(dict.fromkeys(args.key)),
                        site_watches=tuple(dict.fromkeys(args.site_watch)),
                        kinds=parse_kinds(args.kind), since=since, undelivered=args.undelivered)
    store: _LogStore = open_store(args.store, upgrade=args.upgrade, protocol=ChangeLogStore,
                                  purpose="list its change log")
    try:
        return _print_and_mark(store, query, args.mark_delivered)
    finally:
        store.close()


def _print_and_mark(store: _LogStore, query: ChangeQuery, mark: bool) -> int:
    out: IO[bytes] = sys.stdout.buffer
    try:
        written = _write_all(out, store.query_changes(query, batch_size=_BATCH), mark)
    except StoreError as exc:
        error(NAME, f"{exc}; nothing was marked delivered")
        return 1
    except OSError as exc:  # a closed pipe (BrokenPipeError), a full disk
        silence_stdout()
        error(NAME, f"cannot write the output ({exc.strerror or exc}): nothing was marked delivered")
        return 1
    at, marked = utc_now(), 0
    try:
        for spider, ids in written.items():
            for start in range(0, len(ids), _MARK_CHUNK):
                chunk = ids[start:start + _MARK_CHUNK].tolist()
                store.mark_delivered(spider, chunk, at)
                marked += len(chunk)
    except StoreError as exc:
        total = sum(len(ids) for ids in written.values())
        error(NAME, f"printed {total} undelivered change(s) but marked only {marked} delivered: {exc}; the "
                    "others stay undelivered and are listed again")
        return 1
    return 0


def add_parser(sub: Any) -> None:
    changes = add_command(sub, NAME, __doc__, "list the change log as JSON lines, oldest first")
    add_store_option(changes)
    changes.add_argument("--since", metavar="WHEN",
                         help="only changes fetched at WHEN or later: an ISO 8601 time, a date, "
                              "or 30m, 12h, 7d, 2w ago")
    add_kind_option(changes)
    add_spider_option(changes)
    changes.add_argument("--key", action="append", default=[], metavar="KEY", help="only this key's (repeatable)")
    add_site_watch_option(changes, "changes")
    changes.add_argument("--undelivered", action="store_true", help="only changes not yet delivered")
    changes.add_argument("--mark-delivered", action="store_true",
                         help="after printing every line, mark the undelivered ones printed as delivered")
    add_upgrade_option(changes)
    changes.set_defaults(func=run)
