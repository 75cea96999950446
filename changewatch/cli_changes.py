"""``changewatch changes``: the change log as JSON lines, filtered in the store, oldest first; with
``--mark-delivered``, a pull for consumers that read the log instead of a crawl's feed.

What is marked delivered is only what was printed in full: every line is written and flushed (and
synced, for a file) first, and a failed write (a closed pipe, a full disk) marks nothing."""

from __future__ import annotations

import argparse
import json
import os
import re
import stat
import sys
from array import array
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from itertools import islice
from typing import IO, Any, Protocol

from .core.comparisons import Kind
from .core.observation import utc_now
from .store import (
    DEFAULT_STORE_URI,
    ChangeLogStore,
    ChangeQuery,
    LogEntry,
    OlderSchema,
    Store,
    StoreError,
    store_from_uri,
)
from .store.options import redact
from .store.semantics import format_time

__all__ = ["LOGGED_KINDS", "UsageError", "add_parser", "entry_json", "open_existing_store", "parse_kinds",
           "parse_since"]

#: the kinds the change log holds (the others are never logged)
LOGGED_KINDS = tuple(kind.value for kind in Kind if kind.reported)
_DURATION = re.compile(r"(\d{1,9})\s*([smhdw])", re.IGNORECASE)
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_BATCH = 1000  # changes read, written and forgotten at a time
_MARK_CHUNK = 10_000  # ids per mark_delivered call


class _LogStore(Store, ChangeLogStore, Protocol):
    """A store whose change log can be listed."""


class UsageError(Exception):
    """A bad argument value: the message is the whole line the command prints (exit 2)."""


def parse_since(text: str, now: datetime) -> str:
    """*text* as the time the store compares fetch times with: an ISO 8601 time (UTC without a
    zone), a date (its midnight, UTC), or a duration back from *now* (``30m``, ``12h``, ``7d``, ``2w``).

    >>> now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    >>> [parse_since(t, now) for t in ("7d", "90 m", "2026-11-01")]
    ['2026-11-23T12:00:00Z', '2026-11-30T10:30:00Z', '2026-11-01T00:00:00Z']
    >>> [parse_since(t, now) for t in ("2026-11-30T13:00:00+01:00", "2026-11-30T11:00:00.2")]
    ['2026-11-30T12:00:00Z', '2026-11-30T11:00:01Z']
    """
    value = text.strip()
    try:
        if match := _DURATION.fullmatch(value):
            return format_time(now - timedelta(**{_UNITS[match[2].lower()]: int(match[1])}))
        moment = datetime.fromisoformat(value)
    except (ValueError, OverflowError):
        raise UsageError(f"--since {text!r} is not a time: expected an ISO 8601 time (2026-11-30T12:00:00Z), a date "
                         "(2026-11-30) or a duration back from now (30s, 30m, 12h, 7d, 2w)") from None
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
    if moment.microsecond:  # the store keeps whole seconds: 11:00:00.2 is after 11:00:00
        moment = moment.replace(microsecond=0) + timedelta(seconds=1)
    return format_time(moment)


def parse_kinds(values: Iterable[str]) -> tuple[str, ...]:
    """The kinds named by ``--kind`` options (each may list several, comma-separated)."""
    kinds: list[str] = []
    for value in values:
        for name in (part.strip().lower() for part in value.split(",")):
            if not name:
                continue
            if name not in LOGGED_KINDS:
                never = f" (a {name!r} observation is never logged)" if name in {k.value for k in Kind} else ""
                raise UsageError(f"--kind {name!r} is not a kind of change{never}: expected one of "
                                 f"{', '.join(LOGGED_KINDS)}")
            if name not in kinds:
                kinds.append(name)
    return tuple(kinds)


def open_existing_store(uri: str, *, upgrade: bool, protocol: type[Any], purpose: str) -> Any:
    """The store *uri* names, opened only if it exists (nothing is created): StoreError with a
    one-line message when it cannot be, or when its backend lacks *protocol* (needed for *purpose*)."""
    store = store_from_uri(uri)
    if not isinstance(store, protocol):
        raise StoreError(f"store {redact(uri)} ({type(store).__module__}.{type(store).__qualname__}) cannot "
                         f"{purpose}: its backend does not implement changewatch.store.{protocol.__name__}")
    try:
        store.open_existing(upgrade=upgrade)
    except OlderSchema as exc:
        raise StoreError(f"{exc}, or add --upgrade to upgrade it now") from exc
    return store


def entry_json(entry: LogEntry) -> dict[str, Any]:
    """One output line's object; ``record`` is the change record as a feed exported it."""
    return {"id": entry.id, "spider": entry.spider, "key": entry.key, "kind": entry.kind,
            "observed_at": entry.observed_at, "delivered": entry.delivered_at is not None,
            "delivered_at": entry.delivered_at, "record": {**entry.record, "change_id": entry.id}}


def _batches(entries: Iterator[LogEntry]) -> Iterator[list[LogEntry]]:
    while batch := list(islice(entries, _BATCH)):
        yield batch


def _write_all(out: IO[bytes], entries: Iterator[LogEntry], mark: bool) -> dict[str, array[int]]:
    """Write every entry, flush and sync; the ids of the undelivered ones written, per spider
    (8 bytes each: a million is 8 MB, the records themselves are never kept)."""
    written: dict[str, array[int]] = {}
    for batch in _batches(entries):
        _write(out, b"".join(json.dumps(entry_json(e), ensure_ascii=False).encode() + b"\n" for e in batch))
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


def _silence_stdout() -> None:
    """After a failed write to stdout: point it at /dev/null, so that Python's own flush at exit
    does not fail again with a traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _error(message: str) -> None:
    print(f"changewatch changes: {message}", file=sys.stderr)


def list_changes(args: argparse.Namespace) -> int:
    """Exit 0: listed (nothing matching too); 1: the log could not be read or written, or marked;
    2: a bad argument or a store that cannot be opened."""
    try:
        since = parse_since(args.since, datetime.now(UTC)) if args.since is not None else None
        query = ChangeQuery(spiders=tuple(dict.fromkeys(args.spider)), keys=tuple(dict.fromkeys(args.key)),
                            kinds=parse_kinds(args.kind), since=since, undelivered=args.undelivered)
        store: _LogStore = open_existing_store(args.store, upgrade=args.upgrade, protocol=ChangeLogStore,
                                    purpose="list its change log")
    except (UsageError, StoreError) as exc:
        _error(str(exc))
        return 2
    try:
        return _print_and_mark(store, query, args.mark_delivered)
    finally:
        store.close()


def _print_and_mark(store: _LogStore, query: ChangeQuery, mark: bool) -> int:
    out: IO[bytes] = sys.stdout.buffer
    try:
        written = _write_all(out, store.query_changes(query, batch_size=_BATCH), mark)
    except StoreError as exc:
        _error(f"{exc}; nothing was marked delivered")
        return 1
    except OSError as exc:  # a closed pipe (BrokenPipeError), a full disk
        _silence_stdout()
        _error(f"cannot write the output ({exc.strerror or exc}): nothing was marked delivered")
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
        _error(f"printed {total} undelivered change(s) but marked only {marked} delivered: {exc}; the others "
               "stay undelivered and are listed again")
        return 1
    return 0


def add_parser(sub: Any) -> None:
    changes = sub.add_parser("changes", help="list the change log as JSON lines, oldest first",
                             description=__doc__.split("\n\n")[0])
    changes.add_argument("--store", metavar="URI", default=DEFAULT_STORE_URI,
                         help=f"the store to read (default {DEFAULT_STORE_URI}); never created")
    changes.add_argument("--since", metavar="WHEN",
                         help="only changes fetched at WHEN or later: an ISO 8601 time, a date, "
                              "or 30m, 12h, 7d, 2w ago")
    changes.add_argument("--kind", action="append", default=[], metavar="KIND",
                         help=f"only these kinds ({', '.join(LOGGED_KINDS)}); repeat or separate with commas")
    changes.add_argument("--spider", action="append", default=[], metavar="NAME",
                         help="only this spider's (repeatable)")
    changes.add_argument("--key", action="append", default=[], metavar="KEY", help="only this key's (repeatable)")
    changes.add_argument("--undelivered", action="store_true", help="only changes not yet delivered")
    changes.add_argument("--mark-delivered", action="store_true",
                         help="after printing every line, mark the undelivered ones printed as delivered")
    changes.add_argument("--upgrade", action="store_true",
                         help="upgrade a store of an older schema in place first (as a crawl would)")
    changes.set_defaults(func=list_changes)
