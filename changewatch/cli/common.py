"""What the commands share: the one-line failure (``changewatch COMMAND: …`` on stderr, an exit
status), opening a store that must already exist, the options several commands take, ``--since``
and ``--kind`` values, and a change as a JSON line."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from ..core import Kind
from ..store import DEFAULT_STORE_URI, LogEntry, OlderSchema, StoreError, store_from_uri
from ..store.options import redact
from ..store.semantics import format_time

__all__ = ["LOGGED_KINDS", "CommandError", "UsageError", "add_change_id", "add_kind_option", "add_spider_option",
           "add_store_option", "add_upgrade_option", "entry_json", "error", "json_line", "open_store", "parse_kinds",
           "parse_since", "valid_change_id"]

#: the kinds the change log holds (the others are never logged)
LOGGED_KINDS = tuple(kind.value for kind in Kind if kind.reported)
_DURATION = re.compile(r"(\d{1,9})\s*([smhdw])", re.IGNORECASE)
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


class CommandError(Exception):
    """A failure the command ends with: its message is the whole line ``main`` prints after
    ``changewatch COMMAND:``, *code* the exit status."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


class UsageError(CommandError):
    """A bad argument value (exit 2)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, 2)


def error(command: str, message: str) -> None:
    """One line on stderr, for a failure met while a store is open. Raised instead, a CommandError
    would keep the failing frames, and the store's suspended reads in them, alive until after the
    store is closed: their cleanup would then fail with a traceback on stderr."""
    print(f"changewatch {command}: {message}", file=sys.stderr)


def json_line(value: dict[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False)


def parse_since(text: str, now: datetime, option: str = "--since") -> str:
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
        raise UsageError(f"{option} {text!r} is not a time: expected an ISO 8601 time (2026-11-30T12:00:00Z), a date "
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


def valid_change_id(args: argparse.Namespace) -> int:
    if args.change_id < 1:
        raise UsageError(f"CHANGE_ID must be a change's id (1 or more), not {args.change_id}")
    return int(args.change_id)


def open_store(uri: str, *, upgrade: bool, protocol: type[Any], purpose: str, role: str = "") -> Any:
    """The store *uri* names, opened only if it exists (nothing is created); the command fails
    (exit 2) when it cannot be, or when its backend lacks *protocol* (needed for *purpose*).
    *role* names the store in the message when a command opens two."""
    prefix = f"{role}: " if role else ""
    try:
        store = store_from_uri(uri)
        if not isinstance(store, protocol):
            raise StoreError(f"store {redact(uri)} ({type(store).__module__}.{type(store).__qualname__}) cannot "
                             f"{purpose}: its backend does not implement changewatch.store.{protocol.__name__}")
        store.open_existing(upgrade=upgrade)
    except OlderSchema as exc:
        raise CommandError(f"{prefix}{exc}, or add --upgrade to upgrade it now", 2) from exc
    except StoreError as exc:
        raise CommandError(f"{prefix}{exc}", 2) from exc
    return store


def entry_json(entry: LogEntry) -> dict[str, Any]:
    """A change as ``changes`` prints it; ``record`` is the change record as a feed exported it."""
    return {"id": entry.id, "spider": entry.spider, "key": entry.key, "kind": entry.kind,
            "observed_at": entry.observed_at, "delivered": entry.delivered_at is not None,
            "delivered_at": entry.delivered_at, "record": {**entry.record, "change_id": entry.id}}


def add_store_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", metavar="URI", default=DEFAULT_STORE_URI,
                        help=f"the store to read (default {DEFAULT_STORE_URI}); never created")


def add_upgrade_option(parser: argparse.ArgumentParser, what: str = "a store") -> None:
    parser.add_argument("--upgrade", action="store_true",
                        help=f"upgrade {what} of an older schema in place first (as a crawl would)")


def add_kind_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kind", action="append", default=[], metavar="KIND",
                        help=f"only these kinds ({', '.join(LOGGED_KINDS)}); repeat or separate with commas")


def add_spider_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--spider", action="append", default=[], metavar="NAME",
                        help="only this spider's (repeatable)")


def add_change_id(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("change_id", type=int, metavar="CHANGE_ID", help="the change's id (its record's change_id)")
